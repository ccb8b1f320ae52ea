"""``jax.interpreters.xla``: what is left of it in JAX 0.10 that libraries use.

``canonicalize_dtype_handlers`` maps a Python type to the function that
turns its values into NumPy arrays of canonical dtype (float64 to float32
while x64 is off, ...).  Adding a type (tensorflow-probability adds its
NumPy-backed variables) also teaches plait-core the type as an array type
(``plait_core.register_array_type``), so its values can be passed to plait's
operations.  ``apply_primitive(p, *args, **params)`` binds ``p`` eagerly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import numpy as np

from plait.extend._primitive import is_extension
from plait.interpreters._expansion import expansion_of
from plait_core import ShapedArray, dtypes, eager_backend, get_aval, register_array_type
from plait_core.primitive import Primitive
from plait_dispatch import default_backend

__all__ = ["apply_primitive", "canonicalize_dtype_handlers"]


def _canonicalize(x: Any) -> np.ndarray:
    arr = np.asarray(x)
    return arr.astype(dtypes.canonicalize_dtype(arr.dtype), copy=False)


class _Handlers(MutableMapping[type, Callable[[Any], Any]]):
    def __init__(self) -> None:
        self._table: dict[type, Callable[[Any], Any]] = {np.ndarray: _canonicalize}
        for t in (bool, int, float, complex):
            self._table[t] = _canonicalize

    def __getitem__(self, t: type) -> Callable[[Any], Any]:
        return self._table[t]

    def __setitem__(self, t: type, handler: Callable[[Any], Any]) -> None:
        if not isinstance(t, type) or not callable(handler):
            raise TypeError("canonicalize_dtype_handlers maps a type to a function")
        self._table[t] = handler
        if t not in (np.ndarray, bool, int, float, complex):
            register_array_type(t, lambda x: _aval(handler(x)), lambda x: np.asarray(handler(x)))

    def __delitem__(self, t: type) -> None:
        del self._table[t]

    def __iter__(self) -> Iterator[type]:
        return iter(self._table)

    def __len__(self) -> int:
        return len(self._table)


def _aval(x: Any) -> ShapedArray:
    a = get_aval(x)
    return ShapedArray(a.shape, a.dtype, a.weak_type)


#: Per type, the function making its values canonical NumPy arrays.
canonicalize_dtype_handlers: MutableMapping[type, Callable[[Any], Any]] = _Handlers()


def apply_primitive(prim: Primitive, *args: Any, **params: Any) -> Any:
    """Evaluate ``prim`` eagerly on concrete ``args`` (plait's eager backend:
    compiled by XLA through its lowering).  ``p.def_impl(functools.partial(
    apply_primitive, p))`` makes an extension primitive run its ``lower_fun``
    function eagerly; without one that is a ``NotImplementedError`` naming it."""
    if is_extension(prim):
        expansion_of(prim, default_backend(), "apply_primitive")
        if prim in _applying.prims:
            raise NotImplementedError(
                f"apply_primitive: {prim.name} could not be compiled, and its implementation is apply_primitive "
                "itself, so there is nothing else to run"
            )
        _applying.prims.add(prim)
        try:
            return eager_backend()(prim, args, dict(params))
        finally:
            _applying.prims.discard(prim)
    return eager_backend()(prim, args, dict(params))


class _Applying(threading.local):
    def __init__(self) -> None:
        self.prims: set[Primitive] = set()


_applying = _Applying()
