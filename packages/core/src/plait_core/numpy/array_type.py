"""``plait.numpy.ndarray``: the type of plait arrays, for ``isinstance`` checks
and annotations (as ``jax.numpy.ndarray``).

plait arrays are of several classes: tracers inside transformations, and the
concrete array types interpreters register with core
(:func:`plait_core.abstract.register_array_type`, e.g. plait-dispatch's
``Array``).  Core cannot name the latter (it does not import the interpreters),
so ``ndarray`` is an abstract class whose ``isinstance`` consults the registry
when asked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core.abstract import registered_array_types
from plait_core.trace import Tracer, eager_backend, numpy_backend


def _array_classes() -> tuple[type, ...]:
    registered = registered_array_types()
    # While core's NumPy backend evaluates eagerly (no interpreter installed its
    # own), its results, NumPy arrays, are what plait arrays are.
    if eager_backend() is numpy_backend:
        return (Tracer, np.ndarray, *registered)
    return (Tracer, *registered)


class _ArrayMeta(type):
    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, _array_classes())

    def __subclasscheck__(cls, subclass: type) -> bool:
        return subclass is cls or issubclass(subclass, _array_classes())


class ndarray(metaclass=_ArrayMeta):
    """The type of plait arrays: ``isinstance(x, ndarray)`` holds for tracers and
    for instances of the array types registered with core (plait-dispatch's
    ``Array``), and, while core's NumPy eager backend is in use (core alone, no
    interpreter installed), for NumPy arrays, which are what it returns.  It cannot be instantiated: build arrays
    with :func:`plait.numpy.array` or :func:`plait.numpy.asarray`."""

    def __new__(cls, *args: Any, **kwargs: Any) -> ndarray:
        raise TypeError("plait.numpy.ndarray cannot be instantiated; use plait.numpy.array or asarray")


__all__ = ["ndarray"]
