"""More of ``jax.tree_util``: one-level flattening, node-type queries, broadcasting
a prefix tree, balanced reductions, and class-based registration with keys.

Kept apart from :mod:`plait_core.tree_util` (the traversal machinery); these are
small functions over its one-level view of a node.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

from plait_core.tree_core import (
    _LEAF,
    KeyEntry,
    _classify,
    _match,
    _MismatchError,
    _shallow,
    register_pytree_with_keys,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

_C = TypeVar("_C", bound="type[Any]")
_T = TypeVar("_T")


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
    """``(children, aux_data)`` of one pytree node: the node's immediate children
    (not flattened further) and its metadata (a dict's keys, ``None`` for lists and
    tuples).  A leaf is a ``ValueError``."""
    sh = _shallow(tree, None, False)
    if sh is None:
        raise ValueError(f"flatten_one_level: can't tree-flatten a leaf of type {type(tree).__name__}")
    _, data, children, _ = sh
    if isinstance(tree, list):
        return list(children), data
    return tuple(children), data


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Hashable]:
    """Like :func:`flatten_one_level`, with each child paired with its key
    (``DictKey``, ``SequenceKey``, ``GetAttrKey`` or ``FlattenedIndexKey``)."""
    sh = _shallow(tree, None, True)
    if sh is None:
        raise ValueError(f"flatten_one_level_with_keys: can't tree-flatten a leaf of type {type(tree).__name__}")
    _, data, children, keys = sh
    return tuple(zip(keys, children)), data


def is_tree_node(typ: type) -> bool:
    """True if values of type ``typ`` are pytree nodes (built-in containers, ``None``,
    named tuples and registered types), False if they are leaves."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node: expected a type, got {typ!r}")
    return _classify(typ) is not _LEAF


def register_pytree_with_keys_class(cls: _C) -> _C:
    """Class decorator: register ``cls`` as a pytree node with keyed children.

    ``cls`` defines ``tree_flatten_with_keys(self) -> (((key, child), ...), aux)``
    and the classmethod ``tree_unflatten(aux, children)``; a ``tree_flatten`` method,
    if defined, is used for key-less flattening.
    """
    for needed in ("tree_flatten_with_keys", "tree_unflatten"):
        if not hasattr(cls, needed):
            raise TypeError(f"register_pytree_with_keys_class: {cls.__qualname__} has no {needed}")
    flatten = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(cls, cls.tree_flatten_with_keys, cls.tree_unflatten, flatten)
    return cls


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Broadcast ``prefix_tree`` to the structure of ``full_tree``: each leaf of the
    prefix is repeated over every leaf of ``full_tree``'s subtree at the same place.
    A ``prefix_tree`` that is not a prefix of ``full_tree`` is a ``ValueError``."""
    prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
    subtrees: list[Any] = []
    try:
        _match(prefix_def._node, full_tree, subtrees, False, is_leaf)
    except _MismatchError as e:
        raise ValueError(
            f"tree_broadcast: prefix_tree is not a prefix of full_tree at {e.where()}: "
            f"the prefix has {e.expected} there, the full tree has {e.got}"
        ) from None
    filled = [tree_map(lambda _, p=p: p, sub, is_leaf=is_leaf) for p, sub in zip(prefix_leaves, subtrees)]
    return tree_unflatten(prefix_def, filled)


class _Unspecified:
    def __repr__(self) -> str:
        return "<no identity>"


_UNSPECIFIED: Any = _Unspecified()


def tree_reduce_associative(
    operation: Callable[[_T, _T], _T],
    tree: Any,
    *,
    identity: Any = _UNSPECIFIED,
    is_leaf: Callable[[Any], bool] | None = None,
) -> _T:
    """Reduce the leaves of ``tree`` with an associative ``operation`` as a balanced
    tree of calls (depth ``log2(n)``).  An empty tree needs ``identity`` (else
    ``TypeError``); with leaves, ``identity`` is not used."""
    values: list[Any] = list(tree_leaves(tree, is_leaf))
    if not values:
        if identity is _UNSPECIFIED:
            raise TypeError("tree_reduce_associative: an empty tree needs identity= to reduce to")
        return identity  # type: ignore[no-any-return]
    while len(values) > 1:
        paired = [operation(values[i], values[i + 1]) for i in range(0, len(values) - 1, 2)]
        if len(values) % 2:
            paired.append(values[-1])
        values = paired
    return values[0]


def static(**kwargs: Any) -> Any:
    """A ``dataclasses.field`` marked static (``metadata={'static': True}``): with
    :func:`register_dataclass`, the field is pytree metadata, not a child."""
    metadata = dict(kwargs.pop("metadata", None) or {})
    metadata["static"] = True
    return dataclasses.field(metadata=metadata, **kwargs)


__all__ = [
    "flatten_one_level", "flatten_one_level_with_keys", "is_tree_node", "register_pytree_with_keys_class",
    "static", "tree_broadcast", "tree_reduce_associative",
]
