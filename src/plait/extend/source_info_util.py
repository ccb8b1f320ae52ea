"""``jax.extend.source_info_util``: source information and name stacks.

The name stack is core's (:mod:`plait_core.source_info`): the names pushed
here (and by ``named_scope`` / ``named_call``) are recorded in the
equations staged inside the block (``eqn.source_info.name_stack``), as in
JAX.  plait records no tracebacks and does not filter its own frames out of
them, so this module also keeps what libraries set without effect:

* :func:`register_exclusion` records a path whose frames a traceback filter
  would hide (flax registers its own); :func:`excluded_paths` lists them;
* :func:`extend_name_stack`, :func:`new_name_stack`, :func:`set_name_stack`,
  :func:`reset_name_stack` and :func:`transform_name_stack` change the
  thread's :class:`NameStack` inside a ``with`` block and
  :func:`current_name_stack` reads it;
* :func:`current` / :func:`new_source_info` give a :class:`SourceInfo` with
  that name stack and no traceback; :func:`user_context` changes the name
  stack only when given one; :func:`summarize` describes a ``SourceInfo``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from plait_core.source_info import (
    NameStack,
    SourceInfo,
    current,
    current_name_stack,
    extend_name_stack,
    new_name_stack,
    reset_name_stack,
    set_name_stack,
    transform_name_stack,
)

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


def new_source_info() -> SourceInfo:
    """An empty source information."""
    return SourceInfo()


def summarize(source_info: SourceInfo, num_frames: int = 1) -> str:
    """A one-line description (plait records no frames: the name stack, or "unknown")."""
    return str(source_info.name_stack) or "unknown"


@contextmanager
def user_context(c: Any = None, *, name_stack: NameStack | None = None) -> Iterator[None]:
    """A context for user frames (``name_stack`` replaces the name stack inside it)."""
    if name_stack is None:
        yield
    else:
        with set_name_stack(name_stack):
            yield
