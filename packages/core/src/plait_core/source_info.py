"""Name stacks: the names of the scopes (``named_scope``, ``named_call``)
around the operations a program stages, as JAX records them.

Each thread has a current :class:`NameStack`; the context managers below
change it inside a ``with`` block.  Staging records the current stack in each
equation's ``source_info`` (a :class:`SourceInfo`), relative to the stack
when the staging began: ``make_jaxpr`` (or a ``jit`` traced) inside
``named_scope("outer")`` names its equations without ``outer``, as in JAX.
plait records no tracebacks (``SourceInfo.traceback`` is ``None``), and its
transformations do not rename the stacks (JAX's ``jvp(name)`` and
``transpose(jvp(name))`` under ``grad``): a differentiated equation keeps
the names of the one it comes from, or none.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NO_SOURCE_INFO",
    "NameStack",
    "SourceInfo",
    "current",
    "current_name_stack",
    "extend_name_stack",
    "new_name_stack",
    "reset_name_stack",
    "set_name_stack",
    "transform_name_stack",
]


@dataclass(frozen=True)
class NameStack:
    """Names of the scopes and transformations around a computation;
    ``str()`` joins them with ``/``."""

    stack: tuple[str, ...] = ()

    def extend(self, name: str | tuple[str, ...]) -> NameStack:
        """This stack with ``name`` (or several names) pushed."""
        return NameStack(self.stack + ((name,) if isinstance(name, str) else tuple(name)))

    def transform(self, name: str) -> NameStack:
        """This stack with the transformation ``name`` pushed (``jvp()`` style)."""
        return NameStack(self.stack + (f"{name}()",))

    def __len__(self) -> int:
        return len(self.stack)

    def __str__(self) -> str:
        return "/".join(self.stack)


@dataclass(frozen=True)
class SourceInfo:
    """Where a computation comes from: no traceback in plait, and the name stack."""

    traceback: Any = None
    name_stack: NameStack = field(default_factory=NameStack)

    def replace(self, *, traceback: Any = None, name_stack: NameStack | None = None) -> SourceInfo:
        """A copy with fields replaced."""
        return SourceInfo(self.traceback if traceback is None else traceback,
                          self.name_stack if name_stack is None else name_stack)  # fmt: skip

    def relative_to(self, base: NameStack) -> SourceInfo:
        """This source information with the leading names of ``base`` removed."""
        names = self.name_stack.stack
        if not base.stack or names[: len(base.stack)] != base.stack:
            return self
        return SourceInfo(self.traceback, NameStack(names[len(base.stack):]))


NO_SOURCE_INFO = SourceInfo()
"""The source information of an equation made outside any named scope."""


class _State(threading.local):
    def __init__(self) -> None:
        self.name_stack = NameStack()
        self.info = NO_SOURCE_INFO  # SourceInfo(None, name_stack), made once per change


_state = _State()


def current_name_stack() -> NameStack:
    """This thread's name stack."""
    return _state.name_stack


def state() -> _State:
    """This module's per-thread state: its ``info`` is what :func:`current`
    returns (staging reads it once per equation, without the call)."""
    return _state


def current() -> SourceInfo:
    """The source information of an equation staged now."""
    return _state.info


@contextmanager
def set_name_stack(name_stack: NameStack) -> Iterator[None]:
    """Make ``name_stack`` this thread's name stack inside the block."""
    if not isinstance(name_stack, NameStack):
        raise TypeError(f"set_name_stack takes a NameStack, got {type(name_stack).__name__}")
    prev, prev_info = _state.name_stack, _state.info
    _state.name_stack = name_stack
    _state.info = SourceInfo(None, name_stack) if name_stack.stack else NO_SOURCE_INFO
    try:
        yield
    finally:
        _state.name_stack, _state.info = prev, prev_info


@contextmanager
def extend_name_stack(name: str) -> Iterator[NameStack]:
    """Push ``name`` on the name stack inside the block."""
    new = _state.name_stack.extend(name)
    with set_name_stack(new):
        yield new


@contextmanager
def new_name_stack(name: str | None = None) -> Iterator[NameStack]:
    """An empty name stack (with ``name`` pushed, if given) inside the block."""
    new = NameStack() if name is None else NameStack().extend(name)
    with set_name_stack(new):
        yield new


@contextmanager
def reset_name_stack() -> Iterator[None]:
    """An empty name stack inside the block."""
    with set_name_stack(NameStack()):
        yield


@contextmanager
def transform_name_stack(name: str) -> Iterator[NameStack]:
    """Push the transformation ``name`` on the name stack inside the block."""
    new = _state.name_stack.transform(name)
    with set_name_stack(new):
        yield new
