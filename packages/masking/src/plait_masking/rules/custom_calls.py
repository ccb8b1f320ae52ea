"""The custom-rule calls under ``mask``: bound again, rules and all.

``custom_jvp_call``, ``custom_vjp_call``, ``custom_ivjp_call`` and
``custom_vmap_call`` are bound again around their masked function, with the
leading operands every masked call takes (the masked body's constants, then
the logical sizes), and with *masked rules*: each runs the user's rule on the
padded data under a fresh mask trace whose logical sizes are those leading
operands.  So a transformation applied outside ``mask`` still uses the
user's rule:

* ``custom_jvp_call``: ``jvp_jaxpr_fun`` gives the masked JVP jaxpr;
* ``custom_vjp_call``: ``fwd_jaxpr_thunk`` gives the masked forward jaxpr,
  which also returns the logical sizes as extra residuals, so that ``bwd``
  can run the user's backward rule under ``mask`` later;
* ``custom_ivjp_call``: ``ivjp`` runs the user's rule under ``mask`` (the
  logical sizes are among its operands);
* ``custom_vmap_call``: the batching rule runs the user's rule under
  ``mask``.

Cotangents that a masked rule returns have their padding set to zero: the
padding of an input never reaches the logical part of a result, so its
cotangent is zero there.  Values past the logical end of the other results
are unspecified, as always under ``mask``.

What cannot be done raises an error rather than bypassing the rule:

* a ``vmap`` outside ``mask`` that batches the logical sizes (one size per
  element) cannot use a ``custom_vmap`` rule, which expects a batch of
  values of one logical shape: ``NotImplementedError``;
* differentiating with respect to a value the custom function closes over
  is a ``TypeError``, as without ``mask``.

A rule that receives symbolic zeros (``symbolic_zeros=True``) gets
``SymbolicZero`` values of symbolic shape under ``mask``; their
``instantiate()`` makes the zeros on the mask trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_core import ClosedJaxpr, ShapedArray, transformation
from plait_core.abstract import to_tangent_type
from plait_core.custom_derivatives import FwdJaxpr, JvpJaxpr, closure_differentiation_error
from plait_core.primitives.calls import (
    StagingCache,
    custom_ivjp_call_p,
    custom_jvp_call_p,
    custom_vjp_call_p,
    custom_vmap_call_p,
    hashable_key,
)
from plait_core.staging import trace_to_jaxpr
from plait_masking import ops
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules
from plait_masking.trace import MaskTrace, eval_masked, mask_jaxpr

__all__ = ["MaskedBwd", "MaskedFwdJaxprThunk", "MaskedIvjp", "MaskedJvpJaxprFun", "MaskedVmapRule"]


def _name(rule: Any) -> str:
    """The custom function's name, as the wrapped rules know it."""
    for path in (("name",), ("spec", "name"), ("inner", "name")):
        obj = rule
        for attr in path:
            obj = getattr(obj, attr, None)
        if isinstance(obj, str):
            return obj
    return repr(rule)


class _Masked:
    """What every masked rule knows: the padded sizes, how many leading
    operands the masked call has (``num_lead``; the last ``num_sizes`` of them
    are the logical sizes), their types, and the logical types of the
    original operands and outputs."""

    __slots__ = ("__weakref__", "env", "in_avals", "inner", "lead_avals", "name", "num_sizes", "out_avals")

    def __init__(
        self, inner: Any, env: MaskEnv, lead_avals: Sequence[ShapedArray], in_avals: Sequence[ShapedArray],
        out_avals: Sequence[ShapedArray],
    ) -> None:  # fmt: skip
        self.inner, self.env, self.name = inner, env, _name(inner)
        self.lead_avals, self.num_sizes = tuple(lead_avals), len(env.names)
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)

    def __repr__(self) -> str:
        return f"masked({self.inner!r})"

    @property
    def num_lead(self) -> int:
        return len(self.lead_avals)

    def sizes_env(self, lead: Sequence[Any]) -> MaskEnv:
        """The env whose logical sizes are the leading operands ``lead``."""
        return self.env.rebind(list(lead[self.num_lead - self.num_sizes : self.num_lead]))

    def check_unperturbed(self, flags: Sequence[bool] | None, kind: str) -> None:
        if flags is not None and any(flags[: self.num_lead]):
            raise TypeError(closure_differentiation_error(kind, self.name))

    def stage(self, fun: Callable[[MaskEnv, Sequence[Any]], list[Any]], logical_in: Sequence[ShapedArray]) -> ClosedJaxpr:
        """Stage ``fun(env, padded)`` over ``(*leading operands, *padded inputs)``."""

        def flat(*xs: Any) -> list[Any]:
            return fun(self.sizes_env(xs), xs[self.num_lead :])

        return trace_to_jaxpr(flat, [*self.lead_avals, *(self.env.padded_aval(a) for a in logical_in)])


