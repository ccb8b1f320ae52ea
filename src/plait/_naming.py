"""``plait.named_call``: JAX's ``jax.named_call``, which names a function's
operations and otherwise leaves the function alone.

JAX's ``named_call`` runs the function's Python on every call (no call
primitive, no staging of its own), so its arguments may be any Python values
and its side effects happen as written; it only puts ``name`` on the name
stack of the operations it stages: ``plait.named_call(f, name=n)`` calls
``f`` inside ``named_scope(n)`` and returns its value.  (plait's internal
``plait_core.lax.named_call``, a staged ``closed_call`` that keeps jaxprs
short, is another thing.)
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from plait._jax_extras import named_scope

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["named_call"]


def named_call(fun: F, *, name: str | None = None) -> F:
    """``fun`` whose operations are named ``name`` (default: ``fun``'s name);
    it computes what ``fun`` computes, running ``fun``'s Python on every call
    with whatever arguments it is given."""
    if not callable(fun):
        raise TypeError(f"named_call expects a function, got {type(fun).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str, got {type(name).__name__}")
    call_name = name if name is not None else getattr(fun, "__name__", type(fun).__name__)

    @functools.wraps(fun)
    def named(*args: Any, **kwargs: Any) -> Any:
        with named_scope(call_name):
            return fun(*args, **kwargs)

    return cast(F, named)
