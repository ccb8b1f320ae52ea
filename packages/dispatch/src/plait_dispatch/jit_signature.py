"""Argument signatures and cache keys of ``jit``: static and donated arguments
by position and by name (:class:`ArgSpec`), what a function's signature says
about them, and the small keys and leaf checks the call paths use."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Final

from plait_core import (
    ShapedArray,
    Tracer,
    config,
)
from plait_core.primitives.calls import (
    fun_name,
)
from plait_core.trace import Trace
from plait_core.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_structure,
)
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.eager import _HOST_SCALAR_TYPES, _host_scalars

MISS: Final = object()
"""What a fast handler returns when the arguments are not its case (the one sentinel
every call path of ``jit`` compares with)."""

_buffer_is_deleted = _jaxlib.buffer_is_deleted


# Argument specifications: statics and donations by position and by name.


def _as_ints(value: int | Sequence[int] | None, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    seq = (value,) if isinstance(value, int) else tuple(value)
    for v in seq:
        if type(v) is not int:
            raise TypeError(f"jit: {what} must be ints, got {v!r}")
    return seq


def _as_names(value: str | Iterable[str] | None, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    seq = (value,) if isinstance(value, str) else tuple(value)
    for v in seq:
        if not isinstance(v, str):
            raise TypeError(f"jit: {what} must be strings, got {v!r}")
    return seq


class _ArgSpec:
    """Which arguments are static / donated, by position and by name, with
    the inference JAX does between the two from the function's signature."""

    def __init__(
        self,
        fun: Callable[..., Any],
        nums: tuple[int, ...],
        names: tuple[str, ...],
        what: str,
        infer_nums: bool,
        infer_names: bool,
    ) -> None:
        params = _positional_params(fun)
        self.param_names = params
        if params is not None:
            var_pos = _has_var_positional(fun)
            for n in nums:
                if not var_pos and not -len(params) <= n < len(params):
                    raise ValueError(
                        f"jit of {fun_name(fun)}: {what}_argnums contains {n}, but the function takes "
                        f"{len(params)} positional argument(s)"
                    )
            kw = _keyword_names(fun)
            if kw is not None:
                for name in names:
                    if name not in kw:
                        raise ValueError(
                            f"jit of {fun_name(fun)}: {what}_argnames contains {name!r}, which is not a "
                            f"parameter of the function (parameters: {', '.join(kw) or 'none'})"
                        )
            if infer_names:
                names = names + tuple(params[n] for n in nums if -len(params) <= n < len(params))
            if infer_nums:
                nums = nums + tuple(i for i, p in enumerate(params) if p in names)
        self.nums = tuple(sorted(set(n if n >= 0 or params is None else n + len(params) for n in nums)))
        self.names = frozenset(names)


def _signature(fun: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _positional_params(fun: Callable[..., Any]) -> tuple[str, ...] | None:
    sig = _signature(fun)
    if sig is None:
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(p.name for p in sig.parameters.values() if p.kind in kinds)


def _keyword_names(fun: Callable[..., Any]) -> tuple[str, ...] | None:
    """Names that may be passed by keyword, or None when any name may."""
    sig = _signature(fun)
    if sig is None:
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in sig.parameters.values() if p.kind in kinds)


def _has_var_positional(fun: Callable[..., Any]) -> bool:
    sig = _signature(fun)
    return sig is not None and any(
        p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()
    )


def _definition_site(fun: Callable[..., Any]) -> str:
    f: Any = inspect.unwrap(fun) if callable(fun) else fun
    while isinstance(f, functools.partial):
        f = f.func
    code = getattr(f, "__code__", None)
    if code is None:
        return "an unknown place"
    return f"{code.co_filename}:{code.co_firstlineno}"


def _sizes_from_vmap(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an argument is an integer scalar of a trace that can use such a
    value as a size (``vmap`` over sizes: see ``Trace.to_symbolic_dim``)."""
    for x in tree_flatten((args, kwargs))[0]:
        if isinstance(x, Tracer) and type(x._trace).to_symbolic_dim is not Trace.to_symbolic_dim:
            aval = x.aval
            if aval.shape == () and aval.dtype.kind in "iu":
                return True
    return False


def _positions(nums: tuple[int, ...], nargs: int) -> set[int]:
    """Argument positions among ``nargs`` named by ``nums`` (negative ones count from the end)."""
    return {n + nargs if n < 0 else n for n in nums if -nargs <= n < nargs}


@functools.lru_cache(maxsize=64)
def _flat_tree(n: int) -> PyTreeDef:
    return tree_structure((tuple(range(n)), {}))


@functools.lru_cache(maxsize=64)
def _tuple_tree(n: int) -> PyTreeDef:
    return tree_structure(tuple(range(n)))


def _mixed_leaves(leaves: list[Any]) -> tuple[list[ShapedArray], list[Any]] | None:
    """The types and buffers of leaves that are live uncommitted Arrays or host
    scalars with a device scalar in the eager table; ``None`` otherwise."""
    table = _host_scalars[config.x64_enabled]
    avals: list[ShapedArray] = []
    bufs: list[Any] = []
    for a in leaves:
        if a.__class__ is Array:
            buf = a._buf
            if a._committed or buf is None or _buffer_is_deleted(buf):
                return None
            avals.append(a.aval)
            bufs.append(buf)
        elif a.__class__ in _HOST_SCALAR_TYPES:
            const = table.get((a.__class__, a))
            if const is None:
                return None
            avals.append(const[0])
            bufs.append(const[1])
        else:
            return None
    return avals, bufs


def _short(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."