def _run_masked(env: MaskEnv, fun: Callable[..., Any], padded: Sequence[Any], avals: Sequence[ShapedArray]) -> tuple[MaskTrace, Any]:
    """``fun`` on masked values (padded data with logical types; ``None``
    stays ``None``) under a fresh mask trace; returns the trace and the result."""
    trace = MaskTrace(env)
    with transformation(trace):
        ins = [None if v is None else trace.wrap(v, a) for v, a in zip(padded, avals)]
        return trace, fun(*ins)


def _zero_cotangents(env: MaskEnv, trace: MaskTrace, cts: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
    """Cotangents returned by a rule under ``trace``: padded data, padding zero."""
    out: list[Any] = []
    for ct, a in zip(cts, avals):
        if ct is None:
            out.append(None)
            continue
        out.append(env.fill(trace.unwrap(ct), a, None, 0))
    return out


def _padded_zeros(env: MaskEnv, aval: ShapedArray) -> Any:
    return ops.full(0, env.padded_shape(aval.shape), aval.dtype)


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


# ---------------------------------------------------------------------------
# custom_jvp_call


class MaskedJvpJaxprFun(_Masked):
    """``jvp_jaxpr_fun`` of a masked ``custom_jvp_call``: the user's JVP jaxpr, masked."""

    __slots__ = ()

    def __call__(self, in_nonzeros: Sequence[bool]) -> JvpJaxpr:
        self.check_unperturbed(in_nonzeros, "custom_jvp")
        nz = list(in_nonzeros)[self.num_lead :]

        def make() -> tuple[JvpJaxpr, ClosedJaxpr]:
            jj = self.inner(nz)
            body = self.stage(lambda env, padded: eval_masked(env, jj.jaxpr, padded), jj.jaxpr.in_avals)
            return JvpJaxpr(body, jj.out_nonzeros), body

        return _per_flags(self, nz, make)  # type: ignore[no-any-return]


def _custom_jvp_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, call_jaxpr: ClosedJaxpr, jvp_jaxpr_fun: Any,
    num_consts: int, symbolic_zeros: bool,
) -> list[Any]:  # fmt: skip
    body, lead = mask_jaxpr(env, call_jaxpr)
    lead_avals = body.in_avals[: len(lead)]
    fun = MaskedJvpJaxprFun(jvp_jaxpr_fun, env, lead_avals, call_jaxpr.in_avals, call_jaxpr.out_avals)
    return list(custom_jvp_call_p.bind(
        *lead, *vals, call_jaxpr=body, jvp_jaxpr_fun=fun, num_consts=len(lead) + num_consts,
        symbolic_zeros=symbolic_zeros,
    ))  # fmt: skip


masking_rules[custom_jvp_call_p] = _custom_jvp_rule


# ---------------------------------------------------------------------------
# custom_vjp_call


