"""Primitives of the control_flow family: ``cond``, ``while`` and ``scan``.

They are *initial style*: their bodies are :class:`ClosedJaxpr` values held in
params, so every interpreter sees the whole program.  The lax wrappers
(:mod:`plait_core.lax.control_flow`) hand over const-free bodies whose
closed-over values travel as leading operands.

* ``cond(index, *args; branches)`` runs ``branches[clamp(index, 0, n - 1)]``
  on ``args``.  ``index`` is an int32 scalar; every branch has the same input
  and output types.
* ``while(*cond_consts, *body_consts, *init; cond_jaxpr, body_jaxpr,
  cond_nconsts, body_nconsts)`` iterates ``carry = body(*body_consts, *carry)``
  while ``cond(*cond_consts, *carry)`` is true.
* ``scan(*consts, *init, *xs; jaxpr, num_consts, num_carry, length, reverse,
  unroll, linear)`` runs ``carry, y = jaxpr(*consts, *carry, *x[i])`` for
  ``i`` in ``range(length)`` (backwards when ``reverse``) and returns the last
  carry and the ``y`` stacked along a new leading axis.

This module also registers their partial-evaluation rules (so a ``cond`` with
a known index computes its known half now, and a ``scan`` runs its known part
now and hands stacked residuals to the unknown part) and their dead-code
elimination rules (unused outputs are pruned inside the bodies).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, to_numpy
from plait_core.dce import dce_closed_jaxpr, dce_rules
from plait_core.dims import Dim, SymbolicDim, definitely_equal, definitely_equal_shapes, dim_as_int
from plait_core.jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from plait_core.partial_eval import PartialEvalTrace, partial_eval_jaxpr, partial_eval_rules
from plait_core.primitive import Primitive
from plait_core.primitives.structural import broadcast_in_dim_p
from plait_core.staging import trace_to_jaxpr
from plait_core.trace import set_current_trace

__all__ = [
    "cond_p",
    "convert_constvars",
    "join_consts",
    "scan_p",
    "split_list",
    "while_p",
]

cond_p = Primitive("cond", family="control_flow", multiple_results=True)
while_p = Primitive("while", family="control_flow", multiple_results=True)
scan_p = Primitive("scan", family="control_flow", multiple_results=True)


# ---------------------------------------------------------------------------
# Shared helpers


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    """Equal dtype and (provably) equal shape; weak types are not compared."""
    return a.dtype == b.dtype and definitely_equal_shapes(a.shape, b.shape)


def _type_str(a: ShapedArray) -> str:
    return a.str_short() + (" (weakly typed)" if a.weak_type else "")


def _mismatch(a: ShapedArray, b: ShapedArray) -> str:
    """What differs between two types, as a clause."""
    parts = []
    if a.dtype != b.dtype:
        parts.append("the dtypes differ")
    if not definitely_equal_shapes(a.shape, b.shape):
        parts.append("the shapes differ")
    return " and ".join(parts)


def split_list(xs: Sequence[Any], *sizes: int) -> list[list[Any]]:
    """``xs`` cut into consecutive pieces of the given sizes, then the rest
    (the operand groups of ``while`` and ``scan``: consts, carry, xs)."""
    out: list[list[Any]] = []
    start = 0
    for n in sizes:
        out.append(list(xs[start : start + n]))
        start += n
    out.append(list(xs[start:]))
    return out


def _check_closed_jaxpr(prim: str, name: str, value: Any) -> ClosedJaxpr:
    if not isinstance(value, ClosedJaxpr):
        raise TypeError(f"{prim}: the param {name} must be a ClosedJaxpr, got {type(value).__name__}")
    return value


def _check_count(prim: str, name: str, value: Any, limit: int | None = None) -> int:
    if type(value) is not int or value < 0:
        raise TypeError(f"{prim}: the param {name} must be a non-negative int, got {value!r}")
    if limit is not None and value > limit:
        raise ValueError(f"{prim}: {name}={value} but the primitive has only {limit} operands")
    return value


def _check_inputs(prim: str, what: str, operands: Sequence[ShapedArray], expected: Sequence[ShapedArray]) -> None:
    """Operands must match the input types of a body (weak types aside)."""
    if len(operands) != len(expected):
        raise TypeError(f"{prim}: {what} takes {len(expected)} inputs but {len(operands)} operands were given")
    for k, (a, e) in enumerate(zip(operands, expected)):
        if not _same_type(a, e):
            raise TypeError(
                f"{prim}: operand {k} has type {a.str_short()} but the input type of {what} there is "
                f"{e.str_short()} ({_mismatch(a, e)})"
            )


def check_carry_types(
    prim: str,
    names: Sequence[str],
    carry_in: Sequence[ShapedArray],
    carry_out: Sequence[ShapedArray],
    *,
    weak_may_become_strong: bool = False,
) -> None:
    """The body of a loop must return its carry unchanged in type.

    ``names`` names each carry element in messages.  A weakly typed carry
    may not come back strongly typed (its type would change between
    iterations) unless ``weak_may_become_strong`` (the lax wrappers promote
    such a carry and trace again); a strongly typed carry may come back weak."""
    if len(carry_in) != len(carry_out):
        raise TypeError(f"{prim}: the loop carries {len(carry_in)} values but its body returns {len(carry_out)}")
    for name, a, b in zip(names, carry_in, carry_out):
        if not _same_type(a, b):
            hint = ""
            if a.weak_type and a.dtype != b.dtype:
                hint = (
                    f". The initial value of {name} is weakly typed (a Python scalar, so {a.dtype.name}); "
                    f"give it the dtype the body returns, e.g. numpy.{b.dtype.name}(...)"
                )
            raise TypeError(
                f"{prim}: the carry {name} has type {_type_str(a)} on entry but the body returns "
                f"{_type_str(b)}, so {_mismatch(a, b)}{hint}"
            )
        if a.weak_type and not b.weak_type and not weak_may_become_strong:
            raise TypeError(
                f"{prim}: the carry {name} is weakly typed ({a.str_short()}, from a Python scalar) but the "
                f"body returns a strongly typed {b.str_short()}, so its type would change between "
                f"iterations; fix the initial value's dtype, e.g. numpy.{b.dtype.name}(...) instead of a "
                "Python scalar"
            )


def convert_constvars(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Turn a closed jaxpr's constants into leading inputs.

    Returns the const-free jaxpr and the constant values, which the caller
    passes as operands (so every interpreter sees them)."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    return ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns), []), list(closed.consts)


def join_consts(closeds: Sequence[ClosedJaxpr]) -> tuple[list[ClosedJaxpr], list[Any]]:
    """Give several closed jaxprs the same leading const inputs.

    Each jaxpr's constants are collected (once per object, by identity); each
    returned jaxpr takes all of them as leading inputs, ignoring the ones it
    does not read.  Used for the branches of a ``cond``."""
    consts: list[Any] = []
    avals: list[ShapedArray] = []
    slot_of: dict[int, int] = {}
    for c in closeds:
        for v, x in zip(c.jaxpr.constvars, c.consts):
            if id(x) not in slot_of:
                slot_of[id(x)] = len(consts)
                consts.append(x)
                avals.append(v.aval)
    out = []
    for c in closeds:
        mine = {slot_of[id(x)]: v for v, x in zip(c.jaxpr.constvars, c.consts)}
        lead = [mine[k] if k in mine else Var(avals[k]) for k in range(len(consts))]
        j = c.jaxpr
        out.append(ClosedJaxpr(Jaxpr([], lead + list(j.invars), j.outvars, j.eqns), []))
    return out, consts


def _outputs_as(outs: Sequence[Any], avals: Sequence[ShapedArray]) -> list[np.ndarray]:
    """Body results as NumPy arrays of the promised dtypes (for the impls)."""
    return [to_numpy(o, a.dtype) for o, a in zip(outs, avals)]


# ---------------------------------------------------------------------------
# cond


def _cond_abstract_eval(index: ShapedArray, *ops: ShapedArray, branches: Any) -> list[ShapedArray]:
    if not isinstance(branches, tuple) or not branches:
        raise TypeError(f"cond: the param branches must be a non-empty tuple of ClosedJaxpr, got {branches!r}")
    brs = [_check_closed_jaxpr("cond", f"branches[{i}]", b) for i, b in enumerate(branches)]
    if index.shape != () or index.dtype != dtypes.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got {index.str_short()}")
    first = brs[0]
    for i, br in enumerate(brs[1:], 1):
        for what, mine, ref in (("inputs", br.in_avals, first.in_avals), ("outputs", br.out_avals, first.out_avals)):
            if len(mine) != len(ref):
                raise TypeError(f"cond: branch {i} has {len(mine)} {what} but branch 0 has {len(ref)}")
            for k, (a, b) in enumerate(zip(mine, ref)):
                if not _same_type(a, b):
                    raise TypeError(
                        f"cond: all branches must have the same types, but {what[:-1]} {k} of branch {i} "
                        f"has type {a.str_short()} while branch 0 has {b.str_short()}"
                    )
    _check_inputs("cond", "the branches", ops, first.in_avals)
    # As JAX 0.10.2: a result is weakly typed when branch 0's is (lax.cond's false branch), whatever the
    # other branches give (equinox's error_if returns its operand from branch 0 and a callback's from 1).
    return [ShapedArray(a.shape, a.dtype, a.weak_type) for a in first.out_avals]


def _cond_impl(index: np.ndarray, *ops: np.ndarray, branches: tuple[ClosedJaxpr, ...]) -> list[np.ndarray]:
    i = int(np.clip(int(np.asarray(index)), 0, len(branches) - 1))
    br = branches[i]
    return _outputs_as(eval_jaxpr(br.jaxpr, br.consts, *ops), br.out_avals)


cond_p.def_abstract_eval(_cond_abstract_eval)
cond_p.def_impl(_cond_impl)


# ---------------------------------------------------------------------------
# while


def _while_abstract_eval(
    *avals: ShapedArray, cond_jaxpr: Any, body_jaxpr: Any, cond_nconsts: Any, body_nconsts: Any
) -> list[ShapedArray]:
    cj = _check_closed_jaxpr("while", "cond_jaxpr", cond_jaxpr)
    bj = _check_closed_jaxpr("while", "body_jaxpr", body_jaxpr)
    nc = _check_count("while", "cond_nconsts", cond_nconsts, len(avals))
    nb = _check_count("while", "body_nconsts", body_nconsts, len(avals) - nc)
    cconsts, bconsts, init = split_list(avals, nc, nb)
    _check_inputs("while", "cond_jaxpr", cconsts + init, cj.in_avals)
    _check_inputs("while", "body_jaxpr", bconsts + init, bj.in_avals)
    outs = cj.out_avals
    if len(outs) != 1 or outs[0].shape != () or outs[0].dtype != dtypes.bool_:
        got = ", ".join(a.str_short() for a in outs) or "nothing"
        raise TypeError(f"while: cond_jaxpr must return one boolean scalar, got {got}")
    carry = bj.in_avals[nb:]
    check_carry_types("while", [f"element {k}" for k in range(len(carry))], carry, bj.out_avals)
    return list(carry)


def _while_impl(
    *args: np.ndarray, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr, cond_nconsts: int, body_nconsts: int
) -> list[np.ndarray]:
    cconsts, bconsts, carry = split_list(args, cond_nconsts, body_nconsts)
    carry_avals = body_jaxpr.in_avals[body_nconsts:]
    while True:
        (pred,) = eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *cconsts, *carry)
        if not bool(to_numpy(pred)):
            return _outputs_as(carry, carry_avals)
        carry = eval_jaxpr(body_jaxpr.jaxpr, body_jaxpr.consts, *bconsts, *carry)


while_p.def_abstract_eval(_while_abstract_eval)
while_p.def_impl(_while_impl)


# ---------------------------------------------------------------------------
# scan


def _scan_abstract_eval(
    *avals: ShapedArray,
    jaxpr: Any,
    num_consts: Any,
    num_carry: Any,
    length: Any,
    reverse: Any,
    unroll: Any,
    linear: Any,
) -> list[ShapedArray]:
    j = _check_closed_jaxpr("scan", "jaxpr", jaxpr)
    nc = _check_count("scan", "num_consts", num_consts, len(avals))
    ncarry = _check_count("scan", "num_carry", num_carry, len(avals) - nc)
    if not (type(length) is int and length >= 0) and not isinstance(length, SymbolicDim):
        raise TypeError(f"scan: the param length must be a non-negative int or a symbolic dimension, got {length!r}")
    if type(reverse) is not bool:
        raise TypeError(f"scan: the param reverse must be a bool, got {reverse!r}")
    if type(unroll) is not int or unroll < 1:
        raise TypeError(f"scan: the param unroll must be a positive int, got {unroll!r}")
    if not isinstance(linear, tuple) or len(linear) != len(avals) or not all(type(b) is bool for b in linear):
        raise TypeError(f"scan: the param linear must be a tuple of {len(avals)} bools (one per operand), got {linear!r}")
    consts, init, xs = split_list(avals, nc, ncarry)
    slices = []
    for k, x in enumerate(xs):
        if x.ndim == 0 or not definitely_equal(x.shape[0], length):
            raise ValueError(
                f"scan: scanned operand {k} has type {x.str_short()}, but every scanned operand needs "
                f"a leading axis of the scan length {length}"
            )
        slices.append(x.update(shape=x.shape[1:]))
    _check_inputs("scan", "jaxpr", consts + init + slices, j.in_avals)
    carry = j.in_avals[nc : nc + ncarry]
    outs = j.out_avals
    if len(outs) < ncarry:
        raise TypeError(f"scan: the body returns {len(outs)} values, fewer than its {ncarry} carries")
    check_carry_types("scan", [f"element {k}" for k in range(ncarry)], carry, outs[:ncarry])
    ys = [ShapedArray((length, *y.shape), y.dtype, y.weak_type) for y in outs[ncarry:]]
    return list(carry) + ys


def _scan_impl(
    *args: np.ndarray,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    length: Dim,
    reverse: bool,
    unroll: int,
    linear: tuple[bool, ...],
) -> list[np.ndarray]:
    n = dim_as_int(length, "the length of an eagerly evaluated scan")
    consts, carry, xs = split_list(args, num_consts, num_carry)
    out_avals = jaxpr.out_avals
    carry_avals = jaxpr.in_avals[num_consts : num_consts + num_carry]
    y_avals = out_avals[num_carry:]
    ys: list[list[np.ndarray]] = [[] for _ in y_avals]
    for i in range(n - 1, -1, -1) if reverse else range(n):
        outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *consts, *carry, *[np.asarray(x[i]) for x in xs])
        carry = outs[:num_carry]
        for acc, y, a in zip(ys, outs[num_carry:], y_avals):
            acc.append(to_numpy(y, a.dtype))
    stacked = []
    for acc, a in zip(ys, y_avals):
        if reverse:
            acc.reverse()
        if acc:
            stacked.append(np.stack(acc))
        else:
            shape = tuple(dim_as_int(d, "an eagerly evaluated scan output") for d in a.shape)
            stacked.append(np.zeros((0, *shape), a.dtype))
    return _outputs_as(carry, carry_avals) + stacked


scan_p.def_abstract_eval(_scan_abstract_eval)
scan_p.def_impl(_scan_impl)


# ---------------------------------------------------------------------------
# Partial evaluation


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b)]


def _zeros(aval: ShapedArray) -> Any:
    """A zero value of ``aval`` for use while staging (a filler residual)."""
    zero = np.zeros((), aval.dtype)
    if aval.shape == ():
        return zero
    return broadcast_in_dim_p.bind(zero, shape=tuple(aval.shape), broadcast_dimensions=())


def _cond_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    index, *ops = args
    branches: tuple[ClosedJaxpr, ...] = params["branches"]
    if trace.is_unknown(index):
        return list(trace.stage(cond_p, args, params))
    ops_uk = [trace.is_unknown(x) for x in ops]
    nout = len(branches[0].out_avals)
    out_uk = [False] * nout
    for br in branches:
        out_uk = _or(out_uk, partial_eval_jaxpr(br, ops_uk, instantiate=False)[2])
    splits = [partial_eval_jaxpr(br, ops_uk, instantiate=out_uk) for br in branches]
    nk = out_uk.count(False)

    # Residual slots shared by type across branches; branch b's r-th residual goes to slot_of[b][r].
    slot_avals: list[ShapedArray] = []
    slot_of: list[list[int]] = []
    for known, _, _, _ in splits:
        taken: set[int] = set()
        mine = []
        for a in known.out_avals[nk:]:
            k = next((s for s, sa in enumerate(slot_avals) if sa == a and s not in taken), None)
            if k is None:
                k = len(slot_avals)
                slot_avals.append(a)
            taken.add(k)
            mine.append(k)
        slot_of.append(mine)

    known_ops = [x for x, u in zip(ops, ops_uk) if not u]
    known_in = branches[0].in_avals
    known_in_avals = [a for a, u in zip(known_in, ops_uk) if not u]

    def known_branch(b: int) -> ClosedJaxpr:
        known = splits[b][0]

        def fun(*xs: Any) -> list[Any]:
            outs = eval_jaxpr(known.jaxpr, known.consts, *xs)
            slots: list[Any] = [None] * len(slot_avals)
            for k, r in zip(slot_of[b], outs[nk:]):
                slots[k] = r
            return outs[:nk] + [s if s is not None else _zeros(a) for s, a in zip(slots, slot_avals)]

        return trace_to_jaxpr(fun, known_in_avals)

    def unknown_branch(b: int) -> ClosedJaxpr:
        unknown = splits[b][1]
        uk_in = [a for a, u in zip(known_in, ops_uk) if u]

        def fun(*xs: Any) -> list[Any]:
            res, rest = split_list(xs, len(slot_avals))
            return eval_jaxpr(unknown.jaxpr, unknown.consts, *[res[k] for k in slot_of[b]], *rest)

        return trace_to_jaxpr(fun, slot_avals + uk_in)

    results: list[Any] = []
    if nk or slot_avals:
        kb, kconsts = join_consts([known_branch(b) for b in range(len(branches))])
        with set_current_trace(trace.parent):  # type: ignore[arg-type]
            results = list(cond_p.bind(index, *kconsts, *known_ops, branches=tuple(kb)))
    known_outs, residuals = results[:nk], results[nk:]
    unknown_outs: list[Any] = []
    if nk < nout:
        ub, uconsts = join_consts([unknown_branch(b) for b in range(len(branches))])
        uk_ops = [x for x, u in zip(ops, ops_uk) if u]
        unknown_outs = list(trace.stage(cond_p, [index, *uconsts, *residuals, *uk_ops], {"branches": tuple(ub)}))
    ik, iu = iter(known_outs), iter(unknown_outs)
    return [next(iu) if u else next(ik) for u in out_uk]


def _scan_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    jaxpr: ClosedJaxpr = params["jaxpr"]
    nc, ncarry = params["num_consts"], params["num_carry"]
    linear: tuple[bool, ...] = params["linear"]
    uk = [trace.is_unknown(x) for x in args]
    const_uk, carry_uk, xs_uk = split_list(uk, nc, ncarry)
    ny = len(jaxpr.out_avals) - ncarry
    # Fixed point: a carry is unknown if its initial value is, or if the body makes it so.
    for _ in range(ncarry + 1):
        known, unknown, out_uk, nres = partial_eval_jaxpr(
            jaxpr, const_uk + carry_uk + xs_uk, instantiate=carry_uk + [False] * ny
        )
        if out_uk[:ncarry] == carry_uk:
            break
        carry_uk = _or(carry_uk, out_uk[:ncarry])
    ys_uk = out_uk[ncarry:]
    consts, init, xs = split_list(args, nc, ncarry)
    lin_c, lin_i, lin_x = split_list(linear, nc, ncarry)

    def pick(vals: Sequence[Any], flags: Sequence[bool], want: bool) -> list[Any]:
        return [v for v, f in zip(vals, flags) if f == want]

    hoisted, hconsts = convert_constvars(known)
    kj = hoisted.jaxpr
    k_consts = hconsts + pick(consts, const_uk, False)
    k_init = pick(init, carry_uk, False)
    k_xs = pick(xs, xs_uk, False)
    nk_out = out_uk.count(False)
    # Residuals that are just known consts or known xs are forwarded, not stacked.
    position = {v: p for p, v in enumerate(kj.invars)}
    const_res: list[int] = []
    xs_res: list[int] = []
    stacked_res: list[int] = []
    for r, v in enumerate(kj.outvars[nk_out:]):
        p = position.get(v) if type(v) is Var else None
        if p is not None and p < len(k_consts):
            const_res.append(r)
        elif p is not None and p >= len(k_consts) + len(k_init):
            xs_res.append(r)
        else:
            stacked_res.append(r)
    res_vars = kj.outvars[nk_out:]
    known_body = ClosedJaxpr(
        Jaxpr([], kj.invars, kj.outvars[:nk_out] + [res_vars[r] for r in stacked_res], kj.eqns), []
    )
    results: list[Any] = []
    if known_body.out_avals:
        with set_current_trace(trace.parent):  # type: ignore[arg-type]
            results = list(
                scan_p.bind(
                    *k_consts, *k_init, *k_xs,
                    jaxpr=known_body,
                    num_consts=len(k_consts),
                    num_carry=len(k_init),
                    length=params["length"],
                    reverse=params["reverse"],
                    unroll=params["unroll"],
                    linear=(False,) * len(hconsts) + tuple(pick(linear, const_uk + carry_uk + xs_uk, False)),
                )
            )
    known_carry, known_ys, stacked = split_list(results, len(k_init), nk_out - len(k_init))
    if all(not u for u in out_uk):
        return known_carry + known_ys

    def forwarded(r: int) -> Any:
        p = position[res_vars[r]]  # type: ignore[index]
        return k_consts[p] if p < len(k_consts) else k_xs[p - len(k_consts) - len(k_init)]

    uj = unknown.jaxpr
    res_in, uk_in = uj.invars[:nres], uj.invars[nres:]
    uk_c, uk_carry, uk_x = split_list(uk_in, const_uk.count(True), carry_uk.count(True))
    invars = (
        [res_in[r] for r in const_res] + uk_c + uk_carry
        + [res_in[r] for r in stacked_res] + [res_in[r] for r in xs_res] + uk_x
    )
    unknown_body = ClosedJaxpr(Jaxpr([], invars, uj.outvars, uj.eqns), [])
    operands = (
        [forwarded(r) for r in const_res] + pick(consts, const_uk, True) + pick(init, carry_uk, True)
        + stacked + [forwarded(r) for r in xs_res] + pick(xs, xs_uk, True)
    )
    new_linear = (
        (False,) * len(const_res) + tuple(pick(lin_c, const_uk, True)) + tuple(pick(lin_i, carry_uk, True))
        + (False,) * (len(stacked_res) + len(xs_res)) + tuple(pick(lin_x, xs_uk, True))
    )
    unknown_params = dict(
        params,
        jaxpr=unknown_body,
        num_consts=len(const_res) + const_uk.count(True),
        num_carry=carry_uk.count(True),
        linear=new_linear,
    )
    unknown_outs = trace.stage(scan_p, operands, unknown_params)
    uo_carry, uo_ys = split_list(unknown_outs, carry_uk.count(True))
    ic, iy, kc, ky = iter(uo_carry), iter(uo_ys), iter(known_carry), iter(known_ys)
    return [next(ic) if u else next(kc) for u in carry_uk] + [next(iy) if u else next(ky) for u in ys_uk]


def _while_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    cj: ClosedJaxpr = params["cond_jaxpr"]
    bj: ClosedJaxpr = params["body_jaxpr"]
    nc, nb = params["cond_nconsts"], params["body_nconsts"]
    uk = [trace.is_unknown(x) for x in args]
    cc_uk, bc_uk, carry_uk = split_list(uk, nc, nb)
    for _ in range(len(carry_uk) + 1):
        out_uk = partial_eval_jaxpr(bj, bc_uk + carry_uk, instantiate=carry_uk)[2]
        if out_uk == carry_uk:
            break
        carry_uk = _or(carry_uk, out_uk)
    known_c, _, pred_uk, nres_c = partial_eval_jaxpr(cj, cc_uk + carry_uk)
    if pred_uk[0] or all(carry_uk):
        return list(trace.stage(while_p, args, params))
    # The predicate and some carries are known: run a loop over those carries now.
    nkc = carry_uk.count(False)
    known_b, _, _, nres_b = partial_eval_jaxpr(bj, bc_uk + carry_uk, instantiate=carry_uk)
    known_c = dce_closed_jaxpr(known_c, [True] + [False] * nres_c)[0]
    known_b = dce_closed_jaxpr(known_b, [True] * nkc + [False] * nres_b)[0]
    cjk, cconsts = convert_constvars(known_c)
    bjk, bconsts = convert_constvars(known_b)
    cconsts += [x for x, u in zip(args[:nc], cc_uk) if not u]
    bconsts += [x for x, u in zip(args[nc : nc + nb], bc_uk) if not u]
    k_init = [x for x, u in zip(args[nc + nb :], carry_uk) if not u]
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        known = list(
            while_p.bind(
                *cconsts, *bconsts, *k_init,
                cond_jaxpr=cjk, body_jaxpr=bjk, cond_nconsts=len(cconsts), body_nconsts=len(bconsts),
            )
        )
    if not any(carry_uk):
        return known
    # The unknown carries need the whole loop, known parts recomputed (its operands are residuals).
    staged = trace.stage(while_p, args, params)
    it = iter(known)
    return [s if u else next(it) for s, u in zip(staged, carry_uk)]


partial_eval_rules[cond_p] = _cond_partial_eval
partial_eval_rules[scan_p] = _scan_partial_eval
partial_eval_rules[while_p] = _while_partial_eval


# ---------------------------------------------------------------------------
# Dead-code elimination


def _prune_invars(closed: ClosedJaxpr, keep: Sequence[bool]) -> ClosedJaxpr:
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [v for v, k in zip(j.invars, keep) if k], j.outvars, j.eqns), closed.consts)


def _keep(xs: Sequence[Any], flags: Sequence[bool]) -> list[Any]:
    return [x for x, f in zip(xs, flags) if f]


def _cond_dce(eqn: JaxprEqn, used_outs: list[bool]) -> tuple[list[bool], JaxprEqn | None]:
    branches: tuple[ClosedJaxpr, ...] = eqn.params["branches"]
    pruned = [dce_closed_jaxpr(br, used_outs) for br in branches]
    used_ops = [False] * (len(eqn.invars) - 1)
    for _, used in pruned:
        used_ops = _or(used_ops, used)
    new_branches = tuple(_prune_invars(br, used_ops) for br, _ in pruned)
    new_eqn = eqn.replace(
        invars=[eqn.invars[0]] + _keep(eqn.invars[1:], used_ops),
        outvars=_keep(eqn.outvars, used_outs),
        params=dict(eqn.params, branches=new_branches),
    )
    return [True] * len(new_eqn.invars), new_eqn


def _scan_dce(eqn: JaxprEqn, used_outs: list[bool]) -> tuple[list[bool], JaxprEqn | None]:
    p = eqn.params
    jaxpr: ClosedJaxpr = p["jaxpr"]
    nc, ncarry = p["num_consts"], p["num_carry"]
    used_carry, used_ys = split_list(used_outs, ncarry)
    # Fixed point: a carry is needed if it is used, or if the body reads it to make a needed carry.
    for _ in range(ncarry + 1):
        body, used_in = dce_closed_jaxpr(jaxpr, used_carry + used_ys)
        reads = used_in[nc : nc + ncarry]
        if all(r <= u for r, u in zip(reads, used_carry)):
            break
        used_carry = _or(used_carry, reads)
    used_c, _, used_x = split_list(used_in, nc, ncarry)
    keep_in = used_c + used_carry + used_x
    new_body = _prune_invars(body, keep_in)
    new_eqn = eqn.replace(
        invars=_keep(eqn.invars, keep_in),
        outvars=_keep(eqn.outvars, used_carry + used_ys),
        params=dict(
            p,
            jaxpr=new_body,
            num_consts=used_c.count(True),
            num_carry=used_carry.count(True),
            linear=tuple(_keep(p["linear"], keep_in)),
        ),
    )
    return [True] * len(new_eqn.invars), new_eqn


def _while_dce(eqn: JaxprEqn, used_outs: list[bool]) -> tuple[list[bool], JaxprEqn | None]:
    p = eqn.params
    cj: ClosedJaxpr = p["cond_jaxpr"]
    bj: ClosedJaxpr = p["body_jaxpr"]
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cond, cond_in = dce_closed_jaxpr(cj)
    used_cc, cond_reads = split_list(cond_in, nc)
    used_carry = _or(used_outs, cond_reads)
    for _ in range(len(used_carry) + 1):
        body, body_in = dce_closed_jaxpr(bj, used_carry)
        reads = body_in[nb:]
        if all(r <= u for r, u in zip(reads, used_carry)):
            break
        used_carry = _or(used_carry, reads)
    used_bc = body_in[:nb]
    new_cond = _prune_invars(cond, used_cc + used_carry)
    new_body = _prune_invars(body, used_bc + used_carry)
    keep_in = used_cc + used_bc + used_carry
    new_eqn = eqn.replace(
        invars=_keep(eqn.invars, keep_in),
        outvars=_keep(eqn.outvars, used_carry),
        params=dict(
            p,
            cond_jaxpr=new_cond,
            body_jaxpr=new_body,
            cond_nconsts=used_cc.count(True),
            body_nconsts=used_bc.count(True),
        ),
    )
    return [True] * len(new_eqn.invars), new_eqn


dce_rules[cond_p] = _cond_dce
dce_rules[scan_p] = _scan_dce
dce_rules[while_p] = _while_dce
