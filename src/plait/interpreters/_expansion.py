"""What an extension primitive means as a plait program: its ``lower_fun`` function.

``mlir.register_lowering(p, mlir.lower_fun(f, multiple_results=...))`` says
that ``p`` computes what ``f`` computes with plait's own operations.  plait
uses that in three places: the StableHLO lowering (``jit`` and friends,
:mod:`plait.interpreters.mlir`), and the two interpreters that have no JAX
registration of their own, ``mask`` and ``vmap`` over piles (this module):
there the primitive is replaced by ``f``'s jaxpr, which they interpret
equation by equation.  A primitive without such a function is refused there
with an error naming it.

:func:`expansion_jaxpr` stages ``f`` for given operand types and params (once
per types and hashable params) and checks that it returns what the
primitive's abstract evaluation promises.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.extend._primitive import Primitive, on_new_primitive
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import ClosedJaxpr, ShapedArray, Tracer, get_aval, set_current_trace
from plait_core.jaxpr import eval_jaxpr
from plait_core.staging import trace_to_jaxpr
from plait_masking.env import MaskEnv
from plait_masking.registry import masking_rules
from plait_masking.trace import eval_masked

__all__ = ["LowerFun", "expansion_jaxpr", "expansion_of"]


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
    platform); ``NotImplementedError`` naming ``where`` when there is none."""
    rules = prim.lowerings
    found = None
    for key in (platform, "gpu" if platform in ("cuda", "rocm") else None, None):
        if key in rules:
            found = rules[key]
            break
    if found is None and platform is None and len(rules) == 1:
        found = next(iter(rules.values()))
    if found is None:
        on = f" for the platform {platform!r}" if platform is not None else ""
        raise NotImplementedError(
            f"{where}: the primitive {prim.name} has no lowering{on}; {where} runs the function f given by "
            f"mlir.register_lowering({prim.name}, mlir.lower_fun(f, multiple_results=...)), so register one"
        )
    if not isinstance(found, LowerFun):
        raise NotImplementedError(
            f"{where}: the lowering of the primitive {prim.name} is a hand-written MLIR rule ({_name(found)}), "
            "which builds StableHLO with JAX's MLIR Python bindings; plait writes its own StableHLO and cannot "
            f"run it. Register mlir.lower_fun(f, multiple_results=...) for {prim.name} instead, with f written "
            "with plait's (jax.numpy's) operations"
        )
    return found


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


def _mask_rule(prim: Primitive) -> Callable[..., Any]:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        closed = expansion_jaxpr(prim, expansion_of(prim, None, "mask"), avals, params)
        outs = eval_masked(env, closed, vals)
        return outs if prim.multiple_results else outs[0]

    return rule


def _ragged_rule(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    assert isinstance(prim, Primitive)
    avals = [x.aval if isinstance(x, Tracer) else get_aval(x) for x in args]
    closed = expansion_jaxpr(prim, expansion_of(prim, None, "vmap over piles"), avals, params)
    with set_current_trace(trace):
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return outs if prim.multiple_results else outs[0]


def _register(prim: Primitive) -> None:
    masking_rules[prim] = _mask_rule(prim)
    ragged_rules[prim] = _ragged_rule


on_new_primitive.append(_register)
