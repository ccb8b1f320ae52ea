"""Batching rules of the calls family.

A call stays a call: its jaxpr is batched with
:func:`~plait_batching.batch_jaxpr.batch_jaxpr` and bound again with the
same params (constants the batched jaxpr picked up become leading operands).
So ``jit`` inside ``vmap`` is still one compiled call, ``checkpoint`` still
recomputes, and the invertible call is still invertible.

The custom-rule calls batch their rules too, so that differentiating a
batched function still uses the user's rule (``vmap(grad(f))`` and
``grad(vmap(f))`` alike):

* ``custom_jvp_call``: ``jvp_jaxpr_fun`` is wrapped to batch the JVP jaxpr
  the user's rule stages;
* ``custom_vjp_call``: ``fwd_jaxpr_thunk`` is wrapped to batch the forward
  jaxpr, and ``bwd`` runs the user's backward rule under ``vmap``;
* ``custom_ivjp_call``: ``ivjp`` runs under ``vmap``;
* ``custom_vmap_call``: the user's batching rule is called.

Outputs of the custom-rule calls are always batched: their tangents and
cotangents then carry the batch wherever their primals do.  Cotangents of
operands that were not batched are summed over the batch (the operand was
in effect broadcast to every element).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_batching.batch_jaxpr import batch_jaxpr
from plait_batching.moves import BDim, front_if_batched, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_core import (
    ClosedJaxpr,
    Jaxpr,
    Primitive,
    ShapedArray,
    Var,
    extend_axis_env,
    get_aval,
    transformation,
)
from plait_core import dtypes as dt
from plait_core.custom_derivatives import FwdJaxpr, JvpJaxpr
from plait_core.primitives import calls as c
from plait_core.primitives.calls import StagingCache, hashable_key
from plait_core.primitives.reductions import reduce_sum_p
from plait_core.primitives.structural import slice_p, squeeze_p

# ---------------------------------------------------------------------------
# Plain calls: closed_call, checkpoint, invertible_call


def _call_rule(prim: Primitive, jaxpr_param: str) -> Callable[..., tuple[list[Any], list[BDim]]]:
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[list[Any], list[BDim]]:
        in_b = [d is not None for d in dims]
        batched, out_b = batch_jaxpr(params[jaxpr_param], axis, in_b, False)
        body, hoisted = c.hoist_consts(batched)
        new = dict(params)
        new[jaxpr_param] = body
        if "num_consts" in new:
            new["num_consts"] = params["num_consts"] + len(hoisted)
        if "jit_info" in new:
            new["jit_info"] = c.remap_jit_info(params["jit_info"], (None,) * len(hoisted) + tuple(range(len(args))))
            new["jit_info"] = c.batch_jit_info(new["jit_info"], (False,) * len(hoisted) + tuple(in_b))
        ops = [front_if_batched(x, d) for x, d in zip(args, dims)]
        outs = prim.bind(*hoisted, *ops, **new)
        return list(outs), [0 if b else None for b in out_b]

    return rule


batching_rules[c.closed_call_p] = _call_rule(c.closed_call_p, "call_jaxpr")
batching_rules[c.checkpoint_p] = _call_rule(c.checkpoint_p, "jaxpr")
batching_rules[c.invertible_call_p] = _call_rule(c.invertible_call_p, "jaxpr")


# ---------------------------------------------------------------------------
# Shared by the custom-rule calls


def _axis_frames(axis: AxisData) -> list[tuple[Any, Any]]:
    return [] if axis.name is None else [(axis.name, axis.size)]


def _run_batched(
    fun: Callable[..., Any], axis: AxisData, args: Sequence[Any], batched: Sequence[bool]
) -> tuple[BatchTrace, Any]:
    """Run ``fun(*args)`` under a fresh trace for ``axis``: ``args`` flagged in
    ``batched`` carry the batch in front (``None`` entries stay ``None``).
    Returns the trace (to unpack results with) and what ``fun`` returned."""
    trace = BatchTrace(axis)
    with extend_axis_env(_axis_frames(axis)), transformation(trace):
        ins = [BatchTracer(trace, x, 0) if b and x is not None else x for x, b in zip(args, batched)]
        return trace, fun(*ins)


def _give_back(trace: BatchTrace, x: Any, batched: bool, axis: AxisData, unbatch: str) -> Any:
    """A result of a rule run under :func:`_run_batched`, for an operand that is
    ``batched`` (batch in front) or not.  For an unbatched operand a batched
    result is summed over the batch (``unbatch="sum"``: a cotangent; the
    operand was in effect broadcast) or its first element taken
    (``unbatch="first"``: a value equal in every element)."""
    if x is None:
        return None
    val, d = trace.unpack(x)
    if batched:
        return to_front(val, d, axis.size)
    if d is None:
        return val
    if unbatch == "sum":
        return None if get_aval(val).dtype == dt.float0 else reduce_sum_p.bind(val, axes=(d,))
    shape = get_aval(val).shape
    first = slice_p.bind(
        val, start_indices=(0,) * len(shape), limit_indices=tuple(1 if k == d else s for k, s in enumerate(shape)),
        strides=None,
    )  # fmt: skip
    return squeeze_p.bind(first, dimensions=(d,))


def _with_unused_inputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """``closed`` taking extra leading inputs of ``avals`` that it ignores."""
    if not avals:
        return closed
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.constvars, [Var(a) for a in avals] + list(j.invars), j.outvars, j.eqns), closed.consts)


_memo = StagingCache(256)


def _memoized(key: Any, make: Callable[[], Any]) -> Any:
    """One wrapped rule per (rule, axis, flags), so that batching the same call
    twice gives equal params (and hits the caches keyed on them)."""
    hkey = hashable_key(*key)
    hit = _memo.get(hkey)
    if hit is None:
        hit = make()
        _memo.put(hkey, hit, [])
    return hit


def _batched_call_jaxpr(closed: ClosedJaxpr, axis: AxisData, in_b: Sequence[bool]) -> tuple[ClosedJaxpr, list[Any]]:
    """The call's jaxpr batched with every output batched, its constants hoisted."""
    batched, _ = batch_jaxpr(closed, axis, in_b, True)
    return c.hoist_consts(batched)


