"""A compiled flattener for the cached ``jit`` call: jaxlib's C++ pytrees.

Core's :mod:`plait_core.tree_util` is pure Python; flattening the arguments
of a call with it costs about 3 us for a dict of 10 arrays and 30 us for a
tree of 100 leaves on this machine, and rebuilding the outputs more (see the
table in :mod:`plait_dispatch._jaxlib`).  jaxlib ships a C++ implementation
of the same model (``jaxlib._jax.pytree``) that does both about three times
faster.  This module keeps one registry of it in step with core's:

* ``None``, tuples, named tuples, lists and dicts are built in there, with
  the same meaning as in core (dict children in sorted key order; named
  tuples rebuilt as their class; subclasses of the containers are leaves);
* ``OrderedDict`` and ``defaultdict`` are registered here with the node data
  core gives them (keys in insertion order; ``(default_factory, sorted
  keys)``);
* every custom node type registered with core (``register_pytree_node``,
  dataclasses, ``Partial``, piles, ...) is registered here with core's own
  callbacks, through :func:`plait_core.tree_util.add_registration_listener`.

It is used only as a *key* on the cached call's fast path: a signature's
C++ structure is recorded when core's flattening of the same call gave the
same leaves (so the two agree on it), and a later call with an equal C++
structure and equal leaf types is that signature.  Everything else (key
paths, error messages, ``PyTreeDef`` objects users see) stays core's.
"""

from __future__ import annotations

import collections
import contextlib
import threading
from collections.abc import Callable, Iterable
from typing import Any

from plait_core import tree_util
from plait_dispatch import _jaxlib

__all__ = ["flatten", "structure_of"]

_registry: Any = _jaxlib.pytree_registry()
_lock = threading.Lock()


def _register(nodetype: type, flat: Callable[[Any], tuple[Iterable[Any], Any]], unflat: Callable[[Any, Any], Any]) -> None:
    # A type the C++ registry knows already (a built-in kind) means the same there.
    with _lock, contextlib.suppress(Exception):
        _registry.register_node(nodetype, flat, unflat)


def _ordereddict_flatten(d: Any) -> tuple[list[Any], tuple[Any, ...]]:
    return list(d.values()), tuple(d)


def _ordereddict_unflatten(keys: tuple[Any, ...], children: Any) -> Any:
    return collections.OrderedDict(zip(keys, children))


def _defaultdict_flatten(d: Any) -> tuple[list[Any], tuple[Any, tuple[Any, ...]]]:
    keys = tuple(sorted(d))
    return [d[k] for k in keys], (d.default_factory, keys)


def _defaultdict_unflatten(data: tuple[Any, tuple[Any, ...]], children: Any) -> Any:
    return collections.defaultdict(data[0], zip(data[1], children))


_register(collections.OrderedDict, _ordereddict_flatten, _ordereddict_unflatten)
_register(collections.defaultdict, _defaultdict_flatten, _defaultdict_unflatten)
tree_util.add_registration_listener(_register)

flatten: Callable[[Any], tuple[list[Any], Any]] = _registry.flatten
"""``flatten(tree) -> (leaves, structure)`` in C++: the leaves in core's order
and a hashable structure (not a core ``PyTreeDef``).  Raises on what core
would refuse too (unsortable dict keys); callers fall back to core then."""


def structure_of(treedef: tree_util.PyTreeDef) -> Any | None:
    """The C++ structure equal to core's ``treedef``, or ``None`` when they
    cannot be matched (a custom node whose unflatten refuses placeholder leaves)."""
    n = treedef.num_leaves
    marks = [object() for _ in range(n)]
    try:
        sample = tree_util.tree_unflatten(treedef, marks)
        leaves, structure = flatten(sample)
    except Exception:
        return None
    if len(leaves) != n or any(a is not b for a, b in zip(leaves, marks)):
        return None
    if tree_util.tree_structure(sample) != treedef:
        return None
    return structure
