"""``plait.stages``: the ahead-of-time stages of a jitted function (JAX's
``jax.stages``).

``jit(f).trace(*args)`` is a :class:`Traced` (its jaxpr, the structure of its
inputs and outputs), ``.lower()`` a :class:`Lowered` (StableHLO text via
``as_text()``), ``.compile()`` a :class:`Compiled`, callable on arguments of
the same types.  :class:`Wrapped` is the type of what ``jit`` returns (a
protocol: callable, with ``trace`` and ``lower``); :class:`ArgInfo` describes
one argument leaf of a stage; ``CompilerOptions`` is the type of the compiler
options a ``compile`` call accepts.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from plait_core.abstract import ShapedArray
from plait_dispatch.aot import Compiled, Lowered, Traced

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

CompilerOptions = dict[str, Any]
"""Options passed to the compiler (names to values)."""


@dataclasses.dataclass(frozen=True)
class ArgInfo:
    """One argument leaf of a stage: its abstract value and whether its buffer is donated."""

    _aval: ShapedArray
    donated: bool

    @property
    def shape(self) -> tuple[Any, ...]:
        """The leaf's shape."""
        return self._aval.shape

    @property
    def dtype(self) -> Any:
        """The leaf's dtype."""
        return self._aval.dtype


class Wrapped(Protocol):
    """A function wrapped by ``jit``: callable, and staged for one signature by
    ``trace(*args)`` / ``lower(*args)``."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered: ...
