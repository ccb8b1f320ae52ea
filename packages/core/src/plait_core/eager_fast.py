"""Shortcuts from the NumPy layer to the eager backend (issue 17).

An eager ``plait.numpy`` call on a device array normally walks the whole
NumPy layer (promotion, weak types, broadcasting), the ``lax`` function, the
primitive's ``bind`` and the backend's short path: a dozen to forty Python
calls around one execution.  For the commonest calls the outcome of that walk
is known in advance: ``sin`` of a floating array *is* ``sin_p`` bound on it,
``add`` of two arrays of one type *is* ``add_p`` bound on them.  Those
functions ask the backend directly, through the two functions the backend
registers here with :func:`set_eager_shortcuts`:

* ``unary(prim, params, x)`` returns exactly what ``prim.bind(x, **params)``
  returns (and raises what it raises); ``params`` is one dict object per call
  site, so the backend may remember it by identity;
* ``binary(prim, x, y, numpy)`` returns ``prim.bind(x, y)`` for a
  parameterless ``prim``, or ``None`` when it does not take the case (the
  caller then goes its usual way); ``y`` is an array of the registered type
  or a host scalar.  With ``numpy`` true it takes the case only when ``x``
  and ``y`` have equal abstract values of a dtype other than ``bool`` (what
  ``plait.numpy``'s arithmetic binds without promoting).

* ``unary_runner(prim, params, x)`` (optional) returns a *runner* for the
  signature ``unary`` just handled for ``x``: a function of one operand that
  returns ``prim.bind(y, **params)`` for an operand ``y`` of that very
  signature (same abstract value object, device, flags) and ``None`` for any
  other, so a call site may keep the last one (:func:`runner_memo`) and try
  it first: one call from the NumPy function to the execution.

The NumPy layer calls them only when the first operand's class *is* the
registered ``array_type`` and the current trace is the eager one, so that
nothing changes inside transformations or for other operands.  The shortcuts
belong to one eager backend: while another is installed
(:func:`~plait_core.trace.set_eager_backend`), and without any, the array type
is a class no value has, and nothing is taken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # type only: this module sits below trace and primitive, which import it
    from plait_core.primitive import Primitive

__all__ = ["EagerShortcuts", "clear_eager_shortcuts", "forget_runners", "runner_memo", "set_eager_shortcuts", "shortcuts"]

Unary = Callable[["Primitive", dict[str, Any], Any], Any]
Binary = Callable[["Primitive", Any, Any, bool], Any]
Runner = Callable[[Any], Any]
UnaryRunner = Callable[["Primitive", dict[str, Any], Any], Runner]


class _NoArray:
    """The array type while no backend offers shortcuts: no value has it."""


def _no_unary(prim: Primitive, params: dict[str, Any], x: Any) -> Any:
    return prim.bind(x, **params)


def _no_binary(prim: Primitive, x: Any, y: Any, numpy: bool) -> Any:
    return None


def no_runner(x: Any) -> Any:
    """The runner that takes nothing (what a memo holds until a signature is known)."""
    return None


def _no_unary_runner(prim: Primitive, params: dict[str, Any], x: Any) -> Runner:
    return no_runner


class EagerShortcuts:
    """The backend's shortcuts (one instance: :data:`shortcuts`)."""

    __slots__ = ("array_type", "backend", "binary", "offered_type", "unary", "unary_runner")

    def __init__(self) -> None:
        self.array_type: type = _NoArray  # what the NumPy layer compares with
        self.offered_type: type = _NoArray  # what the backend offered shortcuts for
        self.backend: Any = None
        self.unary: Unary = _no_unary
        self.binary: Binary = _no_binary
        self.unary_runner: UnaryRunner = _no_unary_runner


shortcuts = EagerShortcuts()

# Every call site's memo of its last runner (one-element lists), so that they
# can all be reset at once when the backend's tables are cleared or replaced.
_memos: list[list[Runner]] = []


def runner_memo() -> list[Runner]:
    """A new memo for one call site: ``memo[0]`` is the runner to try first
    (it returns ``None`` for what it does not take); reset by :func:`forget_runners`."""
    memo: list[Runner] = [no_runner]
    _memos.append(memo)
    return memo


def forget_runners() -> None:
    """Reset every call site's memo (the backend cleared its tables)."""
    for memo in _memos:
        memo[0] = no_runner


def set_eager_shortcuts(
    array_type: type, unary: Unary, binary: Binary, backend: Any, unary_runner: UnaryRunner | None = None
) -> None:
    """Offer shortcuts for eager operations on ``array_type``, valid while
    ``backend`` is the eager backend (see the module's docstring)."""
    forget_runners()
    shortcuts.unary = unary
    shortcuts.binary = binary
    shortcuts.unary_runner = unary_runner or _no_unary_runner
    shortcuts.backend = backend
    shortcuts.offered_type = array_type
    shortcuts.array_type = array_type if _installed[0] is backend else _NoArray


def clear_eager_shortcuts() -> None:
    """Withdraw the shortcuts (the NumPy layer takes its usual way for everything)."""
    forget_runners()
    shortcuts.array_type = shortcuts.offered_type = _NoArray
    shortcuts.backend = None
    shortcuts.unary = _no_unary
    shortcuts.binary = _no_binary
    shortcuts.unary_runner = _no_unary_runner


#: The eager backend installed, as :mod:`plait_core.trace` reports it through
#: :func:`_backend_changed` (trace imports this module, never the reverse).
_installed: list[Any] = [None]


def _backend_changed(backend: Any) -> None:
    """Called by ``set_eager_backend`` (and once when :mod:`plait_core.trace` is
    imported): the shortcuts apply only under their backend."""
    _installed[0] = backend
    forget_runners()
    shortcuts.array_type = shortcuts.offered_type if backend is shortcuts.backend else _NoArray
