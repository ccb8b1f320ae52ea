"""The registry of high-level value classes (``jax.experimental.hijax.register_hitype``):
class -> the function giving an instance's abstract value, which ``plait.typeof``
consults before plait's own abstract values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: value class -> ``typeof_fn(value)`` (see ``register_hitype``).
HITYPES: dict[type, Callable[[Any], Any]] = {}


def register_hitype(val_cls: type, typeof_fn: Callable[[Any], Any]) -> None:
    """Make ``plait.typeof(x)`` of an instance ``x`` of ``val_cls`` (exactly that
    class, as in JAX) return ``typeof_fn(x)``, a user-defined abstract value."""
    if not isinstance(val_cls, type):
        raise TypeError(f"register_hitype: expected a class, got {val_cls!r}")
    if not callable(typeof_fn):
        raise TypeError(f"register_hitype: typeof_fn must be callable, got {typeof_fn!r}")
    HITYPES[val_cls] = typeof_fn
