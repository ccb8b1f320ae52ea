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
primitives take), and ``pytype_aval_mappings``: Python type -> the function
giving a value's abstract value; setting an entry teaches plait a new array
type (``pytype_aval_mappings[MyArray] = pytype_aval_mappings[numpy.ndarray]``
makes ``MyArray`` values, read through ``numpy.asarray``, operands of every
primitive).  ``DropVar``, JAX's placeholder for an equation output nothing
reads, is a class no plait atom is an instance of: plait's jaxprs name every
output with a ``Var``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import numpy as np

from plait._jax_extras import ensure_compile_time_eval
from plait_core import dtypes
from plait_core.abstract import (
    _AVAL_OF,
    ShapedArray,
    _array_types,
    get_aval,
    is_known_value,
    register_array_type,
)
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




class DropVar:
    """JAX's variable for an equation output that nothing reads.  plait's
    jaxprs give every output a ``Var`` (``plait_core.jaxpr.Var``), so no atom of
    a plait jaxpr is a ``DropVar``: ``isinstance(atom, DropVar)`` is False, and
    making one raises ``NotImplementedError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("not supported: plait's jaxprs have no DropVar (every output is a Var)")


def _ndarray_aval(x: Any) -> ShapedArray:
    """The abstract value of a NumPy array (or of an ndarray-like with shape and dtype)."""
    return ShapedArray(tuple(x.shape), dtypes.canonicalize_dtype(x.dtype), False)


class _PytypeAvalMappings(MutableMapping[type, Callable[[Any], ShapedArray]]):
    """Python type -> function giving a value's abstract value (JAX's
    ``jax.core.pytype_aval_mappings``), backed by plait's own registry of array
    types (``plait_core.abstract``): setting an entry registers the type, whose
    values then convert to data with ``numpy.asarray``."""

    def __getitem__(self, t: type) -> Callable[[Any], ShapedArray]:
        if t is np.ndarray:
            return _ndarray_aval
        if t in _AVAL_OF:
            return _AVAL_OF[t]
        if t in _array_types:
            return _array_types[t].aval
        raise KeyError(t)

    def __setitem__(self, t: type, aval: Callable[[Any], ShapedArray]) -> None:
        if not isinstance(t, type) or not callable(aval):
            raise TypeError(f"pytype_aval_mappings: expected a type and a function, got {t!r} and {aval!r}")
        register_array_type(t, aval, np.asarray)

    def __delitem__(self, t: type) -> None:
        raise TypeError("pytype_aval_mappings: plait does not unregister array types")

    def __iter__(self) -> Iterator[type]:
        return iter([*_AVAL_OF, *(t for t in _array_types if t not in _AVAL_OF)])

    def __len__(self) -> int:
        return len(list(iter(self)))


pytype_aval_mappings = _PytypeAvalMappings()
"""Python type -> abstract-value function; setting an entry registers an array type."""


__all__ = [
    "DropVar",
    "InconclusiveDimensionOperation",
    "JaxprTypeError",
    "check_jaxpr",
    "concrete_or_error",
    "get_aval",
    "is_constant_dim",
    "is_constant_shape",
    "pytype_aval_mappings",
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
