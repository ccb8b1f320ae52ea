"""Ragged rules of the custom-rule calls: bound again, rules and all.

Inside ``vmap`` over piles, ``custom_jvp_call``, ``custom_vjp_call`` and
``custom_ivjp_call`` on ragged values are bound again around their function
mapped over the piles (:func:`~plait_batching.ragged_jaxpr.ragged_call_jaxpr`),
with the lengths among their leading operands, and with their rules mapped
the same way, so that a transformation applied outside the ``vmap`` still
uses the user's rule:

* ``custom_jvp_call``: ``jvp_jaxpr_fun`` maps the user's JVP jaxpr (tangents
  ragged like their primals);
* ``custom_vjp_call``: ``fwd_jaxpr_thunk`` maps the forward jaxpr, which
  also returns the lengths after the residuals, and ``bwd`` runs the user's
  backward rule over the piles with those lengths;
* ``custom_ivjp_call``: ``ivjp`` runs the user's rule over the piles.

Every output is batched; cotangents of ragged operands get zero padding and
those of unbatched operands are summed over the batch.  ``custom_vmap_call``
on ragged values is refused (see the reason registered below): its rule
expects a rectangular batch.

A rule that receives symbolic zeros (``symbolic_zeros=True``) gets
``SymbolicZero`` values of the element's ragged shape; their
``instantiate()`` makes the zeros on the trace of the ``vmap``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_batching.ragged import env_of, operands, wrap_results
from plait_batching.ragged_jaxpr import RaggedFrame, ragged_call_jaxpr, unpack_operands
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import (
    ClosedJaxpr,
    Primitive,
    ShapedArray,
    extend_axis_env,
    get_aval,
    set_current_trace,
    transformation,
)
from plait_core.abstract import to_tangent_type
from plait_core.custom_derivatives import FwdJaxpr, JvpJaxpr, closure_differentiation_error
from plait_core.primitives.calls import (
    StagingCache,
    called_jaxpr,
    custom_ivjp_call_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
    custom_vmap_call_p,
    hashable_key,
)
from plait_core.primitives.structural import slice_p, squeeze_p

__all__ = ["RaggedBwd", "RaggedFwdJaxprThunk", "RaggedIvjp", "RaggedJvpJaxprFun"]


def _name(rule: Any) -> str:
    for path in (("name",), ("spec", "name"), ("inner", "name")):
        obj = rule
        for attr in path:
            obj = getattr(obj, attr, None)
        if isinstance(obj, str):
            return obj
    return repr(rule)


class _Mapped:
    """What every rule mapped over piles knows: the ``frame`` of its call, which
    of the call's operands are batched, and the call's element types."""

    __slots__ = ("__weakref__", "batched", "frame", "in_avals", "inner", "name", "out_avals")

    def __init__(
        self, inner: Any, frame: RaggedFrame, batched: Sequence[bool], in_avals: Sequence[ShapedArray],
        out_avals: Sequence[ShapedArray],
    ) -> None:  # fmt: skip
        self.inner, self.frame, self.batched, self.name = inner, frame, tuple(batched), _name(inner)
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)

    def __repr__(self) -> str:
        return f"over_piles({self.inner!r})"

    def check_unperturbed(self, flags: Sequence[bool] | None, kind: str) -> None:
        if flags is not None and any(flags[: self.frame.num_lead]):
            raise TypeError(closure_differentiation_error(kind, self.name))


_memo = StagingCache(64)


def _per_flags(owner: Any, flags: Sequence[bool] | None, make: Callable[[], tuple[Any, ClosedJaxpr]]) -> Any:
    """``make()`` once per (rule, flags): it returns the value to remember and
    the jaxpr it staged (not remembered when its constants hold tracers)."""
    key = hashable_key(owner, None if flags is None else tuple(bool(b) for b in flags))
    hit = _memo.get(key)
    if hit is None:
        hit, staged = make()
        _memo.put(key, hit, staged.consts)
    return hit


def _bind_again(
    trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any],
    new_params: Callable[[RaggedFrame, list[bool]], dict[str, Any]],
) -> Any:  # fmt: skip
    """Bind ``prim`` on the parent trace around its function mapped over the
    piles; ``new_params(frame, batched)`` gives its rule params."""
    env_of(trace)
    ops = operands(trace, prim, args)
    closed = called_jaxpr(prim, params)
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        vals, batched = unpack_operands(trace, ops)
        body, lead, frame = ragged_call_jaxpr(trace, closed, batched)
        full = dict(params, call_jaxpr=body, num_consts=len(lead) + params["num_consts"])
        full.update(new_params(frame, batched))
        outs = prim.bind(*lead, *vals, **full)
    return wrap_results(trace, prim, outs, [0] * len(outs), closed.out_avals)


# ---------------------------------------------------------------------------
# custom_jvp_call


class RaggedJvpJaxprFun(_Mapped):
    """``jvp_jaxpr_fun`` of a ``custom_jvp_call`` over piles: the user's JVP
    jaxpr, mapped (tangents batched and ragged like their primals)."""

    __slots__ = ()

    def __call__(self, in_nonzeros: Sequence[bool]) -> JvpJaxpr:
        self.check_unperturbed(in_nonzeros, "custom_jvp")
        nz = list(in_nonzeros)[self.frame.num_lead :]

        def make() -> tuple[JvpJaxpr, ClosedJaxpr]:
            jj = self.inner(nz)
            tangents_b = [b for b, z in zip(self.batched, nz) if z]
            body = self.frame.stage(jj.jaxpr, [*self.batched, *tangents_b])
            return JvpJaxpr(body, jj.out_nonzeros), body

        return _per_flags(self, nz, make)  # type: ignore[no-any-return]


def _custom_jvp_ragged(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    closed = params["call_jaxpr"]

    def new_params(frame: RaggedFrame, batched: list[bool]) -> dict[str, Any]:
        fun = RaggedJvpJaxprFun(params["jvp_jaxpr_fun"], frame, batched, closed.in_avals, closed.out_avals)
        return {"jvp_jaxpr_fun": fun}

    return _bind_again(trace, prim, args, params, new_params)


ragged_rules[custom_jvp_call_p] = _custom_jvp_ragged


# ---------------------------------------------------------------------------
# custom_vjp_call


class RaggedFwdJaxprThunk(_Mapped):
    """``fwd_jaxpr_thunk`` of a ``custom_vjp_call`` over piles: the user's
    forward jaxpr, mapped, returning the lengths after the residuals."""

    __slots__ = ("latest",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.latest: FwdJaxpr | None = None

    def __call__(self, in_perturbed: Sequence[bool] | None = None) -> FwdJaxpr:
        self.check_unperturbed(in_perturbed, "custom_vjp")
        pert = None if in_perturbed is None else list(in_perturbed)[self.frame.num_lead :]
        names = [n for n, _, _ in self.frame.sizes]

        def lengths(t: BatchTrace) -> list[Any]:
            env = env_of(t)
            return [env.sizes[n].lengths for n in names]

        def make() -> tuple[tuple[FwdJaxpr, FwdJaxpr], ClosedJaxpr]:
            fj = self.inner(pert)
            body = self.frame.stage(fj.jaxpr, self.batched, lengths)
            return (fj, FwdJaxpr(body, fj.num_res + len(names), fj.out_tree, fj.res_tree)), body

        inner, out = _per_flags(self, pert, make)
        self.latest = inner
        return out  # type: ignore[no-any-return]


class RaggedBwd:
    """``bwd`` of a ``custom_vjp_call`` over piles: the user's backward rule
    mapped over the piles whose lengths the forward jaxpr returned."""

    __slots__ = ("__weakref__", "inner", "symbolic_zeros", "thunk")

    def __init__(self, inner: Callable[..., list[Any]], thunk: RaggedFwdJaxprThunk, symbolic_zeros: bool) -> None:
        self.inner, self.thunk, self.symbolic_zeros = inner, thunk, symbolic_zeros

    def __repr__(self) -> str:
        return f"over_piles({self.inner!r})"

    def __call__(self, *res_and_cts: Any) -> list[Any]:
        t = self.thunk
        if t.latest is None:
            t()
        fj = t.latest
        assert fj is not None
        frame, nout = t.frame, len(t.out_avals)
        nres, k = fj.num_res, len(frame.sizes)
        trace = frame.trace(res_and_cts[nres : nres + k])
        res_avals = list(fj.jaxpr.out_avals[nout:])
        ct_avals = [to_tangent_type(a) for a in t.out_avals]
        cts = [
            frame.zeros(a) if c is None and not self.symbolic_zeros else c
            for c, a in zip(res_and_cts[nres + k :], ct_avals)
        ]
        values = [*res_and_cts[:nres], *cts]
        with extend_axis_env(frame.axis_frames()), transformation(trace):
            result = self.inner(*frame.enter(trace, values, [*res_avals, *ct_avals], [True] * len(values)))
        return [None] * frame.num_lead + frame.cotangents(trace, result, t.in_avals, t.batched)


def _custom_vjp_ragged(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    closed: ClosedJaxpr = params["call_jaxpr"]

    def new_params(frame: RaggedFrame, batched: list[bool]) -> dict[str, Any]:
        thunk = RaggedFwdJaxprThunk(params["fwd_jaxpr_thunk"], frame, batched, closed.in_avals, closed.out_avals)
        return {"fwd_jaxpr_thunk": thunk, "bwd": RaggedBwd(params["bwd"], thunk, params["symbolic_zeros"])}

    return _bind_again(trace, prim, args, params, new_params)


ragged_rules[custom_vjp_call_p] = _custom_vjp_ragged


# ---------------------------------------------------------------------------
# custom_ivjp_call


def _first(trace: BatchTrace, x: Any) -> Any:
    """An unbatched operand rebuilt by a mapped rule: its first element."""
    val, d = trace.unpack(x)
    if d is None:
        return val
    shape = tuple(get_aval(val).shape)
    limits = tuple(1 if i == d else s for i, s in enumerate(shape))
    first = slice_p.bind(val, start_indices=(0,) * len(shape), limit_indices=limits, strides=None)
    return squeeze_p.bind(first, dimensions=(d,))


class RaggedIvjp(_Mapped):
    """``ivjp`` of a ``custom_ivjp_call`` over piles: the user's rule mapped
    over the piles (the lengths are among its leading operands)."""

    __slots__ = ()

    def __call__(self, xs: Sequence[Any], ys: Sequence[Any], dys: Sequence[Any] | None) -> tuple[list[Any], list[Any]]:
        frame = self.frame
        lead = list(xs[: frame.num_lead])
        lengths = frame.lengths_of(lead)
        if any(x is None for x in lengths):
            raise ValueError(
                f"vmap over piles: the inverse-VJP rule of the custom_ivjp function {self.name} needs the "
                "lengths of the piles, but they are not available (a bug in the program being inverted)"
            )
        trace = frame.trace(lengths)
        nx, ny = len(self.in_avals), len(self.out_avals)
        ct_avals = [to_tangent_type(a) for a in self.out_avals]
        given = [] if dys is None else [frame.zeros(a) if d is None else d for d, a in zip(dys, ct_avals)]
        values = [*xs[frame.num_lead :], *ys, *given]
        avals = [*self.in_avals, *self.out_avals, *ct_avals[: len(given)]]
        flags = [*self.batched, *[True] * (len(values) - nx)]
        with extend_axis_env(frame.axis_frames()), transformation(trace):
            ins = frame.enter(trace, values, avals, flags)
            new_xs, dxs = self.inner(ins[:nx], ins[nx : nx + ny], None if dys is None else ins[nx + ny :])
        out_xs = [
            None if x is None else frame.leave(trace, [x])[0] if b else _first(trace, x)
            for x, b in zip(new_xs, self.batched)
        ]
        return [*lead, *out_xs], [None] * frame.num_lead + frame.cotangents(trace, dxs, self.in_avals, self.batched)


def _custom_ivjp_ragged(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    closed: ClosedJaxpr = params["call_jaxpr"]

    def new_params(frame: RaggedFrame, batched: list[bool]) -> dict[str, Any]:
        return {"ivjp": RaggedIvjp(params["ivjp"], frame, batched, closed.in_avals, closed.out_avals)}

    return _bind_again(trace, prim, args, params, new_params)


ragged_rules[custom_ivjp_call_p] = _custom_ivjp_ragged


ragged_rules.not_supported(
    custom_vmap_call_p,
    "a custom_vmap function's batching rule expects a rectangular batch, and the elements of a pile have "
    "different lengths, so vmap over piles cannot use it (and does not silently batch the function's body "
    "instead); call the custom_vmap function on equal-length batches, outside the vmap over piles",
)
