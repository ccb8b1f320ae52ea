"""``jax.interpreters.mlir`` for extension primitives: lowerings given as functions.

plait lowers jaxprs to StableHLO text itself (plait-dispatch), so the one
form of lowering it can take from a library is a function of plait's own
operations: :func:`lower_fun`.  ``register_lowering(p, lower_fun(f,
multiple_results=...), platform=None)`` records it on the primitive; when a
jaxpr holding ``p`` is compiled (``jit``, ``pmap``, a staged program run
eagerly), ``f`` is staged for the equation's operand types and params and the
resulting jaxpr is lowered in the equation's place.  The same function is
what ``mask`` and ``vmap`` over piles follow (:mod:`plait.interpreters._expansion`).

A hand-written rule (a function of JAX's lowering context building MLIR with
JAX's Python bindings) is recorded, so a library registering one imports.  When
its one operation is :func:`emit_python_callback` (equinox's ``noinline``), plait
runs it as a function of its own operations: the callback becomes plait's
``pure_callback`` (``io_callback`` with ``has_side_effect``) on the operands
(:mod:`plait.interpreters._hand_written`).  A rule reading anything else (``hlo``
operations, ``ir_constant``, effect tokens) is refused with ``NotImplementedError``
("not supported: ...") naming the primitive, when the primitive is lowered.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.extend._primitive import Primitive, is_extension, on_new_primitive
from plait.interpreters._expansion import LowerFun, expansion_jaxpr, expansion_of
from plait.interpreters._hand_written import LoweringRuleContext, ModuleContext, emit_python_callback
from plait_dispatch.lowering import RuleContext, Value, lowering_rules
from plait_dispatch.lowering.context import lower_closed_jaxpr

__all__ = [
    "LowerFun", "LoweringRuleContext", "ModuleContext", "emit_python_callback", "lower_fun", "register_lowering",
]

_PLATFORMS = frozenset({"cpu", "cuda", "rocm", "tpu", "gpu"})


def lower_fun(fun: Callable[..., Any], multiple_results: bool = True) -> LowerFun:
    """A lowering rule computing what ``fun(*operands, **params)`` computes with
    plait's operations (as JAX's ``lower_fun``, ``multiple_results`` defaults
    to ``True``: then ``fun`` returns a sequence of results)."""
    if not callable(fun):
        raise TypeError(f"lower_fun takes a function, got {type(fun).__name__}")
    return LowerFun(fun, bool(multiple_results))


def register_lowering(
    prim: Primitive, rule: Callable[..., Any], platform: str | None = None, **options: Any
) -> Callable[..., Any]:
    """Register ``rule`` as the lowering of the extension primitive ``prim`` on
    ``platform`` (``None``: every platform).  ``rule`` should be made by
    :func:`lower_fun`; a hand-written rule runs only if its one operation is
    :func:`emit_python_callback`, and is refused when used otherwise (see the
    module's docstring).  JAX's options (``inline``, ``cacheable``) change
    nothing here: the function is always inlined, and staged once per operand
    types and params."""
    if not is_extension(prim):
        raise TypeError(
            f"register_lowering: {prim!r} is not a primitive made with plait.extend.core.Primitive (plait's own "
            "primitives are lowered by plait-dispatch)"
        )
    if not callable(rule):
        raise TypeError(
            f"register_lowering: the rule for {prim.name} must be callable, got {type(rule).__name__}"
        )
    if platform is not None and platform not in _PLATFORMS:
        raise ValueError(
            f"register_lowering: unknown platform {platform!r} for {prim.name}; expected one of "
            f"{', '.join(sorted(_PLATFORMS))} or None"
        )
    unknown = set(options) - {"inline", "cacheable"}
    if unknown:
        raise TypeError(f"register_lowering: unexpected keyword arguments {sorted(unknown)}")
    prim.lowerings[platform] = rule
    return rule


def _lowering_rule(ctx: RuleContext, *args: Value, **params: Any) -> Sequence[Value]:
    prim = ctx.primitive
    assert is_extension(prim)
    lowering = expansion_of(prim, ctx.platform, "jit (lowering to XLA)")
    closed = expansion_jaxpr(prim, lowering, ctx.avals_in, params)
    return lower_closed_jaxpr(ctx, closed, args)


def _register(prim: Primitive) -> None:
    lowering_rules[prim] = _lowering_rule


on_new_primitive.append(_register)