# ---------------------------------------------------------------------------
# custom_jvp_call


class BatchedJvpJaxprFun:
    """The ``jvp_jaxpr_fun`` of a batched ``custom_jvp_call``: stages the user's
    rule on one element and batches it (tangents batched like their primals,
    every output batched).  Leading operands of ``hoisted_avals`` (constants
    the batched body picked up) are ignored by the rule."""

    __slots__ = ("__weakref__", "axis", "hoisted_avals", "in_batched", "inner")

    def __init__(
        self, inner: Callable[..., JvpJaxpr], axis: AxisData, in_batched: tuple[bool, ...],
        hoisted_avals: tuple[ShapedArray, ...],
    ) -> None:  # fmt: skip
        self.inner, self.axis, self.in_batched, self.hoisted_avals = inner, axis, in_batched, hoisted_avals

    def __repr__(self) -> str:
        return f"batched({self.inner!r})"

    def __call__(self, in_nonzeros: Sequence[bool]) -> JvpJaxpr:
        nz = list(in_nonzeros)[len(self.hoisted_avals) :]
        with extend_axis_env(_axis_frames(self.axis)):
            jj = self.inner(nz)
        tangents_b = [b for b, z in zip(self.in_batched, nz) if z]
        batched, _ = batch_jaxpr(jj.jaxpr, self.axis, list(self.in_batched) + tangents_b, True)
        return JvpJaxpr(_with_unused_inputs(batched, self.hoisted_avals), jj.out_nonzeros)


