"""``jax.interpreters.ad`` for extension primitives: their JVP and transpose rules.

plait-autodiff calls its JVP rules as JAX calls the rules of
``primitive_jvps`` (``rule(primals, tangents, **params) -> (primal_out,
tangent_out)``, symbolic zeros as :class:`Zero`) and its transpose rules as
JAX calls those of ``primitive_transposes`` (``rule(ct, *operands, **params)
-> one cotangent per operand``, linear operands as :class:`UndefinedPrimal`,
``None`` or a ``Zero`` for none).  So each table here is a view of
plait-autodiff's registry (:mod:`plait.interpreters._tables`): a rule set
for an extension primitive is registered there, behind a check of what it
returns, and from then on ``jvp``, ``grad``, ``linearize``, ``vjp`` and
``linear_transpose`` use it, under ``jit`` and ``vmap`` too.

``Zero``, ``UndefinedPrimal``, ``instantiate_zeros``, ``is_undefined_primal``
are plait-autodiff's own, so ``type(t) is ad.Zero`` is what a rule receives.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from plait.extend._primitive import Primitive, on_new_primitive
from plait.interpreters._tables import RuleTable, check_primitive
from plait_autodiff import JVPTrace, JVPTracer, UndefinedPrimal, Zero, jvp_rules, transpose_rules
from plait_autodiff.tangents import add_tangents, instantiate, zeros_of
from plait_autodiff.transpose import is_undefined
from plait_core import Primitive as AnyPrimitive
from plait_core.primitives.ad_helpers import add_any_p

__all__ = [
    "JVPTrace",
    "JVPTracer",
    "UndefinedPrimal",
    "Zero",
    "add_jaxvals",
    "add_jaxvals_p",
    "add_tangents",
    "defbilinear",
    "defjvp",
    "defjvp2",
    "deflinear",
    "deflinear2",
    "get_primitive_transpose",
    "instantiate_zeros",
    "is_undefined_primal",
    "primitive_jvps",
    "primitive_transposes",
    "zeros_like_aval",
]

JaxRule = Callable[..., Any]

#: JAX's name for the primitive that adds tangents (plait's ``add_any``).
add_jaxvals_p = add_any_p


def add_jaxvals(x: Any, y: Any) -> Any:
    """The sum of two tangents (``add_any``)."""
    return add_any_p.bind(x, y)


def instantiate_zeros(tangent: Any) -> Any:
    """``tangent`` as an array: a symbolic :class:`Zero` becomes zeros of its type."""
    return instantiate(tangent)


def is_undefined_primal(x: Any) -> bool:
    """Whether ``x`` is a linear operand of a transpose rule (an :class:`UndefinedPrimal`)."""
    return is_undefined(x)


def zeros_like_aval(aval: Any) -> Any:
    """An array of zeros of the abstract value ``aval``."""
    return zeros_of(aval)


def _jvp_adapter(prim: AnyPrimitive, rule: JaxRule) -> JaxRule:
    def jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        out = rule(primals, tangents, **params)
        if not (isinstance(out, (tuple, list)) and len(out) == 2):
            raise TypeError(
                f"the JVP rule of {prim.name} must return (primal_out, tangent_out), got {_describe(out)}"
            )
        primal_out, tangent_out = out
        if not prim.multiple_results:
            return primal_out, tangent_out
        if not (isinstance(primal_out, (list, tuple)) and isinstance(tangent_out, (list, tuple))):
            raise TypeError(
                f"the JVP rule of {prim.name} (multiple_results) must return two sequences, got "
                f"{_describe(primal_out)} and {_describe(tangent_out)}"
            )
        if len(primal_out) != len(tangent_out):
            raise ValueError(
                f"the JVP rule of {prim.name} returned {len(primal_out)} primal outputs and "
                f"{len(tangent_out)} tangents"
            )
        return list(primal_out), list(tangent_out)

    jvp.__name__ = f"jvp_of_{prim.name}"
    return jvp


def _transpose_adapter(prim: AnyPrimitive, rule: JaxRule) -> JaxRule:
    def transpose(ct: Any, *operands: Any, **params: Any) -> list[Any]:
        cts = rule(ct, *operands, **params)
        if not isinstance(cts, (list, tuple)):
            raise TypeError(
                f"the transpose rule of {prim.name} must return a sequence with one cotangent (or None) per "
                f"operand, got {_describe(cts)}"
            )
        if len(cts) != len(operands):
            raise ValueError(
                f"the transpose rule of {prim.name} returned {len(cts)} cotangents for {len(operands)} operands"
            )
        return [None if c is None or type(c) is Zero else c for c in cts]

    transpose.__name__ = f"transpose_of_{prim.name}"
    return transpose


def _describe(x: Any) -> str:
    return (
        f"a {type(x).__name__}" if not isinstance(x, (list, tuple)) else f"a {type(x).__name__} of {len(x)}"
    )


#: ``primitive_jvps[p] = rule``: ``rule(primals, tangents, **params) -> (primal_out, tangent_out)``.
primitive_jvps = RuleTable("ad.primitive_jvps", jvp_rules, _jvp_adapter, shares_convention=True)

#: ``primitive_transposes[p] = rule``: ``rule(ct, *operands, **params) -> cotangents``.
primitive_transposes = RuleTable("ad.primitive_transposes", transpose_rules, _transpose_adapter, True)


def get_primitive_transpose(prim: Any) -> JaxRule:
    """The transpose rule of ``prim``; ``NotImplementedError`` when it has none."""
    rule = primitive_transposes.get(prim)
    if rule is None:
        raise NotImplementedError(f"the primitive {getattr(prim, 'name', prim)} has no transpose rule")
    return rule


def _single_result(prim: AnyPrimitive, what: str) -> None:
    if prim.multiple_results:
        raise ValueError(
            f"{what}: {prim.name} has multiple results; register its JVP with "
            f"ad.primitive_jvps[{prim.name}] = rule instead"
        )


def defjvp(prim: AnyPrimitive, *jvp_fns: JaxRule | None) -> None:
    """The JVP of the single-result primitive ``prim`` as a sum over operands:
    ``jvp_fns[i](tangent_i, *primals, **params)`` is operand ``i``'s
    contribution (``None``: the operand does not matter).  As in JAX, operands
    past the last function contribute nothing."""
    prim = check_primitive(prim, "ad.defjvp")
    _single_result(prim, "ad.defjvp")
    primitive_jvps[prim] = functools.partial(_standard_jvp, prim, jvp_fns, False)


def defjvp2(prim: AnyPrimitive, *jvp_fns: JaxRule | None) -> None:
    """As :func:`defjvp`, each function also given the primal output:
    ``jvp_fns[i](tangent_i, primal_out, *primals, **params)``."""
    prim = check_primitive(prim, "ad.defjvp2")
    _single_result(prim, "ad.defjvp2")
    primitive_jvps[prim] = functools.partial(_standard_jvp, prim, jvp_fns, True)


def _standard_jvp(
    prim: AnyPrimitive, jvp_fns: Sequence[JaxRule | None], with_out: bool, primals: Sequence[Any],
    tangents: Sequence[Any], **params: Any,
) -> tuple[Any, Any]:  # fmt: skip
    out = prim.bind(*primals, **params)
    total: Any = Zero.from_primal_value(out)
    for fn, t in zip(jvp_fns, tangents):
        if fn is None or type(t) is Zero:
            continue
        part = fn(t, out, *primals, **params) if with_out else fn(t, *primals, **params)
        total = add_tangents(total, part)
    return out, total


def _linear_jvp(
    prim: AnyPrimitive, primals: Sequence[Any], tangents: Sequence[Any], **params: Any
) -> tuple[Any, Any]:
    out = prim.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
        zeros = (
            [Zero.from_primal_value(o) for o in out] if prim.multiple_results else Zero.from_primal_value(out)
        )
        return out, zeros
    return out, prim.bind(*[instantiate(t) for t in tangents], **params)


def _zero_cotangents(operands: Sequence[Any]) -> list[Any]:
    return [Zero.from_primal_aval(x.aval) if is_undefined(x) else None for x in operands]


def _linear_transpose(rule: JaxRule, with_operands: bool, ct: Any, *operands: Any, **params: Any) -> Any:
    if type(ct) is Zero:
        return _zero_cotangents(operands)
    return rule(ct, *operands, **params) if with_operands else rule(ct, **params)


def deflinear(prim: AnyPrimitive, transpose_rule: JaxRule) -> None:
    """``prim`` is linear in all its operands: its JVP applies it to the
    tangents, and ``transpose_rule(ct, **params)`` gives one cotangent per operand."""
    prim = check_primitive(prim, "ad.deflinear")
    primitive_jvps[prim] = functools.partial(_linear_jvp, prim)
    primitive_transposes[prim] = functools.partial(_linear_transpose, transpose_rule, False)


def deflinear2(prim: AnyPrimitive, transpose_rule: JaxRule) -> None:
    """As :func:`deflinear`, the transpose rule also given the operands
    (``UndefinedPrimal`` for the linear ones): ``transpose_rule(ct, *operands, **params)``."""
    prim = check_primitive(prim, "ad.deflinear2")
    primitive_jvps[prim] = functools.partial(_linear_jvp, prim)
    primitive_transposes[prim] = functools.partial(_linear_transpose, transpose_rule, True)


def defbilinear(prim: AnyPrimitive, lhs_rule: JaxRule, rhs_rule: JaxRule) -> None:
    """``prim(x, y)`` is linear in each operand separately: its JVP is
    ``prim(tx, y) + prim(x, ty)``; ``lhs_rule(ct, x, y, **params)`` is the
    cotangent of ``x`` (``x`` undefined), ``rhs_rule`` that of ``y``."""
    prim = check_primitive(prim, "ad.defbilinear")

    def lhs_jvp(t: Any, x: Any, y: Any, **params: Any) -> Any:
        return prim.bind(t, y, **params)

    def rhs_jvp(t: Any, x: Any, y: Any, **params: Any) -> Any:
        return prim.bind(x, t, **params)

    defjvp(prim, lhs_jvp, rhs_jvp)

    def transpose(ct: Any, x: Any, y: Any, **params: Any) -> list[Any]:
        if is_undefined(x) == is_undefined(y):
            raise TypeError(f"cannot transpose {prim.name} with respect to both or neither of its operands")
        if type(ct) is Zero:
            return _zero_cotangents([x, y])
        if is_undefined(x):
            return [lhs_rule(ct, x, y, **params), None]
        return [None, rhs_rule(ct, x, y, **params)]

    primitive_transposes[prim] = transpose


def _register(prim: Primitive) -> None:
    how = f"ad.defjvp({prim.name}, ...) or ad.primitive_jvps[{prim.name}] = rule"
    jvp_rules.not_supported(prim, f"no JVP rule was registered for the primitive {prim.name} (use {how})")
    transpose_rules.not_supported(
        prim,
        f"no transpose rule was registered for the primitive {prim.name} (use ad.primitive_transposes"
        f"[{prim.name}] = rule or ad.deflinear2)",
    )


on_new_primitive.append(_register)
