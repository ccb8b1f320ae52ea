"""``plait.tree_util`` (JAX's ``jax.tree_util``): pytrees, nested containers of
leaves, and the functions that work on them.

The machinery (node registry, flattening, :class:`PyTreeDef`, key paths) is
:mod:`plait_core.tree_core`; one-level flattening, node queries, broadcasting
and balanced reduction, built on it, are :mod:`plait_core.tree_util_extras`.
This module is the namespace that joins the two (so neither imports it).
"""

from __future__ import annotations

from plait_core.tree_core import *  # noqa: F403
from plait_core.tree_core import IsLeaf as IsLeaf
from plait_core.tree_core import __all__ as _core_names
from plait_core.tree_core import _registry as _registry  # JAX's private jax._src.tree_util._registry
from plait_core.tree_core import add_registration_listener as add_registration_listener
from plait_core.tree_util_extras import (
    flatten_one_level,
    flatten_one_level_with_keys,
    is_tree_node,
    register_pytree_with_keys_class,
    tree_broadcast,
    tree_reduce_associative,
)

__all__ = [
    *_core_names,
    "flatten_one_level",
    "flatten_one_level_with_keys",
    "is_tree_node",
    "register_pytree_with_keys_class",
    "tree_broadcast",
    "tree_reduce_associative",
]
