"""``jax.extend.linear_util``: functions wrapped with a stack of transformations.

A :class:`WrappedFun` is a Python function plus transformations applied
around it, innermost first; ``call_wrapped(*args, **kwargs)`` runs the whole
stack.  A transformation is a function of the wrapped callable and the
arguments (``transformation2``), which may also store an auxiliary value
(``transformation_with_aux2``: the stored value is read, after the call,
from the thunk returned next to the new ``WrappedFun``).  The generator
forms of older JAX (``transformation``, ``transformation_with_aux``: the
generator yields ``(args, kwargs)``, is sent the result, and yields the
answer, or ``(answer, aux)``) are answered too.

plait's own transformations take plain Python functions; this module is here
for libraries that build on JAX's ``linear_util`` (flax's partial evaluation
helpers, with ``plait.interpreters.partial_eval.trace_to_jaxpr_nounits``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = [
    "StoreException",
    "WrappedFun",
    "cache",
    "merge_linear_aux",
    "transformation",
    "transformation2",
    "transformation_with_aux",
    "transformation_with_aux2",
    "wrap_init",
]


class StoreException(Exception):
    """An auxiliary value read before it was stored, or stored twice."""


class _Store:
    __slots__ = ("_val",)

    _EMPTY: Any = object()

    def __init__(self) -> None:
        self._val = _Store._EMPTY

    def store(self, val: Any) -> None:
        if self._val is not _Store._EMPTY:
            raise StoreException("an auxiliary value was stored twice (the wrapped function ran twice)")
        self._val = val

    @property
    def val(self) -> Any:
        if self._val is _Store._EMPTY:
            raise StoreException("the auxiliary value is read before the wrapped function ran")
        return self._val

    def __bool__(self) -> bool:
        return self._val is not _Store._EMPTY


class _Thunk:
    """Reads a transformation's stored auxiliary value (after the call)."""

    __slots__ = ("store",)

    def __init__(self, store: _Store) -> None:
        self.store = store

    def __call__(self) -> Any:
        return self.store.val


