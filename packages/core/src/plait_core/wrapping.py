"""Wrappers that look like the function they wrap, whatever that function is.

``functools.wraps`` fails on callables whose attributes are not what a
function's are (an equinox Module's ``__name__`` may be a property returning
something other than a string: setting it on the wrapper raises).  JAX's
transformations copy what they can and go on; :func:`wraps` and
:func:`update_wrapper` do the same for every transformation of plait.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["update_wrapper", "wraps"]

W = TypeVar("W")


def update_wrapper(wrapper: W, wrapped: Any) -> W:
    """Copy ``wrapped``'s ``__module__``, ``__name__``, ``__qualname__``,
    ``__doc__``, ``__dict__`` entries and ``__type_params__`` onto ``wrapper``
    where they exist and can be set, and set ``__wrapped__``; an attribute that
    cannot be copied (not a string where Python wants one, read-only) is left
    as it was."""
    for attr in functools.WRAPPER_ASSIGNMENTS:
        try:
            value = getattr(wrapped, attr)
        except Exception:  # a property may raise anything
            continue
        try:
            setattr(wrapper, attr, value)
        except (TypeError, AttributeError):
            continue
    try:
        extra = dict(getattr(wrapped, "__dict__", {}))
    except Exception:
        extra = {}
    with contextlib.suppress(TypeError, AttributeError):
        wrapper.__dict__.update(extra)
    with contextlib.suppress(TypeError, AttributeError):
        wrapper.__wrapped__ = wrapped  # type: ignore[attr-defined]
    return wrapper


def wraps(wrapped: Any) -> Callable[[W], W]:
    """A decorator: ``update_wrapper(wrapper, wrapped)``."""
    return functools.partial(update_wrapper, wrapped=wrapped)
