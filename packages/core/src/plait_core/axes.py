"""The named-axis environment: which axis names are bound here, and their sizes.

``vmap(..., axis_name=...)`` (and ``make_jaxpr(axis_env=...)``) push frames;
collectives (``psum``, ``axis_index``, ...) look their axis names up here and
raise :class:`~plait_core.errors.UnboundAxisNameError` for unbound names.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from plait_core.errors import UnboundAxisNameError


class _AxisEnv(threading.local):
    def __init__(self) -> None:
        self.frames: list[tuple[Hashable, Any]] = []


_env = _AxisEnv()


@contextmanager
def extend_axis_env(frames: Sequence[tuple[Hashable, Any]]) -> Iterator[None]:
    """Bind axis names to sizes inside the block (innermost binding wins)."""
    n = len(_env.frames)
    _env.frames.extend(frames)
    try:
        yield
    finally:
        del _env.frames[n:]


def axis_frame_size(name: Hashable, what: str = "a collective") -> Any:
    """The size bound to ``name``; ``UnboundAxisNameError`` if none is."""
    for n, size in reversed(_env.frames):
        if n == name:
            return size
    bound = ", ".join(repr(n) for n, _ in _env.frames) or "none"
    raise UnboundAxisNameError(
        f"{what} uses the axis name {name!r}, which is not bound here (bound axis names: "
        f"{bound}); bind it with vmap(..., axis_name={name!r})"
    )


def bound_axis_names() -> tuple[Hashable, ...]:
    """The bound axis names, outermost first."""
    return tuple(n for n, _ in _env.frames)