def _custom_jvp_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, call_jaxpr: ClosedJaxpr, jvp_jaxpr_fun: Any,
    num_consts: int, symbolic_zeros: bool,
) -> tuple[list[Any], list[BDim]]:  # fmt: skip
    in_b = tuple(d is not None for d in dims)
    body, hoisted = _batched_call_jaxpr(call_jaxpr, axis, in_b)
    h_avals = tuple(get_aval(h) for h in hoisted)
    fun = _memoized((jvp_jaxpr_fun, axis, in_b, h_avals), lambda: BatchedJvpJaxprFun(jvp_jaxpr_fun, axis, in_b, h_avals))
    ops = [front_if_batched(x, d) for x, d in zip(args, dims)]
    outs = c.custom_jvp_call_p.bind(
        *hoisted, *ops, call_jaxpr=body, jvp_jaxpr_fun=fun, num_consts=num_consts + len(hoisted),
        symbolic_zeros=symbolic_zeros,
    )  # fmt: skip
    return list(outs), [0] * len(outs)


batching_rules[c.custom_jvp_call_p] = _custom_jvp_rule


# ---------------------------------------------------------------------------
# custom_vjp_call


class BatchedFwdJaxprThunk:
    """The ``fwd_jaxpr_thunk`` of a batched ``custom_vjp_call``: stages the
    user's forward rule on one element and batches it (outputs and residuals
    all batched)."""

    __slots__ = ("__weakref__", "axis", "hoisted_avals", "in_batched", "inner")

    def __init__(
        self, inner: Callable[..., FwdJaxpr], axis: AxisData, in_batched: tuple[bool, ...],
        hoisted_avals: tuple[ShapedArray, ...],
    ) -> None:  # fmt: skip
        self.inner, self.axis, self.in_batched, self.hoisted_avals = inner, axis, in_batched, hoisted_avals

    def __repr__(self) -> str:
        return f"batched({self.inner!r})"

    def __call__(self, in_perturbed: Sequence[bool] | None = None) -> FwdJaxpr:
        pert = None if in_perturbed is None else list(in_perturbed)[len(self.hoisted_avals) :]
        with extend_axis_env(_axis_frames(self.axis)):
            fj = self.inner(pert)
        batched, _ = batch_jaxpr(fj.jaxpr, self.axis, self.in_batched, True)
        return FwdJaxpr(_with_unused_inputs(batched, self.hoisted_avals), fj.num_res, fj.out_tree, fj.res_tree)


class BatchedBwd:
    """The ``bwd`` of a batched ``custom_vjp_call``: the user's backward rule
    under ``vmap`` (residuals and output cotangents carry the batch in front);
    cotangents of unbatched operands are summed over the batch."""

    __slots__ = ("__weakref__", "axis", "in_batched", "inner", "num_hoisted")

    def __init__(self, inner: Callable[..., list[Any]], axis: AxisData, in_batched: tuple[bool, ...], num_hoisted: int) -> None:
        self.inner, self.axis, self.in_batched, self.num_hoisted = inner, axis, in_batched, num_hoisted

    def __repr__(self) -> str:
        return f"batched({self.inner!r})"

    def __call__(self, *res_and_cts: Any) -> list[Any]:
        trace, cts = _run_batched(self.inner, self.axis, res_and_cts, [True] * len(res_and_cts))
        return [None] * self.num_hoisted + [
            _give_back(trace, ct, b, self.axis, "sum") for ct, b in zip(cts, self.in_batched)
        ]