class WrappedFun:
    """``f`` with ``transforms`` around it: ``(transformation, static args, store or None)``,
    innermost first."""

    __slots__ = ("debug_info", "f", "params", "transforms")

    def __init__(
        self, f: Callable[..., Any], transforms: tuple[Any, ...] = (), params: tuple[Any, ...] = (),
        debug_info: Any = None,
    ) -> None:  # fmt: skip
        self.f, self.transforms, self.params, self.debug_info = f, transforms, params, debug_info

    @property
    def __name__(self) -> str:
        return str(getattr(self.f, "__name__", "<function>"))

    def wrap(self, gen: Callable[..., Any], static_args: tuple[Any, ...], store: _Store | None) -> WrappedFun:
        """This function with the transformation ``gen`` applied around it."""
        return WrappedFun(self.f, (*self.transforms, (gen, static_args, store)), self.params, self.debug_info)

    def call_wrapped(self, *args: Any, **kwargs: Any) -> Any:
        """Call the function with every transformation applied."""
        fun: Callable[..., Any] = functools.partial(self.f, **dict(self.params)) if self.params else self.f
        for gen, static_args, store in self.transforms:
            fun = _apply(gen, fun, static_args, store)
        return fun(*args, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.call_wrapped(*args, **kwargs)

    def __repr__(self) -> str:
        names = ", ".join(getattr(g, "__name__", repr(g)) for g, _, _ in self.transforms)
        return f"WrappedFun({self.__name__}{', ' + names if names else ''})"


def _apply(
    gen: Callable[..., Any], inner: Callable[..., Any], static_args: tuple[Any, ...], store: _Store | None
) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        if store is None:
            return gen(inner, *static_args, *args, **kwargs)
        return gen(inner, store, *static_args, *args, **kwargs)

    return call


def wrap_init(f: Callable[..., Any], params: Any = None, *, debug_info: Any = None) -> WrappedFun:
    """``f`` as a :class:`WrappedFun` (``params``: keyword arguments always passed)."""
    if not callable(f):
        raise TypeError(f"wrap_init takes a function, got {type(f).__name__}")
    items = tuple(sorted(dict(params).items())) if params else ()
    return WrappedFun(f, (), items, debug_info)


def _check_wrapped(fun: Any, what: str) -> WrappedFun:
    if not isinstance(fun, WrappedFun):
        raise TypeError(
            f"{what} applies to a WrappedFun (made with linear_util.wrap_init), got {type(fun).__name__}"
        )
    return fun


def transformation2(gen: Callable[..., Any]) -> Callable[..., WrappedFun]:
    """A transformation: ``gen(f, *static_args, *args, **kwargs)`` calls ``f``.
    ``gen(wrapped_fun, *static_args)`` (the decorated name) applies it."""

    @functools.wraps(gen)
    def apply(fun: WrappedFun, *static_args: Any) -> WrappedFun:
        return _check_wrapped(fun, gen.__name__).wrap(gen, static_args, None)

    return apply


def transformation_with_aux2(gen: Callable[..., Any]) -> Callable[..., tuple[WrappedFun, Callable[[], Any]]]:
    """A transformation that stores an auxiliary value: ``gen(f, store,
    *static_args, *args, **kwargs)`` calls ``store.store(value)``.  Applying it
    returns the new function and a thunk giving the value after a call."""

    @functools.wraps(gen)
    def apply(fun: WrappedFun, *static_args: Any) -> tuple[WrappedFun, Callable[[], Any]]:
        store = _Store()
        return _check_wrapped(fun, gen.__name__).wrap(gen, static_args, store), _Thunk(store)

    return apply


def transformation(gen: Callable[..., Any]) -> Callable[..., WrappedFun]:
    """A generator transformation (older JAX): ``gen(*static_args, *args,
    **kwargs)`` yields ``(args, kwargs)`` for the inner call, is sent its
    result and yields the answer."""

    def run(f: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        it = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(it)
        return it.send(f(*inner_args, **inner_kwargs))

    run.__name__ = getattr(gen, "__name__", "transformation")
    return transformation2(run)


def transformation_with_aux(gen: Callable[..., Any]) -> Callable[..., tuple[WrappedFun, Callable[[], Any]]]:
    """A generator transformation yielding ``(answer, aux)`` (older JAX)."""

    def run(f: Callable[..., Any], store: _Store, *args: Any, **kwargs: Any) -> Any:
        it = gen(*args, **kwargs)
        inner_args, inner_kwargs = next(it)
        ans, aux = it.send(f(*inner_args, **inner_kwargs))
        store.store(aux)
        return ans

    run.__name__ = getattr(gen, "__name__", "transformation_with_aux")
    return transformation_with_aux2(run)


def merge_linear_aux(aux1: Callable[[], Any], aux2: Callable[[], Any]) -> tuple[bool, Any]:
    """Of two auxiliary thunks of which exactly one was stored: ``(True, value)``
    when it was the first, ``(False, value)`` when the second."""
    s1 = aux1.store if isinstance(aux1, _Thunk) else None
    s2 = aux2.store if isinstance(aux2, _Thunk) else None
    if s1 is not None and s1 and not (s2 is not None and s2):
        return True, aux1()
    if s2 is not None and s2 and not (s1 is not None and s1):
        return False, aux2()
    raise StoreException("merge_linear_aux: exactly one of the two auxiliary values must have been stored")


def cache(call: Callable[..., Any]) -> Callable[..., Any]:
    """Memoize ``call(fun, *args)`` per function (its ``f``, transformations and
    params) and arguments, which must be hashable.  A function with a
    transformation that stores an auxiliary value is not memoized (its store
    must be filled by a call)."""
    memo: dict[Any, Any] = {}

    @functools.wraps(call)
    def memoized(fun: WrappedFun, *args: Any) -> Any:
        if any(store is not None for _, _, store in fun.transforms):
            return call(fun, *args)
        key = (fun.f, tuple((g, s) for g, s, _ in fun.transforms), fun.params, args)
        if key not in memo:
            memo[key] = call(fun, *args)
        return memo[key]

    return memoized
