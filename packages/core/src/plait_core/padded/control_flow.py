"""Padded rules of control flow: ``cond``, ``while`` and ``scan``.

Their bodies are sub-programs: each is interpreted on padded data by the
interpreter that runs the rule (:meth:`~plait_core.padded.env.PaddedEnv.padded_jaxpr`),
with the logical sizes among its leading operands, so that they may be
traced or batched.  What the padding means for the loop is written here:

* ``cond`` selects a branch by its index.  An index with leading dimensions
  (one index per element of a pile) runs every branch and each element
  takes its own branch's results.
* ``while`` runs while its predicate holds.  A trip count that depends on a
  padded size (``fori_loop(0, x.shape[0], ...)``) is exact, since the
  predicate reads the logical size; a predicate with leading dimensions
  (one per element) loops until every element is done, and an element that
  is done keeps its carry.
* ``scan`` of a static length scans the padded body.  A ``scan`` over a
  padded length runs over the padded length with the step index as an extra
  carry, and the carry changes only on the steps below the logical
  length (per element when the size has leading dimensions): after them it
  is the logical result.  A reverse scan runs from the last padded index
  down, so the carry starts to change at the last logical entry.  The
  stacked outputs past the logical length are padding.  The steps past the
  length read zeros instead of the scanned inputs' padding, so a derivative
  through them stays finite as long as the body is finite at zero (as for
  ``where``).

A value in these rules may have leading dimensions before its logical ones
(the batch of a pile): a loop carry is put in the representation of the
body's results (:meth:`~plait_core.padded.env.PaddedEnv.carried`), and the
scanned axis of a scanned input or stacked output is found after them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import ops
from plait_core.abstract import ShapedArray, get_aval
from plait_core.dims import Dim, is_constant_dim
from plait_core.jaxpr import ClosedJaxpr, Jaxpr, eval_jaxpr
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitives import reductions as red
from plait_core.primitives.control_flow import (
    cond_p,
    convert_constvars,
    join_consts,
    scan_p,
    split_list,
    while_p,
)
from plait_core.primitives.elementwise import select_n_p
from plait_core.staging import trace_to_jaxpr

__all__ = ["select_leading", "while_until_all_done"]

_I32 = np.dtype(np.int32)


def _types(xs: Sequence[Any]) -> list[ShapedArray]:
    return [get_aval(x) for x in xs]


def select_leading(pred: Any, on_true: Any, on_false: Any) -> Any:
    """``on_true`` where ``pred`` (whose dimensions lead those of the operands) else ``on_false``."""
    nd = get_aval(pred).ndim
    if nd:
        pred = ops.broadcast_in_dim(pred, get_aval(on_true).shape, range(nd))
    return ops.select(pred, on_true, on_false)


def _static(env: PaddedEnv, d: Dim) -> Dim:
    """A size as a param of the padded program."""
    if env.is_padded(d):
        return env.padded_dim(d)
    return int(d) if is_constant_dim(d) else d


def _leading(data: Any, logical: ShapedArray) -> int:
    """How many leading dimensions ``data`` has before ``logical``'s."""
    return get_aval(data).ndim - logical.ndim


# ---------------------------------------------------------------------------
# cond


def _cond(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, branches: Any) -> list[Any]:
    index, operands = vals[0], list(vals[1:])
    like = _types(operands)
    closed = []
    for br in branches:
        body, lead = env.padded_jaxpr(br, like)
        j, k = body.jaxpr, len(lead)
        # The leading inputs become constants, which join_consts shares between the branches.
        closed.append(ClosedJaxpr(Jaxpr(j.invars[:k], j.invars[k:], j.outvars, j.eqns), lead))
    bodies, consts = join_consts(closed)
    if get_aval(index).ndim == 0:
        return list(cond_p.bind(index, *consts, *operands, branches=tuple(bodies)))
    # An index per element: every branch runs, and each element takes its own branch's results.
    results = [eval_jaxpr(b.jaxpr, b.consts, *consts, *operands) for b in bodies]
    if len(results) == 1:
        return results[0]
    dt = get_aval(index).dtype
    which = ops.clamp(np.asarray(0, dt), index, np.asarray(len(results) - 1, dt))
    out = []
    for cases in zip(*results):
        shape = get_aval(cases[0]).shape
        out.append(select_n_p.bind(ops.broadcast_in_dim(which, shape, range(get_aval(which).ndim)), *cases))
    return out


padded_rules.define(_cond, cond_p, nested=True)


# ---------------------------------------------------------------------------
# while


def while_until_all_done(
    cond: ClosedJaxpr, body: ClosedJaxpr, cconsts: Sequence[Any], bconsts: Sequence[Any], init: Sequence[Any]
) -> list[Any]:
    """A ``while`` whose predicate has leading dimensions (one per element):
    loop while any element is pending, and keep the carry of an element that
    is done.  ``cond`` and ``body`` take (consts, then carry); the carries
    have the predicate's dimensions in front."""
    nc, nb = len(cconsts), len(bconsts)

    def any_pending(*xs: Any) -> list[Any]:
        (pred,) = eval_jaxpr(cond.jaxpr, cond.consts, *xs)
        return [red.reduce_or_p.bind(pred, axes=tuple(range(get_aval(pred).ndim)))]

    def step(*xs: Any) -> list[Any]:
        cc, bc, carry = split_list(xs, nc, nb)
        (pred,) = eval_jaxpr(cond.jaxpr, cond.consts, *cc, *carry)
        new = eval_jaxpr(body.jaxpr, body.consts, *bc, *carry)
        return [select_leading(pred, n, old) for n, old in zip(new, carry)]

    cj, ch = convert_constvars(trace_to_jaxpr(any_pending, list(cond.in_avals)))
    bj, bh = convert_constvars(trace_to_jaxpr(step, [*cond.in_avals[:nc], *body.in_avals]))
    outs = while_p.bind(
        *ch, *cconsts, *bh, *cconsts, *bconsts, *init,
        cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=len(ch) + nc, body_nconsts=len(bh) + nc + nb,
    )  # fmt: skip
    return list(outs)


