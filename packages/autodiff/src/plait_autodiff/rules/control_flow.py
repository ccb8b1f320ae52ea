"""Rules of the control-flow primitives: ``cond``, ``while`` and ``scan``.

Their bodies are jaxprs, so their JVPs are the same primitives applied to
the JVPs of their bodies (:func:`~plait_autodiff.jvp.jvp_jaxpr`), with the
nonzero tangents travelling as extra operands.  A loop carry's tangent is
nonzero if its initial tangent is or if the body makes it so (a fixed
point).  Transposes: a ``cond`` transposes each branch; a ``scan`` runs its
transposed body backwards, carrying the cotangents of the carry and
accumulating those of the linear constants.  ``while`` has no transpose
(its trip count is not known when the program is staged): reverse mode
goes through ``scan`` (``fori_loop`` with static bounds is one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_autodiff.jaxpr_util import (
    eval_jaxpr,
    hoist_consts,
    reorder,
    strengthen_carries,
    weaken,
    with_unused_inputs,
)
from plait_autodiff.jvp import jvp_jaxpr
from plait_autodiff.registries import jvp_rules, transpose_rules
from plait_autodiff.tangents import Zero, add_tangents, instantiate, to_tangent_type
from plait_autodiff.transpose import NonlinearError, is_undefined, transpose_jaxpr, transpose_nonzeros
from plait_core import ClosedJaxpr, get_aval
from plait_core.primitives.control_flow import cond_p, join_consts, scan_p, split_list, while_p
from plait_core.staging import trace_to_jaxpr


def _nonzero(ts: Sequence[Any]) -> list[bool]:
    return [type(t) is not Zero for t in ts]




def _merge_tangents(flags: Sequence[bool], given: Sequence[Any], primals: Sequence[Any]) -> list[Any]:
    """One tangent per primal: the next of ``given`` where flagged, else a Zero."""
    it = iter(given)
    return [next(it) if f else Zero.from_primal_value(p) for f, p in zip(flags, primals)]


def _or(a: Sequence[bool], b: Sequence[bool]) -> list[bool]:
    return [x or y for x, y in zip(a, b)]


# ---------------------------------------------------------------------------
# cond


def _cond_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, branches: tuple[ClosedJaxpr, ...]) -> tuple[list[Any], list[Any]]:
    index, *ops = primals
    op_ts = tangents[1:]
    nz = _nonzero(op_ts)
    out_nz = [False] * len(branches[0].out_avals)
    for br in branches:
        out_nz = _or(out_nz, jvp_jaxpr(br, nz, False)[1])
    new_branches, consts = join_consts([jvp_jaxpr(br, nz, out_nz)[0] for br in branches])
    given = [t for t in op_ts if type(t) is not Zero]
    outs = cond_p.bind(index, *consts, *ops, *given, branches=tuple(new_branches))
    n = len(out_nz)
    return outs[:n], _merge_tangents(out_nz, outs[n:], outs[:n])


jvp_rules[cond_p] = _cond_jvp


def _cond_transpose(cts: Sequence[Any], index: Any, *ops: Any, branches: tuple[ClosedJaxpr, ...]) -> list[Any]:
    if is_undefined(index):
        raise NonlinearError("cannot transpose cond with respect to its branch index")
    linear = [is_undefined(x) for x in ops]
    ct_nz = _nonzero(cts)
    t_branches, consts = join_consts([transpose_jaxpr(br, linear, ct_nz) for br in branches])
    # an operand no branch makes a cotangent for gets a symbolic zero (see _scan_transpose)
    nonzero = iter([any(f) for f in zip(*(transpose_nonzeros(br, linear, ct_nz) for br in branches))])
    residuals = [x for x, lin in zip(ops, linear) if not lin]
    given = [ct for ct in cts if type(ct) is not Zero]
    results = iter(cond_p.bind(index, *consts, *residuals, *given, branches=tuple(t_branches)))
    return [None, *[_symbolic(next(results), next(nonzero)) if lin else None for lin in linear]]


transpose_rules[cond_p] = _cond_transpose


# ---------------------------------------------------------------------------
# while (forward mode only)


def _while_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, cond_jaxpr: ClosedJaxpr, body_jaxpr: ClosedJaxpr,
    cond_nconsts: int, body_nconsts: int,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    cconsts, bconsts, init = split_list(primals, cond_nconsts, body_nconsts)
    _, bconst_ts, init_ts = split_list(tangents, cond_nconsts, body_nconsts)
    body_jaxpr, init, weak = strengthen_carries(body_jaxpr, body_nconsts, len(init), init)
    bconst_nz, carry_nz = _nonzero(bconst_ts), _nonzero(init_ts)
    for _ in range(len(carry_nz) + 1):
        out_nz = jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)[1]
        if out_nz == carry_nz:
            break
        carry_nz = _or(carry_nz, out_nz)
    body, _ = jvp_jaxpr(body_jaxpr, bconst_nz + carry_nz, carry_nz)
    nb, nc, nbt, nct = len(bconsts), len(init), bconst_nz.count(True), carry_nz.count(True)
    # jvp body inputs: bconsts, carry, bconst tangents, carry tangents -> want bconsts, bconst tangents, carry, carry tangents
    order = [*range(nb), *range(nb + nc, nb + nc + nbt), *range(nb, nb + nc), *range(nb + nc + nbt, nb + nc + nbt + nct)]
    body, hoisted = hoist_consts(reorder(body, order))
    carry_t_avals = [to_tangent_type(a) for a, z in zip(body_jaxpr.in_avals[body_nconsts:], carry_nz) if z]
    cond = with_unused_inputs(cond_jaxpr, carry_t_avals)
    bconst_given = [t for t in bconst_ts if type(t) is not Zero]
    carry_given = [instantiate(t) if z else None for t, z in zip(init_ts, carry_nz)]
    outs = while_p.bind(
        *cconsts, *hoisted, *bconsts, *bconst_given, *init, *[t for t in carry_given if t is not None],
        cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=cond_nconsts,
        body_nconsts=len(hoisted) + nb + nbt,
    )  # fmt: skip
    carry_out = weaken(outs[:nc], weak)
    return carry_out, _merge_tangents(carry_nz, outs[nc:], carry_out)


jvp_rules[while_p] = _while_jvp


def _while_transpose(cts: Sequence[Any], *args: Any, **params: Any) -> list[Any]:
    raise ValueError(
        "reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with traced bounds: "
        "the number of iterations is not known when the program is staged. Use lax.scan, or fori_loop "
        "with concrete (Python int) bounds, which is a scan"
    )


transpose_rules[while_p] = _while_transpose


# ---------------------------------------------------------------------------
# scan


def _scan_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int,
    length: Any, reverse: bool, unroll: int, linear: tuple[bool, ...],
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    consts, init, xs = split_list(primals, num_consts, num_carry)
    const_ts, init_ts, xs_ts = split_list(tangents, num_consts, num_carry)
    jaxpr, init, weak = strengthen_carries(jaxpr, num_consts, num_carry, init)
    const_nz, carry_nz, xs_nz = _nonzero(const_ts), _nonzero(init_ts), _nonzero(xs_ts)
    ny = len(jaxpr.out_avals) - num_carry
    for _ in range(num_carry + 1):
        out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)[1]
        if out_nz[:num_carry] == carry_nz:
            break
        carry_nz = _or(carry_nz, out_nz[:num_carry])
    body, out_nz = jvp_jaxpr(jaxpr, const_nz + carry_nz + xs_nz, carry_nz + [False] * ny)
    ys_nz = out_nz[num_carry:]
    nc, nk, nx = num_consts, num_carry, len(xs)
    nct, nkt, nxt, nyt = const_nz.count(True), carry_nz.count(True), xs_nz.count(True), ys_nz.count(True)
    # Inputs: consts, carry, xs, const tangents, carry tangents, xs tangents.
    p0 = nc + nk + nx
    in_order = [
        *range(nc), *range(p0, p0 + nct),
        *range(nc, nc + nk), *range(p0 + nct, p0 + nct + nkt),
        *range(nc + nk, p0), *range(p0 + nct + nkt, p0 + nct + nkt + nxt),
    ]  # fmt: skip
    # Outputs: carry, ys, carry tangents, ys tangents.
    ny_all = ny
    out_order = [
        *range(nk), *range(nk + ny_all, nk + ny_all + nkt),
        *range(nk, nk + ny_all), *range(nk + ny_all + nkt, nk + ny_all + nkt + nyt),
    ]  # fmt: skip
    body, hoisted = hoist_consts(reorder(body, in_order, out_order))
    const_given = [t for t in const_ts if type(t) is not Zero]
    carry_given = [instantiate(t) for t, z in zip(init_ts, carry_nz) if z]
    xs_given = [t for t in xs_ts if type(t) is not Zero]
    lin_c, lin_k, lin_x = split_list(linear, nc, nk)
    new_linear = (
        (False,) * len(hoisted) + tuple(lin_c) + (True,) * nct + tuple(lin_k) + (True,) * nkt + tuple(lin_x)
        + (True,) * nxt
    )
    outs = scan_p.bind(
        *hoisted, *consts, *const_given, *init, *carry_given, *xs, *xs_given,
        jaxpr=body, num_consts=len(hoisted) + nc + nct, num_carry=nk + nkt, length=length, reverse=reverse,
        unroll=unroll, linear=new_linear,
    )  # fmt: skip
    carry_out, carry_t, ys, ys_t = split_list(outs, nk, nkt, ny)
    carry_out = weaken(carry_out, weak)
    primal_out = carry_out + ys
    return primal_out, _merge_tangents(carry_nz, carry_t, carry_out) + _merge_tangents(ys_nz, ys_t, ys)


jvp_rules[scan_p] = _scan_jvp


def _scan_transpose(
    cts: Sequence[Any], *args: Any, jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, length: Any,
    reverse: bool, unroll: int, linear: tuple[bool, ...],
) -> list[Any]:  # fmt: skip
    # Every carry is transposed as linear: a known initial carry (a tangent
    # instantiated as zeros by partial evaluation) just gets no cotangent.
    consts, init, xs = split_list(args, num_consts, num_carry)
    ct_carry, ct_ys = split_list(cts, num_carry)
    const_lin = [is_undefined(c) for c in consts]
    xs_lin = [is_undefined(x) for x in xs]
    ys_nz = _nonzero(ct_ys)
    body_linear = const_lin + [True] * num_carry + xs_lin
    t_body = transpose_jaxpr(jaxpr, body_linear, [True] * num_carry + ys_nz)
    # Cotangents the body never makes (of constants and xs it does not use linearly) stay symbolic
    # zeros: instantiated, a later 0 * x would turn a non-finite residual x into NaN.
    c_nz, _, x_nz = split_list(
        list(transpose_nonzeros(jaxpr, body_linear, [True] * num_carry + ys_nz)), const_lin.count(True), num_carry
    )
    res_consts = [c for c, lin in zip(consts, const_lin) if not lin]
    res_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
    n_rc, n_rx = len(res_consts), len(res_xs)
    n_lc = const_lin.count(True)
    lin_const_avals = [to_tangent_type(c.aval) for c in consts if is_undefined(c)]
    carry_avals = [to_tangent_type(a) for a in jaxpr.in_avals[num_consts : num_consts + num_carry]]
    ys_avals = [to_tangent_type(a) for a, z in zip(jaxpr.out_avals[num_carry:], ys_nz) if z]
    res_x_avals = [a for a, lin in zip(jaxpr.in_avals[num_consts + num_carry :], xs_lin) if not lin]
    res_c_avals = [a for a, lin in zip(jaxpr.in_avals[:num_consts], const_lin) if not lin]

    def body_fun(*vals: Any) -> list[Any]:
        rc, acc, ck, rx, cy = split_list(vals, n_rc, n_lc, num_carry, n_rx)
        outs = eval_jaxpr(t_body.jaxpr, t_body.consts, *rc, *rx, *ck, *cy)
        ct_c, ct_k, ct_x = split_list(outs, n_lc, num_carry)
        kept_x = [x for x, nz in zip(ct_x, x_nz) if nz]
        return [*[add_tangents(a, c) if nz else a for a, c, nz in zip(acc, ct_c, c_nz)], *ct_k, *kept_x]

    body = trace_to_jaxpr(body_fun, [*res_c_avals, *lin_const_avals, *carry_avals, *res_x_avals, *ys_avals])
    body, hoisted = hoist_consts(body)
    acc_init = [instantiate(Zero(a)) for a in lin_const_avals]
    carry_init = [instantiate(ct) if type(ct) is Zero else ct for ct in ct_carry]
    given_ys = [ct for ct in ct_ys if type(ct) is not Zero]
    outs = scan_p.bind(
        *hoisted, *res_consts, *acc_init, *carry_init, *res_xs, *given_ys,
        jaxpr=body, num_consts=len(hoisted) + n_rc, num_carry=n_lc + num_carry, length=length,
        reverse=not reverse, unroll=unroll,
        linear=(False,) * (len(hoisted) + n_rc + n_lc + num_carry + n_rx + len(given_ys)),
    )  # fmt: skip
    ct_consts, ct_init, ct_xs = split_list(outs, n_lc, num_carry)
    it_c, it_x, it_cnz, it_xnz = iter(ct_consts), iter(ct_xs), iter(c_nz), iter(x_nz)
    return [
        *[_symbolic(next(it_c), next(it_cnz)) if lin else None for lin in const_lin],
        *[ct if is_undefined(c) else None for ct, c in zip(ct_init, init)],
        *[(next(it_x) if next(it_xnz) else Zero(to_tangent_type(x.aval))) if lin else None for x, lin in zip(xs, xs_lin)],
    ]


def _symbolic(ct: Any, nonzero: bool) -> Any:
    """``ct``, or a symbolic zero of its type when the body never made it nonzero."""
    return ct if nonzero else Zero(to_tangent_type(get_aval(ct)))


transpose_rules[scan_p] = _scan_transpose
