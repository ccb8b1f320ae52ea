"""What an extension primitive means as a plait program: its ``lower_fun`` function.

``mlir.register_lowering(p, mlir.lower_fun(f, multiple_results=...))`` says
that ``p`` computes what ``f`` computes with plait's own operations.  plait
uses that in three places: the StableHLO lowering (``jit`` and friends,
:mod:`plait.interpreters.mlir`), and the two interpreters that have no JAX
registration of their own, ``mask`` and ``vmap`` over piles (this module):
there the primitive is replaced by ``f``'s jaxpr, which they interpret
equation by equation.  A hand-written rule stands for such a function when its
one operation is ``mlir.emit_python_callback``
(:mod:`plait.interpreters._hand_written`).  A primitive without either is
refused there with an error naming it.

So that a derivative taken outside ``mask`` (``grad(mask(f))``) or of a
pile's elements still uses the primitive's own JVP rule rather than the
derivative of ``f`` (they differ for a straight-through estimator, or for
equinox's ``nondifferentiable``), the jaxpr those two interpreters follow is
not ``f``'s itself but one ``custom_jvp_call`` of it whose JVP is the
primitive's rule (:class:`ExtensionJvp`).  ``mask`` and piles already
interpret ``custom_jvp_call`` by binding it again with its rule wrapped for
their sizes (``plait_core.rebound_rules``), which is what carries the rule
through.

:func:`expansion_jaxpr` stages ``f`` for given operand types and params (once
per types and hashable params) and checks that it returns what the
primitive's abstract evaluation promises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.extend._primitive import Primitive, is_extension, on_new_primitive
from plait.interpreters._hand_written import hand_written_fun
from plait_autodiff import Zero, jvp_rules
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import ClosedJaxpr, ShapedArray, Tracer, get_aval, set_current_trace, to_tangent_type
from plait_core.custom_derivatives import JvpJaxpr
from plait_core.jaxpr import eval_jaxpr
from plait_core.primitives.calls import custom_jvp_call_p, hoist_consts
from plait_core.staging import trace_to_jaxpr
from plait_dispatch import default_backend
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules
from plait_masking.trace import eval_masked

__all__ = ["ExtensionJvp", "LowerFun", "expansion_as_custom_jvp", "expansion_jaxpr", "expansion_of"]


class LowerFun:
    """A lowering given as a function of plait operations (``mlir.lower_fun``):
    ``fun(*operands, **params)`` returns the result, or a sequence of results
    when ``multiple_results``."""

    __slots__ = ("fun", "multiple_results")

    def __init__(self, fun: Callable[..., Any], multiple_results: bool) -> None:
        self.fun, self.multiple_results = fun, multiple_results

    def __call__(self, *args: Any, **params: Any) -> Any:
        raise TypeError(
            f"mlir.lower_fun({_name(self.fun)}) makes a lowering rule for plait's lowering; it is not called "
            "directly (register it with mlir.register_lowering)"
        )

    def __repr__(self) -> str:
        return f"lower_fun({_name(self.fun)}, multiple_results={self.multiple_results})"


def _name(f: Any) -> str:
    return str(getattr(f, "__name__", repr(f)))


def expansion_of(prim: Primitive, platform: str | None, where: str) -> LowerFun:
    """The ``lower_fun`` registered for ``prim`` on ``platform`` (or for every
    platform), or the hand-written rule registered there run as one (it is
    refused when run if it builds more than host callbacks);
    ``NotImplementedError`` naming ``where`` when there is none."""
    rules = prim.lowerings
    found = None
    for key in (platform, "gpu" if platform in ("cuda", "rocm") else None, None):
        if key in rules:
            found = rules[key]
            break
    if found is None:
        on = f" for the platform {platform!r}" if platform is not None else ""
        raise NotImplementedError(
            f"{where}: the primitive {prim.name} has no lowering{on}; {where} runs the function f given by "
            f"mlir.register_lowering({prim.name}, mlir.lower_fun(f, multiple_results=...)), so register one"
        )
    if not isinstance(found, LowerFun):
        try:
            adapted = _hand_written_cache.get((prim, found))
        except TypeError:  # an unhashable rule: adapted afresh each time
            return LowerFun(hand_written_fun(prim, found), True)
        if adapted is None:
            adapted = _hand_written_cache[(prim, found)] = LowerFun(hand_written_fun(prim, found), True)
        return adapted
    return found


#: A hand-written rule run as a function of plait operations (see
#: :mod:`plait.interpreters._hand_written`), one per primitive and rule, so that
#: :func:`expansion_jaxpr` stages it once per operand types and params.
_hand_written_cache: dict[tuple[Primitive, Any], LowerFun] = {}


_cache: dict[Any, ClosedJaxpr] = {}
_MAX_CACHED = 512


def expansion_jaxpr(
    prim: Primitive, lowering: LowerFun, avals: Sequence[ShapedArray], params: dict[str, Any]
) -> ClosedJaxpr:
    """``lowering``'s function staged for operands of types ``avals`` and these
    ``params``; a ``TypeError`` when it does not return what ``prim``'s abstract
    evaluation promises."""
    try:
        key: Any = (prim, lowering, tuple(avals), tuple(params.items()))
        hit = _cache.get(key)
    except TypeError:  # an unhashable param
        key, hit = None, None
    if hit is not None:
        return hit

    def flat(*xs: Any) -> list[Any]:
        out = lowering.fun(*xs, **params)
        if not lowering.multiple_results:
            return [out]
        if not isinstance(out, (list, tuple)):
            raise TypeError(
                f"the function given to mlir.lower_fun for {prim.name} (multiple_results=True) must return a "
                f"sequence, got {type(out).__name__}"
            )
        return list(out)

    closed = trace_to_jaxpr(flat, list(avals))
    promised = prim.abstract_eval(*avals, **params)
    promised = list(promised) if prim.multiple_results else [promised]
    got = closed.out_avals
    if len(got) != len(promised) or any(
        g.dtype != p.dtype or tuple(g.shape) != tuple(p.shape) for g, p in zip(got, promised)
    ):
        raise TypeError(
            f"the function given to mlir.lower_fun for {prim.name} returns "
            f"({', '.join(a.str_short() for a in got)}) for operands ({', '.join(a.str_short() for a in avals)}), "
            f"but the abstract evaluation of {prim.name} says ({', '.join(a.str_short() for a in promised)})"
        )
    if key is not None and not any(isinstance(c, Tracer) for c in closed.consts):
        if len(_cache) >= _MAX_CACHED:
            _cache.clear()
        _cache[key] = closed
    return closed


class ExtensionJvp:
    """``jvp_jaxpr_fun`` of the ``custom_jvp_call`` an extension primitive becomes
    under ``mask`` and piles: the primitive's JVP rule (plait-autodiff's
    registry) staged for the call's operand types.  The call's leading
    ``num_consts`` operands are the constants of the ``lower_fun`` jaxpr, which
    the rule does not see."""

    __slots__ = ("__weakref__", "_memo", "avals", "const_avals", "name", "params", "prim")

    def __init__(
        self, prim: Primitive, const_avals: Sequence[ShapedArray], avals: Sequence[ShapedArray], params: dict[str, Any]
    ) -> None:  # fmt: skip
        self.prim, self.name, self.params = prim, prim.name, params
        self.const_avals, self.avals = tuple(const_avals), tuple(avals)
        self._memo: dict[tuple[bool, ...], JvpJaxpr] = {}

    def __repr__(self) -> str:
        return f"jvp_jaxpr_fun({self.name})"

    def __call__(self, in_nonzeros: Sequence[bool]) -> JvpJaxpr:
        nz = tuple(bool(b) for b in in_nonzeros)
        hit = self._memo.get(nz)
        if hit is not None:
            return hit
        k, n, prim = len(self.const_avals), len(self.avals), self.prim
        if len(nz) != k + n or any(nz[:k]):
            raise ValueError(
                f"jvp_jaxpr_fun of {self.name}: bad flags {nz} for {k} constants and {n} operands"
            )
        flags = nz[k:]
        rule = jvp_rules[prim]  # the primitive's own refusal when it has none
        out_nz: list[bool] = []

        def fun(*xs: Any) -> list[Any]:
            given = iter(xs[k + n :])
            tangents = [next(given) if z else Zero(to_tangent_type(a)) for a, z in zip(self.avals, flags)]
            primal_out, tangent_out = rule(list(xs[k : k + n]), tangents, **self.params)
            primals = list(primal_out) if prim.multiple_results else [primal_out]
            outs = list(tangent_out) if prim.multiple_results else [tangent_out]
            out_nz[:] = [type(t) is not Zero for t in outs]
            return [*primals, *(t for t in outs if type(t) is not Zero)]

        tangent_avals = [to_tangent_type(a) for a, z in zip(self.avals, flags) if z]
        closed = trace_to_jaxpr(fun, [*self.const_avals, *self.avals, *tangent_avals])
        out = JvpJaxpr(closed, tuple(out_nz))
        if not any(isinstance(c, Tracer) for c in closed.consts):
            self._memo[nz] = out
        return out


def expansion_as_custom_jvp(
    prim: Primitive, where: str, avals: Sequence[ShapedArray], params: dict[str, Any]
) -> ClosedJaxpr:
    """A jaxpr over operands of types ``avals`` holding one ``custom_jvp_call``
    of ``prim``'s ``lower_fun`` function, with ``prim``'s JVP rule as its rule."""
    closed = expansion_jaxpr(prim, expansion_of(prim, default_backend(), where), avals, params)
    body, consts = hoist_consts(closed)
    jvp = ExtensionJvp(prim, body.in_avals[: len(consts)], avals, params)

    def fun(*xs: Any) -> list[Any]:
        outs = custom_jvp_call_p.bind(
            *consts, *xs, call_jaxpr=body, jvp_jaxpr_fun=jvp, num_consts=len(consts), symbolic_zeros=False
        )
        return list(outs)

    return trace_to_jaxpr(fun, list(avals))


def _mask_rule(prim: Primitive) -> Callable[..., Any]:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        closed = expansion_as_custom_jvp(prim, "mask", avals, params)
        outs = eval_masked(env, closed, vals)
        return outs if prim.multiple_results else outs[0]

    return rule


def _ragged_rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    assert is_extension(prim)
    avals = [x.aval if isinstance(x, Tracer) else get_aval(x) for x in args]
    closed = expansion_as_custom_jvp(prim, "vmap over piles", avals, params)
    with set_current_trace(trace):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return outs if prim.multiple_results else outs[0]


def _register(prim: Primitive) -> None:
    masking_rules[prim] = _mask_rule(prim)
    ragged_rules[prim] = _ragged_rule


on_new_primitive.append(_register)
