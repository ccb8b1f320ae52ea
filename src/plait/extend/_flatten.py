"""Pytree flattening as ``linear_util`` transformations (JAX's
``api_util.flatten_fun`` and ``flatten_fun_nokwargs``), for libraries that
build wrapped functions for ``partial_eval.trace_to_jaxpr_nounits``
(flax's ``lazy_init`` and ``nn.scan`` broadcasting).  A ``jax.api_util``
module can re-export these."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait.extend.linear_util import WrappedFun, transformation_with_aux2
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["debug_info", "flatten_fun", "flatten_fun_nokwargs"]


@transformation_with_aux2
def _flatten_fun(f: Callable[..., Any], store: Any, in_tree: PyTreeDef, *args_flat: Any) -> list[Any]:
    args, kwargs = tree_unflatten(in_tree, list(args_flat))
    flat, out_tree = tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return flat


@transformation_with_aux2
def _flatten_fun_nokwargs(
    f: Callable[..., Any], store: Any, in_tree: PyTreeDef, *args_flat: Any
) -> list[Any]:
    args = tree_unflatten(in_tree, list(args_flat))
    flat, out_tree = tree_flatten(f(*args))
    store.store(out_tree)
    return flat


def flatten_fun(fun: WrappedFun, in_tree: PyTreeDef) -> tuple[WrappedFun, Callable[[], PyTreeDef]]:
    """``fun`` taking the leaves of ``(args, kwargs)`` (of structure ``in_tree``)
    and returning its result's leaves; the thunk gives the result's structure
    after a call."""
    return _flatten_fun(fun, in_tree)


def flatten_fun_nokwargs(fun: WrappedFun, in_tree: PyTreeDef) -> tuple[WrappedFun, Callable[[], PyTreeDef]]:
    """As :func:`flatten_fun` for ``in_tree`` the structure of the positional
    arguments (a tuple) alone."""
    return _flatten_fun_nokwargs(fun, in_tree)


def debug_info(traced_for: str, fun: Any, args: Any, kwargs: Any, **options: Any) -> None:
    """JAX's debugging information of a traced function: plait records none
    (its errors name the function and the arguments themselves)."""
    return None
