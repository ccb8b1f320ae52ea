"""Batching rules of ``cond``, ``while`` and ``scan``.

Their bodies are batched with :func:`~plait_batching.batch_jaxpr.batch_jaxpr`
(batched values carry the batch in front).  A loop carry that becomes
batched in the body must be batched on entry too, so the batched carries are
found by iterating to a fixed point.

* ``cond`` with an unbatched index stays a ``cond`` of batched branches.
  With a batched index every element may take another branch: all branches
  run and each element selects its own result.
* ``while`` with an unbatched predicate stays a ``while``.  With a batched
  one the loop runs until every element's predicate is false, and elements
  that are done keep their carry (a select in the body: core's
  :func:`~plait_core.padded.control_flow.while_until_all_done`, which padded
  loops with a predicate per element share).
* ``scan`` scans the batched body; scanned inputs and outputs carry the
  batch as their *second* dimension (the first is the scan's).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_batching.batch_jaxpr import batch_jaxpr
from plait_batching.moves import BDim, front_if_batched, moveaxis, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core import ClosedJaxpr, eval_jaxpr, get_aval
from plait_core.padded.control_flow import while_until_all_done
from plait_core.primitives.control_flow import (
    cond_p,
    convert_constvars,
    join_consts,
    scan_p,
    split_list,
    while_p,
)
from plait_core.primitives.elementwise import clamp_p, select_n_p
from plait_core.primitives.structural import broadcast_in_dim_p


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b)]


def _carry_fixed_point(
    body: ClosedJaxpr, axis: AxisData, before: list[bool], carry: list[bool], after: list[bool], n_extra_out: int
) -> list[bool]:
    """The carries that must be batched: those batched on entry, and those
    the body makes batched (iterated until nothing changes)."""
    for _ in range(len(carry) + 1):
        _, out = batch_jaxpr(body, axis, before + carry + after, carry + [False] * n_extra_out)
        new = _or(carry, out[: len(carry)])
        if new == carry:
            break
        carry = new
    return carry


# ---------------------------------------------------------------------------
# cond


def _cond_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, branches: tuple[ClosedJaxpr, ...]
) -> tuple[list[Any], list[BDim]]:
    index, *ops = args
    di, *dops = dims
    in_b = [d is not None for d in dops]
    ops = [front_if_batched(x, d) for x, d in zip(ops, dops)]
    nout = len(branches[0].out_avals)
    if di is None:
        out_b = [False] * nout
        for br in branches:
            out_b = _or(out_b, batch_jaxpr(br, axis, in_b, False)[1])
        new, consts = join_consts([batch_jaxpr(br, axis, in_b, out_b)[0] for br in branches])
        outs = cond_p.bind(index, *consts, *ops, branches=tuple(new))
        return list(outs), [0 if b else None for b in out_b]
    # A batched index: run every branch, then each element selects its branch's results.
    results = []
    for br in branches:
        batched, _ = batch_jaxpr(br, axis, in_b, True)
        results.append(eval_jaxpr(batched.jaxpr, batched.consts, *ops))
    if len(branches) == 1:
        return list(results[0]), [0] * nout
    which = to_front(index, di, axis.size)
    which = clamp_p.bind(np.int32(0), which, np.int32(len(branches) - 1))
    outs = []
    for k in range(nout):
        cases = [r[k] for r in results]
        shape = get_aval(cases[0]).shape
        w = broadcast_in_dim_p.bind(which, shape=shape, broadcast_dimensions=(0,)) if len(shape) > 1 else which
        outs.append(select_n_p.bind(w, *cases))
    return outs, [0] * nout


batching_rules[cond_p] = _cond_rule


# ---------------------------------------------------------------------------
# while


def _while_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
    cond_nconsts: int, body_nconsts: int,
) -> tuple[list[Any], list[BDim]]:  # fmt: skip
    cconsts, bconsts, init = split_list(args, cond_nconsts, body_nconsts)
    dc, db, dinit = split_list(dims, cond_nconsts, body_nconsts)
    cc_b, bc_b = [d is not None for d in dc], [d is not None for d in db]
    carry_b = _carry_fixed_point(body_jaxpr, axis, bc_b, [d is not None for d in dinit], [], 0)
    pred_b = batch_jaxpr(cond_jaxpr, axis, cc_b + carry_b, False)[1][0]
    if pred_b:  # elements finish at different times: every carry is kept per element
        carry_b = [True] * len(carry_b)
    cond_b, _ = batch_jaxpr(cond_jaxpr, axis, cc_b + carry_b, False)
    body_b, _ = batch_jaxpr(body_jaxpr, axis, bc_b + carry_b, carry_b)
    cconsts = [front_if_batched(x, d) for x, d in zip(cconsts, dc)]
    bconsts = [front_if_batched(x, d) for x, d in zip(bconsts, db)]
    init = [to_front(x, d, axis.size) if b else x for x, d, b in zip(init, dinit, carry_b)]
    out_dims: list[BDim] = [0 if b else None for b in carry_b]
    if not pred_b:
        cj, ch = convert_constvars(cond_b)
        bj, bh = convert_constvars(body_b)
        outs = while_p.bind(
            *ch, *cconsts, *bh, *bconsts, *init,
            cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=len(ch) + len(cconsts), body_nconsts=len(bh) + len(bconsts),
        )  # fmt: skip
        return list(outs), out_dims
    return while_until_all_done(cond_b, body_b, cconsts, bconsts, init), out_dims


batching_rules[while_p] = _while_rule


# ---------------------------------------------------------------------------
# scan


def _scan_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, jaxpr: ClosedJaxpr, num_consts: int,
    num_carry: int, linear: tuple[bool, ...], **params: Any,
) -> tuple[list[Any], list[BDim]]:  # fmt: skip
    consts, init, xs = split_list(args, num_consts, num_carry)
    dc, dinit, dxs = split_list(dims, num_consts, num_carry)
    c_b, x_b = [d is not None for d in dc], [d is not None for d in dxs]
    ny = len(jaxpr.out_avals) - num_carry
    carry_b = _carry_fixed_point(jaxpr, axis, c_b, [d is not None for d in dinit], x_b, ny)
    body, out_b = batch_jaxpr(jaxpr, axis, c_b + carry_b + x_b, carry_b + [False] * ny)
    body, hoisted = convert_constvars(body)
    consts = [front_if_batched(x, d) for x, d in zip(consts, dc)]
    init = [to_front(x, d, axis.size) if b else x for x, d, b in zip(init, dinit, carry_b)]
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, dxs)]  # slices carry the batch in front
    outs = scan_p.bind(
        *hoisted, *consts, *init, *xs,
        jaxpr=body, num_consts=len(hoisted) + num_consts, num_carry=num_carry,
        linear=(False,) * len(hoisted) + linear, **params,
    )  # fmt: skip
    out_dims: list[BDim] = [0 if b else None for b in carry_b] + [1 if b else None for b in out_b[num_carry:]]
    return list(outs), out_dims


batching_rules[scan_p] = _scan_rule