def _while(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int,
) -> list[Any]:  # fmt: skip
    cconsts, bconsts, init = split_list(vals, cond_nconsts, body_nconsts)
    init = [env.carried(x, a) for x, a in zip(init, avals[cond_nconsts + body_nconsts :])]
    carry_like = _types(init)
    cj, c_lead = env.padded_jaxpr(cond_jaxpr, [*_types(cconsts), *carry_like])
    bj, b_lead = env.padded_jaxpr(body_jaxpr, [*_types(bconsts), *carry_like])
    cconsts, bconsts = [*c_lead, *cconsts], [*b_lead, *bconsts]
    if cj.out_avals[0].ndim:
        return while_until_all_done(cj, bj, cconsts, bconsts, init)
    return list(while_p.bind(
        *cconsts, *bconsts, *init, cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=len(cconsts),
        body_nconsts=len(bconsts),
    ))  # fmt: skip


padded_rules.define(_while, while_p, nested=True)


# ---------------------------------------------------------------------------
# scan


def _to_front(x: Any, axis: int) -> Any:
    nd = get_aval(x).ndim
    return ops.transpose(x, (axis, *(a for a in range(nd) if a != axis)))


def _from_front(x: Any, axis: int) -> Any:
    nd = get_aval(x).ndim
    perm = list(range(1, nd))
    perm.insert(axis, 0)
    return ops.transpose(x, perm)


def _freeze_past(
    body: ClosedJaxpr, size: ShapedArray, num_consts: int, num_carry: int, reverse: bool
) -> tuple[ClosedJaxpr, list[Any]]:  # fmt: skip
    """``body`` with the logical length as a new first const and the step
    index as a new first carry (counting down when ``reverse``); the other
    carries change only while the index is below the length, and past it the
    body reads zeros for its scanned slices.  Returns the jaxpr and its
    hoisted constants."""
    consts, carry, xs = split_list(body.in_avals, num_consts, num_carry)
    index_aval = ShapedArray((), size.dtype)

    def step(length: Any, *args: Any) -> list[Any]:
        cs, (index, *old), slices = split_list(args, num_consts, num_carry + 1)
        live = ops.lt(ops.broadcast_to(index, size.shape), length)
        # Past the length the body reads zeros, not the padding (inside the step, where XLA fuses it).
        zeros = [ops.full(t.shape, 0, t.dtype, t.weak_type) for t in xs]
        slices = [select_leading(live, x, z) for x, z in zip(slices, zeros)]
        outs = eval_jaxpr(body.jaxpr, body.consts, *cs, *old, *slices)
        kept = []
        for new, was in zip(outs[:num_carry], old):
            a = get_aval(was)
            kept.append(select_leading(live, ops.convert(new, a.dtype, a.weak_type), was))
        return [ops.add(index, np.asarray(-1 if reverse else 1, size.dtype)), *kept, *outs[num_carry:]]

    return convert_constvars(trace_to_jaxpr(step, [size, *consts, index_aval, *carry, *xs]))


def _scan(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, jaxpr: ClosedJaxpr, num_consts: int,
    num_carry: int, length: Dim, reverse: bool, unroll: int, linear: Sequence[bool],
) -> list[Any]:  # fmt: skip
    consts, init, xs = split_list(vals, num_consts, num_carry)
    _, carry_avals, x_avals = split_list(avals, num_consts, num_carry)
    padded_length = env.is_padded(length)
    init = [env.carried(x, a) for x, a in zip(init, carry_avals)]
    # The scanned axis first (it follows the representation's leading dimensions, if any).
    xs = [_to_front(x, _leading(x, a)) for x, a in zip(xs, x_avals)]
    slices = [ShapedArray(t.shape[1:], t.dtype, t.weak_type) for t in _types(xs)]
    body, lead = env.padded_jaxpr(jaxpr, [*_types(consts), *_types(init), *slices])
    consts = [*lead, *consts]
    c_linear = (False,) * len(lead) + tuple(linear[:num_consts])
    carry_linear, x_linear = tuple(linear[num_consts : num_consts + num_carry]), tuple(linear[num_consts + num_carry :])
    counter = 0
    if padded_length:
        size = env.size(length, _I32)
        body, hoisted = _freeze_past(body, get_aval(size), len(consts), num_carry, reverse)
        consts = [*hoisted, size, *consts]
        c_linear = (False,) * (len(hoisted) + 1) + c_linear
        counter = 1
        init = [np.asarray(env.padded_dim(length) - 1 if reverse else 0, _I32), *init]
        carry_linear = (False, *carry_linear)
    outs = scan_p.bind(
        *consts, *init, *xs, jaxpr=body, num_consts=len(consts), num_carry=num_carry + counter,
        length=_static(env, length), reverse=reverse, unroll=unroll, linear=c_linear + carry_linear + x_linear,
    )  # fmt: skip
    steps = jaxpr.out_avals[num_carry:]
    ys = [_from_front(y, _leading(y, a) - 1) for y, a in zip(outs[num_carry + counter :], steps)]
    return [*outs[counter : num_carry + counter], *ys]


padded_rules.define(_scan, scan_p, nested=True)