class MaskedFwdJaxprThunk(_Masked):
    """``fwd_jaxpr_thunk`` of a masked ``custom_vjp_call``: the user's forward
    jaxpr, masked, returning the logical sizes after the residuals."""

    __slots__ = ("latest",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.latest: FwdJaxpr | None = None

    def __call__(self, in_perturbed: Sequence[bool] | None = None) -> FwdJaxpr:
        self.check_unperturbed(in_perturbed, "custom_vjp")
        pert = None if in_perturbed is None else list(in_perturbed)[self.num_lead :]
        k = self.num_sizes

        def make() -> tuple[tuple[FwdJaxpr, FwdJaxpr], ClosedJaxpr]:
            fj = self.inner(pert)

            def fwd(env: MaskEnv, padded: Sequence[Any]) -> list[Any]:
                return [*eval_masked(env, fj.jaxpr, padded), *env.logical_values()]

            body = self.stage(fwd, fj.jaxpr.in_avals)
            return (fj, FwdJaxpr(body, fj.num_res + k, fj.out_tree, fj.res_tree)), body

        inner, out = _per_flags(self, pert, make)
        self.latest = inner
        return out  # type: ignore[no-any-return]


class MaskedBwd:
    """``bwd`` of a masked ``custom_vjp_call``: the user's backward rule under
    ``mask``, with the logical sizes the forward jaxpr returned as residuals."""

    __slots__ = ("__weakref__", "inner", "symbolic_zeros", "thunk")

    def __init__(self, inner: Callable[..., list[Any]], thunk: MaskedFwdJaxprThunk, symbolic_zeros: bool) -> None:
        self.inner, self.thunk, self.symbolic_zeros = inner, thunk, symbolic_zeros

    def __repr__(self) -> str:
        return f"masked({self.inner!r})"

    def __call__(self, *res_and_cts: Any) -> list[Any]:
        t = self.thunk
        if t.latest is None:
            t()
        fj = t.latest
        assert fj is not None
        nres, k, nout = fj.num_res, t.num_sizes, len(t.out_avals)
        env = t.env.rebind(list(res_and_cts[nres : nres + k]))
        res_avals = fj.jaxpr.out_avals[nout:]
        ct_avals = [to_tangent_type(a) for a in t.out_avals]
        cts = [
            _padded_zeros(env, a) if c is None and not self.symbolic_zeros else c
            for c, a in zip(res_and_cts[nres + k :], ct_avals)
        ]
        trace, result = _run_masked(env, self.inner, [*res_and_cts[:nres], *cts], [*res_avals, *ct_avals])
        return [None] * t.num_lead + _zero_cotangents(env, trace, result, t.in_avals)


def _custom_vjp_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, call_jaxpr: ClosedJaxpr, fwd_jaxpr_thunk: Any,
    bwd: Any, num_consts: int, out_trees: Any, symbolic_zeros: bool, optimize_remat: bool,
) -> list[Any]:  # fmt: skip
    body, lead = mask_jaxpr(env, call_jaxpr)
    lead_avals = body.in_avals[: len(lead)]
    thunk = MaskedFwdJaxprThunk(fwd_jaxpr_thunk, env, lead_avals, call_jaxpr.in_avals, call_jaxpr.out_avals)
    return list(custom_vjp_call_p.bind(
        *lead, *vals, call_jaxpr=body, fwd_jaxpr_thunk=thunk, bwd=MaskedBwd(bwd, thunk, symbolic_zeros),
        num_consts=len(lead) + num_consts, out_trees=out_trees, symbolic_zeros=symbolic_zeros,
        optimize_remat=optimize_remat,
    ))  # fmt: skip


masking_rules[custom_vjp_call_p] = _custom_vjp_rule


# ---------------------------------------------------------------------------
# custom_ivjp_call


