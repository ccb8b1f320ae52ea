"""``plait.Array`` (also ``plait.numpy.ndarray``): the type of plait arrays,
for ``isinstance`` checks and annotations, as ``jax.Array``/``jax.numpy.ndarray``.

plait arrays are of several classes: tracers inside transformations, typed
PRNG key arrays (``random.key``), and the concrete array types interpreters
register with core (:func:`plait_core.abstract.register_array_type`, e.g.
plait-dispatch's device array).  Core cannot name the latter (it does not
import the interpreters), so ``Array`` is an abstract class whose
``isinstance`` consults the registry when asked; the concrete classes need
not (and do not) inherit from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core.abstract import registered_array_types
from plait_core.prng import PRNGKeyArray
from plait_core.trace import Tracer, eager_backend, numpy_backend


def _array_classes() -> tuple[type, ...]:
    registered = registered_array_types()
    # While core's NumPy backend evaluates eagerly (no interpreter installed its
    # own), its results, NumPy arrays, are what plait arrays are.
    if eager_backend() is numpy_backend:
        return (Tracer, PRNGKeyArray, np.ndarray, *registered)
    return (Tracer, PRNGKeyArray, *registered)


class _ArrayMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, _array_classes())

    def __subclasscheck__(cls, subclass: type) -> bool:
        return subclass is cls or issubclass(subclass, _array_classes())


class Array(metaclass=_ArrayMeta):
    """The type of plait arrays (``plait.Array is plait.numpy.ndarray``).

    ``isinstance(x, Array)`` holds for tracers (values inside ``jit``,
    ``grad``, ``vmap``, ...), for typed key arrays (``random.key(0)``), for
    instances of the array types registered with core (plait-dispatch's device
    array: what eager operations return), and, while core's NumPy eager
    backend is in use (core alone, no interpreter installed), for NumPy
    arrays, which are what it returns.  NumPy arrays and Python scalars are
    not plait arrays once an interpreter is installed.  ``issubclass`` answers
    the same way for those classes.  It cannot be instantiated: build arrays
    with :func:`plait.numpy.array` or :func:`plait.numpy.asarray`."""

    # For static type checkers: what every plait array has.
    shape: tuple[Any, ...]
    dtype: Any
    ndim: int
    size: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Array:
        raise TypeError("plait.Array cannot be instantiated; use plait.numpy.array or asarray")


ndarray = Array

__all__ = ["Array", "ndarray"]
