"""The ``tree`` namespace: short names for the pytree utilities.

Each name here is the same object as its ``tree_util`` counterpart
(``tree.map is tree_util.tree_map``, and so on); see
:mod:`plait_core.tree_util` for the semantics.
"""

from plait_core.tree_util import tree_all as all
from plait_core.tree_util import tree_broadcast as broadcast
from plait_core.tree_util import tree_flatten as flatten
from plait_core.tree_util import tree_flatten_with_path as flatten_with_path
from plait_core.tree_util import tree_leaves as leaves
from plait_core.tree_util import tree_leaves_with_path as leaves_with_path
from plait_core.tree_util import tree_map as map
from plait_core.tree_util import tree_map_with_path as map_with_path
from plait_core.tree_util import tree_reduce as reduce
from plait_core.tree_util import tree_reduce_associative as reduce_associative
from plait_core.tree_util import tree_structure as structure
from plait_core.tree_util import tree_transpose as transpose
from plait_core.tree_util import tree_unflatten as unflatten
from plait_core.tree_util_extras import static

__all__ = [
    "all",
    "broadcast",
    "flatten",
    "flatten_with_path",
    "leaves",
    "leaves_with_path",
    "map",
    "map_with_path",
    "reduce",
    "reduce_associative",
    "static",
    "structure",
    "transpose",
    "unflatten",
]