def _custom_vjp_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, call_jaxpr: ClosedJaxpr, fwd_jaxpr_thunk: Any,
    bwd: Any, num_consts: int, **params: Any,
) -> tuple[list[Any], list[BDim]]:  # fmt: skip
    in_b = tuple(d is not None for d in dims)
    body, hoisted = _batched_call_jaxpr(call_jaxpr, axis, in_b)
    h_avals = tuple(get_aval(h) for h in hoisted)
    thunk = _memoized(
        (fwd_jaxpr_thunk, axis, in_b, h_avals), lambda: BatchedFwdJaxprThunk(fwd_jaxpr_thunk, axis, in_b, h_avals)
    )
    new_bwd = _memoized((bwd, axis, in_b, len(hoisted)), lambda: BatchedBwd(bwd, axis, in_b, len(hoisted)))
    ops = [front_if_batched(x, d) for x, d in zip(args, dims)]
    outs = c.custom_vjp_call_p.bind(
        *hoisted, *ops, call_jaxpr=body, fwd_jaxpr_thunk=thunk, bwd=new_bwd, num_consts=num_consts + len(hoisted),
        **params,
    )  # fmt: skip
    return list(outs), [0] * len(outs)


batching_rules[c.custom_vjp_call_p] = _custom_vjp_rule


# ---------------------------------------------------------------------------
# custom_ivjp_call


class BatchedIvjp:
    """The ``ivjp`` of a batched ``custom_ivjp_call``: the user's rule under
    ``vmap``; reconstructed unbatched operands are taken from the first
    element, their cotangents summed over the batch."""

    __slots__ = ("__weakref__", "axis", "in_batched", "inner", "num_hoisted")

    def __init__(self, inner: Callable[..., Any], axis: AxisData, in_batched: tuple[bool, ...], num_hoisted: int) -> None:
        self.inner, self.axis, self.in_batched, self.num_hoisted = inner, axis, in_batched, num_hoisted

    def __repr__(self) -> str:
        return f"batched({self.inner!r})"

    def __call__(self, xs: Sequence[Any], ys: Sequence[Any], dys: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        h = self.num_hoisted
        nx, ny = len(xs) - h, len(ys)
        flags = list(self.in_batched) + [True] * (2 * ny)

        def run(*flat: Any) -> Any:
            return self.inner(list(flat[:nx]), list(flat[nx : nx + ny]), list(flat[nx + ny :]))

        trace, (new_xs, dxs) = _run_batched(run, self.axis, [*xs[h:], *ys, *dys], flags)
        ax = self.axis
        out_xs = [_give_back(trace, x, b, ax, "first") for x, b in zip(new_xs, self.in_batched)]
        out_dxs = [_give_back(trace, d, b, ax, "sum") for d, b in zip(dxs, self.in_batched)]
        return [*xs[:h], *out_xs], [None] * h + out_dxs


def _custom_ivjp_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, call_jaxpr: ClosedJaxpr, ivjp: Any,
    num_consts: int, **params: Any,
) -> tuple[list[Any], list[BDim]]:  # fmt: skip
    in_b = tuple(d is not None for d in dims)
    body, hoisted = _batched_call_jaxpr(call_jaxpr, axis, in_b)
    rule = _memoized((ivjp, axis, in_b, len(hoisted)), lambda: BatchedIvjp(ivjp, axis, in_b, len(hoisted)))
    ops = [front_if_batched(x, d) for x, d in zip(args, dims)]
    outs = c.custom_ivjp_call_p.bind(
        *hoisted, *ops, call_jaxpr=body, ivjp=rule, num_consts=num_consts + len(hoisted), **params
    )
    return list(outs), [0] * len(outs)


batching_rules[c.custom_ivjp_call_p] = _custom_ivjp_rule


# ---------------------------------------------------------------------------
# custom_vmap_call


def _custom_vmap_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, *, rule: Any, **params: Any
) -> tuple[list[Any], list[BDim]]:
    ops = [front_if_batched(x, d) for x, d in zip(args, dims)]
    with extend_axis_env(_axis_frames(axis)):
        outs, out_batched = rule(axis.size, [d is not None for d in dims], *ops)
    return list(outs), [0 if b else None for b in out_batched]


batching_rules[c.custom_vmap_call_p] = _custom_vmap_rule
