"""``plait.core``: the names JAX 0.10.2 still exports from ``jax.core``.

Each is plait's object of the same meaning:

- ``ShapedArray``: plait's abstract value (shape, dtype, weak type);
  ``AbstractValue`` is the same class, since plait has no other kind of
  abstract value (``isinstance(aval, AbstractValue)`` holds for every one).
- ``Trace`` / ``Tracer``: plait's interpreter base class and the values a
  transformation sees (``isinstance(x, Tracer)`` tells a traced value from a
  concrete one, inside ``jit``, ``grad`` and ``vmap`` alike).
- ``Atom``: an operand of a jaxpr equation (a variable or a literal).
- ``ParamDict``: the parameters of an equation, a ``dict`` from names to values.
- ``Value``: any value a primitive takes (an annotation only).
- ``eval_jaxpr(jaxpr, consts, *args)``: evaluates an (open) jaxpr by binding
  its equations on the current trace, returning the list of outputs.
- ``ensure_compile_time_eval`` / ``eval_context``: a context in which
  operations on concrete values run eagerly even under ``jit``.
- ``max_dim`` / ``min_dim``: the larger / smaller of two dimensions, symbolic
  ones included (an ``InconclusiveDimensionOperation`` when it depends on the
  sizes).

JAX 0.10.2 also still answers some deprecated names of ``jax.core`` (outside
``dir()``); those plait has with the same meaning are here too:
``get_aval(x)`` (the abstract value of a value), ``concrete_or_error(force,
x, context)`` (``x``'s concrete value, or a ``ConcretizationTypeError``
naming ``context``), ``check_jaxpr`` and ``JaxprTypeError``,
``InconclusiveDimensionOperation``, ``is_constant_dim`` /
``is_constant_shape``, ``valid_jaxtype`` (whether a value is one plait's
primitives take).
"""

from __future__ import annotations

from typing import Any

from plait._jax_extras import ensure_compile_time_eval
from plait_core.abstract import ShapedArray, get_aval, is_known_value
from plait_core.dims import InconclusiveDimensionOperation, is_constant_dim, max_dim, min_dim
from plait_core.jaxpr import Atom, JaxprTypeError, check_jaxpr, eval_jaxpr
from plait_core.trace import Trace, Tracer
from plait_core.trace import concrete_or_error as _concrete_or_error

AbstractValue = ShapedArray
"""plait's only kind of abstract value (JAX's base class of abstract values)."""

ParamDict = dict[str, Any]
"""The parameters of a jaxpr equation."""

Value = Any
"""Any value a primitive accepts (an annotation)."""

eval_context = ensure_compile_time_eval
"""JAX's older name of :func:`ensure_compile_time_eval`."""



def concrete_or_error(force: Any, val: Any, context: str = "") -> Any:
    """``val``'s concrete value (``force(value)`` when ``force`` is given), or a
    ``ConcretizationTypeError`` naming ``context`` when ``val`` is traced."""
    value = _concrete_or_error(val, context or "this value")
    return value if force is None else force(value)


def is_constant_shape(shape: Any) -> bool:
    """Whether every dimension of ``shape`` is a known integer."""
    return all(is_constant_dim(d) for d in shape)


def valid_jaxtype(x: Any) -> bool:
    """Whether ``x`` is a value plait's primitives take (an array, a tracer, a scalar)."""
    return isinstance(x, Tracer) or is_known_value(x)


__all__ = [
    "InconclusiveDimensionOperation",
    "JaxprTypeError",
    "check_jaxpr",
    "concrete_or_error",
    "get_aval",
    "is_constant_dim",
    "is_constant_shape",
    "valid_jaxtype",
    "AbstractValue",
    "Atom",
    "ParamDict",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "ensure_compile_time_eval",
    "eval_context",
    "eval_jaxpr",
    "max_dim",
    "min_dim",
]
