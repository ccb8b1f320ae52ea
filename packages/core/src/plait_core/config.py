"""Global configuration flags of plait.

Flags are read on hot paths, so they live as plain attributes of one object.
`x64` follows JAX's meaning: when it is off (the default), 64-bit dtypes are
canonicalised to their 32-bit counterparts and Python floats default to
``float32``.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any, ClassVar


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


class Config:
    """The mutable set of global flags (one instance: :data:`config`)."""

    def __init__(self) -> None:
        self.x64_enabled: bool = _env_flag("PLAIT_ENABLE_X64", False)
        self.explain_cache_misses: bool = _env_flag("PLAIT_EXPLAIN_CACHE_MISSES", False)
        self.check_tracer_leaks: bool = True
        self.jit_disabled: bool = _env_flag("PLAIT_DISABLE_JIT", False)

    _ALIASES: ClassVar[dict[str, str]] = {
        "enable_x64": "x64_enabled",
        "x64_enabled": "x64_enabled",
        "explain_cache_misses": "explain_cache_misses",
        "check_tracer_leaks": "check_tracer_leaks",
        "disable_jit": "jit_disabled",
    }

    def update(self, name: str, value: Any) -> None:
        """Set a flag by name; JAX's ``jax_`` and our ``plait_`` prefixes are accepted.

        Example: ``config.update("jax_enable_x64", True)``.
        """
        key = name
        for prefix in ("jax_", "plait_"):
            if key.startswith(prefix):
                key = key[len(prefix):]
        attr = self._ALIASES.get(key)
        if attr is None:
            known = ", ".join(sorted(self._ALIASES))
            raise AttributeError(f"unknown configuration option {name!r}; known options: {known}")
        setattr(self, attr, bool(value))
        if attr == "x64_enabled":
            from plait_core import dtypes

            dtypes._on_x64_change()

    def read(self, name: str) -> Any:
        """Return the current value of a flag (same names as :meth:`update`)."""
        key = name
        for prefix in ("jax_", "plait_"):
            if key.startswith(prefix):
                key = key[len(prefix):]
        attr = self._ALIASES.get(key)
        if attr is None:
            raise AttributeError(f"unknown configuration option {name!r}")
        return getattr(self, attr)


config = Config()


@contextlib.contextmanager
def enable_x64(enabled: bool = True) -> Iterator[None]:
    """Context manager turning 64-bit types on (or off) inside its block."""
    previous = config.x64_enabled
    config.update("enable_x64", enabled)
    try:
        yield
    finally:
        config.update("enable_x64", previous)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Context manager under which jitted functions run their Python body
    directly, operation by operation (for debugging with prints and
    breakpoints); donation is then ignored.  Also ``config.update("jax_disable_jit", True)``
    or ``$PLAIT_DISABLE_JIT=1``."""
    previous = config.jit_disabled
    config.update("disable_jit", disable)
    try:
        yield
    finally:
        config.update("disable_jit", previous)