class MaskedIvjp(_Masked):
    """``ivjp`` of a masked ``custom_ivjp_call``: the user's rule under ``mask``
    (the logical sizes are leading operands, always available)."""

    __slots__ = ()

    def __call__(self, xs: Sequence[Any], ys: Sequence[Any], dys: Sequence[Any] | None) -> tuple[list[Any], list[Any]]:
        nl = self.num_lead
        lead = list(xs[:nl])
        if any(x is None for x in lead[nl - self.num_sizes :]):
            raise ValueError(
                f"mask: the inverse-VJP rule of the custom_ivjp function {self.name} needs the logical sizes, "
                "but they are not available (a bug in the program being inverted)"
            )
        env = self.sizes_env(lead)
        nx, ny = len(self.in_avals), len(self.out_avals)
        ct_avals = [to_tangent_type(a) for a in self.out_avals]
        given = [] if dys is None else [_padded_zeros(env, a) if d is None else d for d, a in zip(dys, ct_avals)]

        def run(*flat: Any) -> Any:
            return self.inner(list(flat[:nx]), list(flat[nx : nx + ny]), None if dys is None else list(flat[nx + ny :]))

        trace, (new_xs, dxs) = _run_masked(
            env, run, [*xs[nl:], *ys, *given], [*self.in_avals, *self.out_avals, *ct_avals[: len(given)]]
        )
        out_xs = [None if x is None else trace.unwrap(x) for x in new_xs]
        return [*lead, *out_xs], [None] * nl + _zero_cotangents(env, trace, dxs, self.in_avals)


def _custom_ivjp_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, call_jaxpr: ClosedJaxpr, ivjp: Any,
    num_consts: int, **params: Any,
) -> list[Any]:  # fmt: skip
    body, lead = mask_jaxpr(env, call_jaxpr)
    rule = MaskedIvjp(ivjp, env, body.in_avals[: len(lead)], call_jaxpr.in_avals, call_jaxpr.out_avals)
    return list(custom_ivjp_call_p.bind(
        *lead, *vals, call_jaxpr=body, ivjp=rule, num_consts=len(lead) + num_consts, **params
    ))  # fmt: skip


masking_rules[custom_ivjp_call_p] = _custom_ivjp_rule


# ---------------------------------------------------------------------------
# custom_vmap_call


class MaskedVmapRule(_Masked):
    """``rule`` of a masked ``custom_vmap_call``: the user's batching rule under
    ``mask``.  The logical sizes must be the same for every element."""

    __slots__ = ()

    def __call__(self, axis_size: Any, in_batched: Sequence[bool], *ops: Any) -> tuple[list[Any], list[bool]]:
        nl, k = self.num_lead, self.num_sizes
        if any(in_batched[nl - k : nl]):
            batched = [n for n, b in zip(self.env.names, in_batched[nl - k : nl]) if b]
            raise NotImplementedError(
                f"mask: the custom_vmap function {self.name} is batched by a vmap outside mask that gives each "
                f"element its own logical size ({', '.join(batched)}); its batching rule expects a batch of "
                "values of one logical shape, so it cannot be used. Batch with the same logical sizes for "
                "every element, or apply vmap inside mask"
            )
        if any(in_batched[: nl - k]):
            raise TypeError(
                f"The custom_vmap function {self.name} closes over a value that vmap batches; that is not "
                "supported (its batching rule only sees the explicit arguments). Pass the value as an argument"
            )
        env = self.sizes_env(ops)
        flags = [bool(b) for b in in_batched[nl:]]
        avals = [a.update(shape=(axis_size, *a.shape)) if b else a for a, b in zip(self.in_avals, flags)]
        trace, (outs, out_batched) = _run_masked(env, lambda *xs: self.inner(axis_size, flags, *xs), ops[nl:], avals)
        return [trace.unwrap(o) for o in outs], list(out_batched)


def _custom_vmap_rule(
    env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, call_jaxpr: ClosedJaxpr, rule: Any,
    num_consts: int, **params: Any,
) -> list[Any]:  # fmt: skip
    body, lead = mask_jaxpr(env, call_jaxpr)
    masked = MaskedVmapRule(rule, env, body.in_avals[: len(lead)], call_jaxpr.in_avals, call_jaxpr.out_avals)
    return list(custom_vmap_call_p.bind(
        *lead, *vals, call_jaxpr=body, rule=masked, num_consts=len(lead) + num_consts, **params
    ))  # fmt: skip


masking_rules[custom_vmap_call_p] = _custom_vmap_rule
