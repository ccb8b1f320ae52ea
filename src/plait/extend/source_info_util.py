"""``jax.extend.source_info_util``: source information and name stacks.

plait keeps no source information or name stack in its jaxprs (errors name
the primitive and the operands instead, and plait does not filter its own
frames out of tracebacks), so this module keeps what libraries set and
read, without effect on programs:

* :func:`register_exclusion` records a path whose frames a traceback filter
  would hide (flax registers its own); :func:`excluded_paths` lists them;
* a :class:`NameStack` per thread, which :func:`extend_name_stack`,
  :func:`new_name_stack`, :func:`set_name_stack`, :func:`reset_name_stack`
  and :func:`transform_name_stack` change inside a ``with`` block and
  :func:`current_name_stack` reads;
* :func:`current` / :func:`new_source_info` give a :class:`SourceInfo` with
  that name stack and no traceback; :func:`user_context` is a context that
  changes nothing; :func:`summarize` describes a ``SourceInfo``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "NameStack",
    "SourceInfo",
    "current",
    "current_name_stack",
    "excluded_paths",
    "extend_name_stack",
    "new_name_stack",
    "new_source_info",
    "register_exclusion",
    "reset_name_stack",
    "set_name_stack",
    "summarize",
    "transform_name_stack",
    "user_context",
]

_exclusions: list[str] = []


def register_exclusion(path: str) -> None:
    """Record ``path`` as one whose frames a traceback filter hides."""
    if not isinstance(path, str):
        raise TypeError(f"register_exclusion takes a path (str), got {type(path).__name__}")
    if path not in _exclusions:
        _exclusions.append(path)


def excluded_paths() -> list[str]:
    """The paths recorded by :func:`register_exclusion`."""
    return list(_exclusions)


@dataclass(frozen=True)
class NameStack:
    """Names of the scopes and transformations around a computation."""

    stack: tuple[str, ...] = ()

    def extend(self, name: str | tuple[str, ...]) -> NameStack:
        """This stack with ``name`` (or several names) pushed."""
        return NameStack(self.stack + ((name,) if isinstance(name, str) else tuple(name)))

    def transform(self, name: str) -> NameStack:
        """This stack with the transformation ``name`` pushed (``jvp(...)`` style)."""
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


class _State(threading.local):
    def __init__(self) -> None:
        self.name_stack = NameStack()


_state = _State()


def current_name_stack() -> NameStack:
    """This thread's name stack."""
    return _state.name_stack


def current() -> SourceInfo:
    """The source information of a computation made now."""
    return SourceInfo(None, _state.name_stack)


def new_source_info() -> SourceInfo:
    """An empty source information."""
    return SourceInfo()


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """A one-line description (plait records no frames: the name stack, or "unknown")."""
    return str(source_info.name_stack) or "unknown"


@contextmanager
def set_name_stack(name_stack: NameStack) -> Iterator[None]:
    """Make ``name_stack`` this thread's name stack inside the block."""
    prev = _state.name_stack
    _state.name_stack = name_stack
    try:
        yield
    finally:
        _state.name_stack = prev


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


@contextmanager
def user_context(c: Any = None, *, name_stack: NameStack | None = None) -> Iterator[None]:
    """A context for user frames (``name_stack`` replaces the name stack inside it)."""
    if name_stack is None:
        yield
    else:
        with set_name_stack(name_stack):
            yield
