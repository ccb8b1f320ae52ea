"""Hand-written MLIR lowering rules plait can run: those that call back into Python.

A JAX lowering rule is a function ``rule(ctx, *operands, **params)`` of JAX's
lowering context that builds StableHLO with JAX's MLIR Python bindings and returns
the results' IR values.  plait writes its own StableHLO and has no such bindings,
but one kind of hand-written rule needs none: a rule whose only operation is
``mlir.emit_python_callback`` (equinox's ``noinline`` lowers that way, calling a
separately compiled function from the host).  Such a rule means "the results are
what this Python callback computes from the operands", which plait's own host
callbacks express.

So a hand-written rule is run as a function of plait operations, like a
``lower_fun`` function (:func:`hand_written_lowering`): the operands it receives
are plait's traced values, ``ctx`` is a :class:`LoweringRuleContext` holding what
such rules read (``avals_in``, ``avals_out``, ``module_context.add_keepalive``,
``primitive``), and :func:`emit_python_callback` binds plait's ``pure_callback``
(``io_callback`` when ``has_side_effect``) on them.  The staged result is lowered
in the equation's place like a ``lower_fun`` jaxpr.

Not supported (each a ``NotImplementedError`` naming the primitive and the rule):
a rule that reads anything else of the context or of ``jax.interpreters.mlir``
(``hlo.*`` operations, ``mlir.ir_constant``, tokens of ordered effects, ...), and
``emit_python_callback`` with a token or a sharding: those build MLIR that plait
cannot build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait.extend._primitive import Primitive
from plait_core import ShapedArray, ShapeDtypeStruct, Tracer, get_aval
from plait_core.host_callbacks import io_callback, pure_callback

__all__ = ["LoweringRuleContext", "ModuleContext", "emit_python_callback", "hand_written_fun"]


class ModuleContext:
    """The part of JAX's module context a callback-only rule uses: objects to keep
    alive while the compiled program lives (plait's callbacks keep their own
    functions alive, so these are only held)."""

    __slots__ = ("keepalives",)

    def __init__(self) -> None:
        self.keepalives: list[Any] = []

    def add_keepalive(self, keepalive: Any) -> None:
        """Hold ``keepalive`` as long as this context."""
        self.keepalives.append(keepalive)


class LoweringRuleContext:
    """The context a hand-written rule receives in plait: the primitive, its
    operands' and results' abstract values, and a :class:`ModuleContext`."""

    __slots__ = ("avals_in", "avals_out", "module_context", "primitive")

    def __init__(self, primitive: Primitive, avals_in: Sequence[ShapedArray], avals_out: Sequence[ShapedArray]) -> None:
        self.primitive = primitive
        self.avals_in = list(avals_in)
        self.avals_out = list(avals_out)
        self.module_context = ModuleContext()


def _refuse(ctx: LoweringRuleContext, what: str) -> NotImplementedError:
    return NotImplementedError(
        f"not supported: the hand-written MLIR lowering of the primitive {ctx.primitive.name} {what}; plait writes "
        "its own StableHLO and runs a hand-written rule only when its one operation is mlir.emit_python_callback "
        f"(register mlir.lower_fun(f, multiple_results=...) for {ctx.primitive.name} instead)"
    )


def emit_python_callback(
    ctx: LoweringRuleContext,
    callback: Callable[..., Any],
    token: Any,
    operands: Sequence[Any],
    operand_avals: Sequence[Any],
    result_avals: Sequence[Any],
    *,
    has_side_effect: bool,
    returns_token: bool = True,
    partitioned: bool = False,
    sharding: Any = None,
) -> tuple[list[Any], None, Callable[..., Any]]:
    """Inside a hand-written lowering rule run by plait: results computed on the host
    by ``callback(*operands)`` (NumPy arrays in, a sequence of arrays out, one per
    ``result_avals``).  A pure callback unless ``has_side_effect`` (then it always
    runs).  Returns ``(results, None, keepalive)`` as JAX's does (no token: plait
    orders no effects here, so a ``token`` other than ``None`` is refused, and so
    is a ``sharding``)."""
    if not isinstance(ctx, LoweringRuleContext):
        raise TypeError(
            f"emit_python_callback: ctx must be the context plait passed to the lowering rule, got {type(ctx).__name__}"
        )
    if token is not None:
        raise _refuse(ctx, "passes a token to emit_python_callback (ordered effects)")
    if sharding is not None:
        raise _refuse(ctx, "passes a sharding to emit_python_callback")
    if len(operands) != len(operand_avals):
        raise ValueError(
            f"emit_python_callback: {len(operands)} operands but {len(operand_avals)} operand avals "
            f"(lowering of {ctx.primitive.name})"
        )
    shapes = [ShapeDtypeStruct(tuple(a.shape), a.dtype) for a in result_avals]
    name = getattr(callback, "__name__", type(callback).__name__)

    def host(*args: Any) -> list[Any]:
        out = callback(*args)
        if not isinstance(out, (list, tuple)) or len(out) != len(shapes):
            raise RuntimeError(
                f"the Python callback {name} of {ctx.primitive.name}'s lowering must return a sequence of "
                f"{len(shapes)} arrays, got {type(out).__name__}"
                + (f" of length {len(out)}" if isinstance(out, (list, tuple)) else "")
            )
        return list(out)

    host.__name__ = name
    if has_side_effect:
        results = io_callback(host, shapes, *operands, ordered=False)
    else:
        results = pure_callback(host, shapes, *operands)
    return list(results), None, host


def hand_written_fun(prim: Primitive, rule: Callable[..., Any]) -> Callable[..., list[Any]]:
    """``rule`` as a function of plait operations: called with traced operands and
    the params, it runs ``rule`` with a :class:`LoweringRuleContext` and returns
    the list of results; a rule reading what plait does not offer is refused."""
    rule_name = getattr(rule, "__name__", repr(rule))

    def fun(*xs: Any, **params: Any) -> list[Any]:
        avals_in = [x.aval if isinstance(x, Tracer) else get_aval(x) for x in xs]
        promised = prim.abstract_eval(*avals_in, **params)
        avals_out = list(promised) if prim.multiple_results else [promised]
        ctx = LoweringRuleContext(prim, avals_in, avals_out)
        try:
            out = rule(ctx, *xs, **params)
        except AttributeError as err:
            raise _refuse(ctx, f"({rule_name}) uses what plait does not have: {err}") from err
        if not isinstance(out, (list, tuple)):
            raise TypeError(
                f"the lowering rule {rule_name} of {prim.name} must return a sequence of results, "
                f"got {type(out).__name__}"
            )
        return list(out)

    fun.__name__ = rule_name
    return fun
