"""Tests for plait_core.tree_util and the plait_core.tree namespace."""

from __future__ import annotations

import collections
import copy
import dataclasses
import functools
import operator
import pickle
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plait_core import tree, tree_core, tree_util
from plait_core.tree_util import (
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyPath,
    Partial,
    PyTreeDef,
    SequenceKey,
    all_leaves,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_static,
    tree_all,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_leaves_with_path,
    tree_map,
    tree_map_with_path,
    tree_reduce,
    tree_structure,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_is_strict_leaf,
    treedef_tuple,
)

# ---------------------------------------------------------------------------
# Node types used throughout (registered once, at import)
# ---------------------------------------------------------------------------


class Point(NamedTuple):
    x: Any
    y: Any


class Other(NamedTuple):
    x: Any
    y: Any


class Box:
    """Registered with register_pytree_node: children (a, b), aux = tag."""

    def __init__(self, a: Any, b: Any, tag: str = "t") -> None:
        self.a, self.b, self.tag = a, b, tag

    def __eq__(self, other: object) -> bool:
        return type(other) is Box and (self.a, self.b, self.tag) == (other.a, other.b, other.tag)

    def __repr__(self) -> str:
        return f"Box({self.a!r}, {self.b!r}, tag={self.tag!r})"


register_pytree_node(Box, lambda b: ((b.a, b.b), b.tag), lambda tag, ch: Box(ch[0], ch[1], tag))


@register_pytree_node_class
class Pair:
    """Registered with the class decorator."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def tree_flatten(self) -> tuple[tuple[Any, Any], None]:
        return (self.first, self.second), None

    @classmethod
    def tree_unflatten(cls, aux: None, children: tuple[Any, Any]) -> Pair:
        return cls(*children)

    def __eq__(self, other: object) -> bool:
        return type(other) is Pair and (self.first, self.second) == (other.first, other.second)


class Keyed:
    """Registered with keys: children are named 'lo' and 'hi'."""

    def __init__(self, lo: Any, hi: Any) -> None:
        self.lo, self.hi = lo, hi

    def __eq__(self, other: object) -> bool:
        return type(other) is Keyed and (self.lo, self.hi) == (other.lo, other.hi)


register_pytree_with_keys(
    Keyed,
    lambda k: (((GetAttrKey("lo"), k.lo), (GetAttrKey("hi"), k.hi)), None),
    lambda aux, ch: Keyed(*ch),
)


@register_dataclass
@dataclasses.dataclass(frozen=True)
class Params:
    w: Any
    b: Any
    name: str = dataclasses.field(default="p", metadata=dict(static=True))


@dataclasses.dataclass
class Explicit:
    data: Any
    size: int


register_dataclass(Explicit, data_fields=["data"], meta_fields=["size"])


@register_static
class Tag:
    def __init__(self, label: str) -> None:
        self.label = label

    def __eq__(self, other: object) -> bool:
        return type(other) is Tag and other.label == self.label

    def __hash__(self) -> int:
        return hash(self.label)


def same_tree(a: Any, b: Any) -> bool:
    """Structural equality that also requires identical node types and, for
    OrderedDicts, identical key order (``==`` alone would accept a dict for
    an OrderedDict or a tuple for a named tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, collections.OrderedDict):
        return list(a) == list(b) and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, collections.defaultdict):
        return (
            a.default_factory is b.default_factory
            and set(a) == set(b)
            and all(same_tree(a[k], b[k]) for k in a)
        )
    if isinstance(a, dict):
        return set(a) == set(b) and all(same_tree(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b))
    if isinstance(a, Box):
        return a.tag == b.tag and same_tree(a.a, b.a) and same_tree(a.b, b.b)
    if isinstance(a, Pair):
        return same_tree(a.first, b.first) and same_tree(a.second, b.second)
    if isinstance(a, Keyed):
        return same_tree(a.lo, b.lo) and same_tree(a.hi, b.hi)
    if isinstance(a, Params):
        return a.name == b.name and same_tree(a.w, b.w) and same_tree(a.b, b.b)
    return bool(a == b)


def _node_children(node: Any) -> list[Any]:
    """The children of a custom node, by flattening exactly one level."""

    def below_node(x: Any) -> bool:
        return x is not node

    return tree_flatten(node, is_leaf=below_node)[0]


def follow(tree_: Any, path: KeyPath) -> Any:
    """Look up the subtree at ``path`` by ordinary Python access."""
    for key in path:
        if isinstance(key, SequenceKey):
            tree_ = tree_[key.idx]
        elif isinstance(key, DictKey):
            tree_ = tree_[key.key]
        elif isinstance(key, GetAttrKey):
            tree_ = getattr(tree_, key.name)
        elif isinstance(key, FlattenedIndexKey):
            tree_ = _node_children(tree_)[key.key]
        else:  # pragma: no cover
            raise AssertionError(key)
    return tree_


# ---------------------------------------------------------------------------
# Flatten / unflatten of every node type
# ---------------------------------------------------------------------------

ROUND_TRIP_CASES: list[tuple[str, Any, list[Any], str | None]] = [
    ("leaf", 5, [5], "*"),
    ("none", None, [], "None"),
    ("empty tuple", (), [], "()"),
    ("tuple1", (1,), [1], "(*,)"),
    ("tuple", (1, 2, 3), [1, 2, 3], "(*, *, *)"),
    ("list", [1, [2, 3]], [1, 2, 3], "[*, [*, *]]"),
    ("dict sorted", {"b": 2, "a": 1}, [1, 2], "{'a': *, 'b': *}"),
    ("dict with None", {"a": None, "b": (1,)}, [1], "{'a': None, 'b': (*,)}"),
    (
        "ordereddict",
        collections.OrderedDict([("b", 2), ("a", 1)]),
        [2, 1],
        "OrderedDict({'b': *, 'a': *})",
    ),
    (
        "defaultdict",
        collections.defaultdict(list, {"z": 1, "y": 2}),
        [2, 1],
        "defaultdict(list, {'y': *, 'z': *})",
    ),
    ("namedtuple", Point(1, (2, 3)), [1, 2, 3], "Point(x=*, y=(*, *))"),
    ("custom", Box(1, [2], tag="k"), [1, 2], "CustomNode(Box['k'], [*, [*]])"),
    ("node class", Pair(1, 2), [1, 2], "CustomNode(Pair[None], [*, *])"),
    ("with keys", Keyed(1, 2), [1, 2], "CustomNode(Keyed[None], [*, *])"),
    ("dataclass", Params(1, 2, "q"), [1, 2], "CustomNode(Params[('q',)], [*, *])"),
    ("explicit dataclass", Explicit([1, 2], 3), [1, 2], "CustomNode(Explicit[(3,)], [[*, *]])"),
    ("static", (Tag("x"), 1), [1], None),
    ("mixed", (1, {"a": [2, None], "b": Point(3, 4)}), [1, 2, 3, 4], None),
]


@pytest.mark.parametrize(
    "tree_, leaves, rep", [c[1:] for c in ROUND_TRIP_CASES], ids=[c[0] for c in ROUND_TRIP_CASES]
)
def test_flatten_unflatten_round_trip(tree_: Any, leaves: list[Any], rep: str | None) -> None:
    got_leaves, treedef = tree_flatten(tree_)
    assert got_leaves == leaves
    assert treedef.num_leaves == len(leaves)
    rebuilt = tree_unflatten(treedef, got_leaves)
    assert same_tree(rebuilt, tree_)
    assert tree_structure(rebuilt) == treedef
    assert tree_leaves(tree_) == leaves
    if rep is not None:
        assert repr(treedef) == f"PyTreeDef({rep})"


def test_unflatten_uses_new_leaves_and_rebuilds_types() -> None:
    t = (1, {"b": Point(2, 3), "a": [4]}, None)
    _, treedef = tree_flatten(t)
    out = tree_unflatten(treedef, ["p", "q", "r", "s"])
    assert same_tree(out, ("p", {"a": ["q"], "b": Point("r", "s")}, None))
    assert type(out[1]["b"]) is Point


def test_dict_unflatten_has_sorted_keys() -> None:
    leaves, treedef = tree_flatten({"c": 1, "a": 2, "b": 3})
    assert leaves == [2, 3, 1]
    assert list(tree_unflatten(treedef, leaves)) == ["a", "b", "c"]


def test_ordereddict_keeps_order_and_differs_from_dict() -> None:
    od = collections.OrderedDict([("b", 1), ("a", 2)])
    assert list(tree_map(lambda x: x, od)) == ["b", "a"]
    assert tree_structure(od) != tree_structure({"b": 1, "a": 2})
    assert tree_structure(od) != tree_structure(collections.OrderedDict([("a", 1), ("b", 2)]))


def test_defaultdict_keeps_factory() -> None:
    dd: collections.defaultdict[str, Any] = collections.defaultdict(list, {"a": 1})
    out = tree_map(lambda x: x + 1, dd)
    assert type(out) is collections.defaultdict
    assert out.default_factory is list
    assert out == {"a": 2}
    assert tree_structure(dd) != tree_structure(collections.defaultdict(set, {"a": 1}))


def test_other_values_are_leaves() -> None:
    class MyDict(dict[str, int]):
        pass

    class MyTuple(tuple[int, ...]):
        pass

    arr = np.arange(3)
    values = [arr, MyDict(a=1), MyTuple((1, 2)), "str", b"bytes", 1.5, {1, 2}, object]
    leaves, treedef = tree_flatten(values)
    assert len(leaves) == len(values)
    assert all(a is b for a, b in zip(leaves, values))
    assert repr(treedef) == "PyTreeDef([*, *, *, *, *, *, *, *])"


def test_none_is_a_node_without_leaves() -> None:
    leaves, treedef = tree_flatten([None, 1, None])
    assert leaves == [1]
    assert tree_unflatten(treedef, [7]) == [None, 7, None]
    assert tree_map(lambda x: x * 10, {"a": None, "b": 2}) == {"a": None, "b": 20}


def test_namedtuples_of_different_classes_differ() -> None:
    assert tree_structure(Point(1, 2)) != tree_structure(Other(1, 2))
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert tree_structure(Point(1, 2)) == tree_structure(Point("a", "b"))


def test_custom_aux_data_takes_part_in_equality() -> None:
    assert tree_structure(Box(1, 2, "x")) == tree_structure(Box(3, 4, "x"))
    assert tree_structure(Box(1, 2, "x")) != tree_structure(Box(1, 2, "y"))


def test_static_node_has_no_leaves_and_is_kept() -> None:
    tag = Tag("lbl")
    leaves, treedef = tree_flatten({"t": tag, "v": 1})
    assert leaves == [1]
    assert tree_unflatten(treedef, [2])["t"] is tag
    assert tree_structure(Tag("a")) != tree_structure(Tag("b"))


def test_unflatten_accepts_any_iterable() -> None:
    treedef = tree_structure((1, [2, 3]))
    assert tree_unflatten(treedef, iter([4, 5, 6])) == (4, [5, 6])
    assert treedef.unflatten(x for x in "abc") == ("a", ["b", "c"])


@pytest.mark.parametrize("n", [2, 4])
def test_unflatten_wrong_leaf_count(n: int) -> None:
    treedef = tree_structure((1, [2, 3]))
    with pytest.raises(ValueError, match=rf"expected 3 leaves for PyTreeDef\(\(\*, \[\*, \*\]\)\), got {n}"):
        tree_unflatten(treedef, list(range(n)))


def test_unflatten_rejects_non_treedef() -> None:
    with pytest.raises(TypeError, match="expected a PyTreeDef as first argument, got list"):
        tree_unflatten([1, 2], tree_structure((1, 2)))  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# is_leaf
# ---------------------------------------------------------------------------


def test_is_leaf_keeps_subtrees_whole() -> None:
    t = {"a": (1, 2), "b": [3, (4, 5)]}
    leaves, treedef = tree_flatten(t, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3, (4, 5)]
    assert repr(treedef) == "PyTreeDef({'a': *, 'b': [*, *]})"
    assert tree_unflatten(treedef, leaves) == t


def test_is_leaf_can_make_none_a_leaf() -> None:
    leaves, treedef = tree_flatten([None, 1], is_leaf=lambda x: x is None)
    assert leaves == [None, 1]
    assert treedef.num_leaves == 2
    assert tree_map(lambda x: x is None, [None, 1], is_leaf=lambda x: x is None) == [True, False]


def test_is_leaf_is_called_root_first_on_every_subtree() -> None:
    seen: list[Any] = []

    def record(x: Any) -> bool:
        seen.append(x)
        return False

    tree_flatten({"a": [1, None]}, is_leaf=record)
    assert seen == [{"a": [1, None]}, [1, None], 1, None]


def test_is_leaf_on_root() -> None:
    leaves, treedef = tree_flatten([1, 2], is_leaf=lambda x: isinstance(x, list))
    assert leaves == [[1, 2]]
    assert treedef_is_strict_leaf(treedef)


def test_is_leaf_with_custom_nodes_and_leaves_helpers() -> None:
    t = [Box(1, 2), Pair(3, 4)]
    assert tree_leaves(t, is_leaf=lambda x: isinstance(x, Box)) == [t[0], 3, 4]
    assert tree_structure(t, is_leaf=lambda x: isinstance(x, Box)).num_leaves == 3


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------


def test_treedef_counts() -> None:
    treedef = tree_structure((1, None, {"a": [2, 3]}))
    assert treedef.num_leaves == 3
    # tuple, leaf, None, dict, list, leaf, leaf
    assert treedef.num_nodes == 7
    assert tree_structure(None).num_nodes == 1
    assert tree_structure(None).num_leaves == 0
    assert tree_structure(5).num_nodes == 1


def test_treedef_equality_and_hash() -> None:
    a = tree_structure({"x": [1, 2], "y": (3,)})
    b = tree_structure({"y": ("q",), "x": ["r", "s"]})
    c = tree_structure({"x": [1, 2], "y": [3]})
    assert a == b
    assert hash(a) == hash(b)
    assert a != c
    assert len({a, b, c}) == 2
    assert a != "not a treedef"
    assert tree_structure([1]) != tree_structure((1,))
    assert tree_structure([None]) != tree_structure([1])


def test_treedef_is_immutable_and_not_constructible() -> None:
    treedef = tree_structure((1, 2))
    with pytest.raises(AttributeError):
        treedef.num_leaves = 5  # type: ignore[misc]
    with pytest.raises(AttributeError):
        treedef.extra = 1  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="created by tree_flatten"):
        PyTreeDef()
    assert treedef.num_leaves == 2


def test_treedef_copy_and_pickle() -> None:
    t = (1, {"a": Point(2, [3]), "b": None}, Box(4, 5, "z"), collections.OrderedDict(k=6))
    treedef = tree_structure(t)
    assert copy.copy(treedef) is treedef
    assert copy.deepcopy(treedef) is treedef
    restored = pickle.loads(pickle.dumps(treedef))
    assert restored == treedef
    assert hash(restored) == hash(treedef)
    assert same_tree(restored.unflatten([1, 2, 3, 4, 5, 6]), t)


def test_treedef_children_and_node_data() -> None:
    treedef = tree_structure((1, {"b": 2, "a": [3, 4]}, None))
    kids = treedef.children()
    assert kids == [tree_structure(0), tree_structure({"a": [0, 0], "b": 0}), tree_structure(None)]
    assert [k.num_leaves for k in kids] == [1, 3, 0]
    assert treedef_children(treedef) == kids
    assert treedef.node_data() == (tuple, None)
    assert kids[1].node_data() == (dict, ("a", "b"))
    assert kids[0].node_data() is None
    assert kids[0].children() == []
    assert tree_structure(Point(1, 2)).node_data() == (Point, None)
    assert tree_structure(Box(1, 2, "t")).node_data() == (Box, "t")
    assert tree_structure(collections.defaultdict(int, a=1)).node_data() == (
        collections.defaultdict,
        (int, ("a",)),
    )


def test_treedef_tuple_and_compose() -> None:
    a, b = tree_structure([1, 2]), tree_structure({"k": 3})
    tup = treedef_tuple([a, b])
    assert tup == tree_structure(([1, 2], {"k": 3}))
    assert tup.num_leaves == 3
    composed = tree_structure((0, 0)).compose(tree_structure([0, None, 0]))
    assert composed == tree_structure(([0, None, 0], [0, None, 0]))
    assert composed.num_leaves == 4


def test_treedef_is_leaf_helpers() -> None:
    assert treedef_is_leaf(tree_structure(1))
    assert treedef_is_leaf(tree_structure(None))
    assert treedef_is_leaf(tree_structure(()))
    assert not treedef_is_leaf(tree_structure((1,)))
    assert treedef_is_strict_leaf(tree_structure(1))
    assert not treedef_is_strict_leaf(tree_structure(None))


def test_all_leaves() -> None:
    assert all_leaves([1, "a", np.zeros(2)])
    assert not all_leaves([1, (2,)])
    assert not all_leaves([None])
    assert all_leaves([None, (1,)], is_leaf=lambda x: x is None or isinstance(x, tuple))
    assert all_leaves([])


# ---------------------------------------------------------------------------
# flatten_up_to
# ---------------------------------------------------------------------------


def test_flatten_up_to_returns_subtrees_at_prefix_leaves() -> None:
    treedef = tree_structure({"a": 0, "b": (0, 0)})
    got = treedef.flatten_up_to({"a": [1, 2], "b": ({"x": 3}, None)})
    assert got == [[1, 2], {"x": 3}, None]


def test_flatten_up_to_of_exact_structure_equals_leaves() -> None:
    t = (1, {"a": Point(2, Box(3, 4))})
    assert tree_structure(t).flatten_up_to(t) == tree_leaves(t)


@pytest.mark.parametrize(
    ("prefix", "tree_", "message"),
    [
        (
            (0, [0, 0]),
            (1, [2, 3, 4]),
            r"at path \[1\]: expected a list of length 2, got a list of length 3",
        ),
        (
            {"a": (0, 0)},
            {"a": [1, 2]},
            r"at path \['a'\]: expected a tuple of length 2, got a list of length 2",
        ),
        (
            {"a": 0, "b": 0},
            {"a": 1, "c": 2},
            r"at the root: expected a dict with keys \['a', 'b'\], got a dict with keys \['a', 'c'\]",
        ),
        ([0, (0, 0)], [1, 5], r"at path \[1\]: expected a tuple of length 2, got a leaf of type int \(5\)"),
        ([None], [3], r"at path \[0\]: expected None, got a leaf of type int \(3\)"),
        (Point(0, 0), Other(1, 2), r"at the root: expected a namedtuple Point, got a namedtuple Other"),
        (
            [Box(0, 0, "a")],
            [Box(1, 2, "b")],
            r"at path \[0\]: expected a Box node with aux data 'a' and 2 children, "
            r"got a Box node with aux data 'b' and 2 children",
        ),
        (
            {"k": Keyed(0, (0,))},
            {"k": Keyed(1, [2])},
            r"at path \['k'\]\.hi: expected a tuple of length 1, got a list of length 1",
        ),
    ],
)
def test_flatten_up_to_mismatch(prefix: Any, tree_: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"flatten_up_to: tree structure mismatch {message}"):
        tree_structure(prefix).flatten_up_to(tree_)


# ---------------------------------------------------------------------------
# tree_map and friends
# ---------------------------------------------------------------------------


def test_tree_map_single_and_multiple_trees() -> None:
    t = {"a": [1, 2], "b": (3, None), "c": Point(4, 5)}
    assert same_tree(tree_map(lambda x: x * 2, t), {"a": [2, 4], "b": (6, None), "c": Point(8, 10)})
    u = {"a": [10, 20], "b": (30, None), "c": Point(40, 50)}
    assert same_tree(
        tree_map(lambda x, y, z: x + y + z, t, u, t),
        {"a": [12, 24], "b": (36, None), "c": Point(48, 60)},
    )


def test_tree_map_over_custom_nodes() -> None:
    t = [Box(1, 2, "x"), Pair(3, 4), Keyed(5, 6), Params(7, 8, "n"), Explicit([9], 1)]
    out = tree_map(lambda v: -v, t)
    assert same_tree(out[:4], [Box(-1, -2, "x"), Pair(-3, -4), Keyed(-5, -6), Params(-7, -8, "n")])
    assert out[4] == Explicit([-9], 1)


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        (
            {"a": [1, (2, 3)]},
            {"a": [1, [2, 3]]},
            r"tree argument 1 has a different structure from tree argument 0 at path \['a'\]\[1\]: "
            r"argument 0 has a tuple of length 2 there, argument 1 has a list of length 2\.",
        ),
        (
            [1, (2, 3)],
            [1, 2],
            r"at path \[1\]: argument 0 has a tuple of length 2 there, "
            r"argument 1 has a leaf of type int \(2\)\.",
        ),
        (
            {"a": 1, "b": 2},
            {"a": 1},
            r"at the root: argument 0 has a dict with keys \['a', 'b'\] there, "
            r"argument 1 has a dict with keys \['a'\]\.",
        ),
        (
            (None, 1),
            (0, 1),
            r"at path \[0\]: argument 0 has None there, argument 1 has a leaf of type int \(0\)\.",
        ),
        (
            Point(1, {"k": None}),
            Point(1, {"k": 2}),
            r"at path \.y\['k'\]: argument 0 has None there, argument 1 has a leaf of type int \(2\)\.",
        ),
        (
            [1, 2],
            (1, 2),
            r"at the root: argument 0 has a list of length 2 there, argument 1 has a tuple of length 2\. "
            r"Argument 0's structure must be a prefix of every other argument's\.$",
        ),
    ],
)
def test_tree_map_structure_mismatch(first: Any, second: Any, message: str) -> None:
    with pytest.raises(ValueError, match=f"^tree_map: .*{message}"):
        tree_map(lambda *xs: xs[0], first, second)


def test_tree_map_mismatch_names_argument_index() -> None:
    t = {"a": 1}
    with pytest.raises(ValueError, match=r"tree argument 3 has a different structure .* argument 3 has"):
        tree_map(lambda *xs: 0, t, t, t, {"b": 1})


def test_tree_map_with_is_leaf_applies_to_all_trees() -> None:
    first = [(1, 2), 3]
    second = [(10, 20), 30]
    out = tree_map(lambda a, b: (a, b), first, second, is_leaf=lambda x: isinstance(x, tuple))
    assert out == [((1, 2), (10, 20)), (3, 30)]
    # ``is_leaf`` shapes the first tree only; the others are cut at its leaves.
    assert tree_map(lambda a, b: b, first, [[1, 2], 3], is_leaf=lambda x: isinstance(x, tuple)) == [[1, 2], 3]
    with pytest.raises(ValueError, match=r"at path \[0\]: argument 0 has a list of length 1 there, argument 1 has"):
        tree_map(lambda a, b: a, [[1]], [(2,)], is_leaf=lambda x: isinstance(x, tuple))


def test_tree_map_first_tree_is_a_prefix_of_the_others() -> None:
    # JAX's semantics: where the first tree has a leaf, the others' whole subtrees are passed.
    assert tree_map(lambda a, b: b, 0, {"x": 1}) == {"x": 1}
    assert tree_map(lambda a, b: (a, b), [1, 2], [1, (2, 3)]) == [(1, 1), (2, (2, 3))]
    assert tree_map(lambda a, b: (a, b), [1], [None]) == [(1, None)]
    out = tree_map(lambda a, b, c: (a, b, c), {"x": 0, "y": [1]}, {"x": [1, 2], "y": [{"z": 3}]}, {"x": 5, "y": [6]})
    assert out == {"x": (0, [1, 2], 5), "y": [(1, {"z": 3}, 6)]}
    assert same_tree(tree_map(lambda a, b: b, Point(1, 2), Point({"k": 3}, (4,))), Point({"k": 3}, (4,)))
    assert tree_map_with_path(lambda p, a, b: (keystr(p), b), [1], [{"a": 2}]) == [("[0]", {"a": 2})]
    # The other way round is an error: a leaf of a later tree cannot stand for a subtree of the first.
    with pytest.raises(ValueError, match=r"^tree_map: tree argument 1 .* at the root: argument 0 has a dict"):
        tree_map(lambda a, b: b, {"x": 1}, 0)
    with pytest.raises(ValueError, match=r"at the root: argument 0 has None there, argument 1 has a leaf"):
        tree_map(lambda a, b: b, None, 1)


def test_tree_map_f_sees_leaves_not_none() -> None:
    calls: list[Any] = []
    tree_map(calls.append, [None, 1, (None, 2)])
    assert calls == [1, 2]


def test_tree_all_and_reduce() -> None:
    assert tree_all([True, {"a": 1}])
    assert not tree_all([True, {"a": 0}])
    assert tree_all([None, ()])
    assert tree_all([None, False], is_leaf=lambda x: x is None) is False
    assert tree_reduce(operator.add, {"b": [2, 3], "a": 1}) == 6
    assert tree_reduce(lambda acc, x: acc + [x], {"b": 2, "a": 1}, []) == [1, 2]
    assert tree_reduce(operator.add, [], 10) == 10
    assert (
        tree_reduce(lambda a, x: a + len(x), [(1, 2), (3,)], 0, is_leaf=lambda x: isinstance(x, tuple)) == 3
    )
    with pytest.raises(TypeError, match="tree_reduce\\(\\) of a tree with no leaves and no initializer"):
        tree_reduce(operator.add, [None, ()])


def test_tree_transpose() -> None:
    pairs = [(1, "a"), (2, "b"), (3, "c")]
    outer = tree_structure([0, 0, 0])
    inner = tree_structure((0, 0))
    assert same_tree(tree_transpose(outer, inner, pairs), ([1, 2, 3], ["a", "b", "c"]))
    assert same_tree(tree_transpose(outer, None, pairs), ([1, 2, 3], ["a", "b", "c"]))
    nested = {"x": {"p": 1, "q": 2}, "y": {"p": 3, "q": 4}}
    out = tree_transpose(tree_structure({"x": 0, "y": 0}), tree_structure({"p": 0, "q": 0}), nested)
    assert out == {"p": {"x": 1, "y": 3}, "q": {"x": 2, "y": 4}}
    # Transposing twice gives back the original.
    assert tree_transpose(inner, outer, tree_transpose(outer, inner, pairs)) == pairs


def test_tree_transpose_mismatch() -> None:
    outer = tree_structure([0, 0])
    with pytest.raises(
        TypeError, match=r"tree_transpose: the tree has structure PyTreeDef\(\[\(\*, \*\), \*\]\) \(3 leaves\)"
    ):
        tree_transpose(outer, tree_structure((0, 0)), [(1, 2), 3])
    # Only the leaf counts must agree (JAX's rule): the leaves are read in order.
    assert tree_transpose(outer, tree_structure((0, 0)), [(1, 2), (3, [4])]) == ([1, 3], [2, 4])
    with pytest.raises(ValueError, match="cannot infer inner_treedef"):
        tree_transpose(tree_structure(()), None, ())


# ---------------------------------------------------------------------------
# Paths
# ---------------------------------------------------------------------------


def test_key_strings() -> None:
    assert str(SequenceKey(3)) == "[3]"
    assert str(DictKey("a")) == "['a']"
    assert str(DictKey(7)) == "[7]"
    assert str(GetAttrKey("w")) == ".w"
    assert str(FlattenedIndexKey(2)) == "[2]"
    path = (DictKey("a"), SequenceKey(1), GetAttrKey("x"), FlattenedIndexKey(0))
    assert keystr(path) == "['a'][1].x[0]"
    assert keystr(path, simple=True, separator="/") == "a/1/x/0"
    assert keystr(()) == ""
    assert SequenceKey(1) == SequenceKey(1)
    assert len({DictKey("a"), DictKey("a"), GetAttrKey("a")}) == 2


def test_flatten_with_path_all_node_kinds() -> None:
    t = (
        [1],
        {"b": 2, "a": None},
        Point(3, 4),
        collections.OrderedDict([("z", 5)]),
        Box(6, 7),
        Keyed(8, 9),
        Params(10, 11),
        Partial(max, 12, key=13),
    )
    pairs, treedef = tree_flatten_with_path(t)
    assert [keystr(p) for p, _ in pairs] == [
        "[0][0]",
        "[1]['b']",
        "[2].x",
        "[2].y",
        "[3]['z']",
        "[4][0]",
        "[4][1]",
        "[5].lo",
        "[5].hi",
        "[6].w",
        "[6].b",
        "[7].args[0]",
        "[7].keywords['key']",
    ]
    assert [leaf for _, leaf in pairs] == list(range(1, 14))
    assert treedef == tree_structure(t)
    assert tree_leaves_with_path(t) == pairs
    assert pairs[5][0] == (SequenceKey(4), FlattenedIndexKey(0))


def test_map_with_path() -> None:
    t = {"a": [1, 2], "b": Point(3, None)}
    out = tree_map_with_path(lambda p, x: f"{keystr(p)}={x}", t)
    assert same_tree(out, {"a": ["['a'][0]=1", "['a'][1]=2"], "b": Point("['b'].x=3", None)})
    out2 = tree_map_with_path(lambda p, x, y: (len(p), x + y), [1, (2,)], [10, (20,)])
    assert out2 == [(1, 11), ((2, 22),)]
    with pytest.raises(ValueError, match=r"^tree_map_with_path: tree argument 1 .* at path \[1\]"):
        tree_map_with_path(lambda p, x, y: x, [1, (2,)], [1, [2]])


def test_paths_with_is_leaf() -> None:
    pairs = tree_leaves_with_path({"a": (1, 2), "b": [3]}, is_leaf=lambda x: isinstance(x, tuple))
    assert pairs == [((DictKey("a"),), (1, 2)), ((DictKey("b"), SequenceKey(0)), 3)]


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


def test_register_twice_is_an_error() -> None:
    class Fresh:
        pass

    register_pytree_node(Fresh, lambda f: ((), None), lambda aux, ch: Fresh())
    with pytest.raises(ValueError, match=r"Type .*Fresh is already registered as a pytree node type"):
        register_pytree_node(Fresh, lambda f: ((), None), lambda aux, ch: Fresh())
    with pytest.raises(ValueError, match=r"builtins\.tuple is already registered"):
        register_pytree_node(tuple, lambda t: (t, None), lambda aux, ch: tuple(ch))
    with pytest.raises(ValueError, match=r"Box is already registered"):
        register_dataclass(Box, data_fields=["a"], meta_fields=[])


def test_register_non_type_is_an_error() -> None:
    with pytest.raises(TypeError, match="pytree node types must be classes, got 3"):
        register_pytree_node(3, lambda x: ((), None), lambda a, c: None)  # type: ignore[arg-type]


def test_registration_after_first_use_takes_effect() -> None:
    class Late:
        def __init__(self, v: Any) -> None:
            self.v = v

    late = Late(1)
    assert tree_leaves([late]) == [late]  # a leaf while unregistered (and now cached)
    register_pytree_node(Late, lambda x: ((x.v,), None), lambda aux, ch: Late(*ch))
    assert tree_leaves([late]) == [1]
    assert tree_map(lambda x: x + 1, late).v == 2


def test_subclass_of_registered_type_is_a_leaf() -> None:
    class SubBox(Box):
        pass

    sb = SubBox(1, 2)
    assert tree_leaves(sb) == [sb]


def test_custom_flatten_may_return_iterators_and_unflatten_gets_tuple() -> None:
    received: list[Any] = []

    class Gen:
        def __init__(self, *items: Any) -> None:
            self.items = items

    def unflatten(aux: Any, children: Any) -> Gen:
        received.append(children)
        return Gen(*children)

    register_pytree_node(Gen, lambda g: (iter(g.items), len(g.items)), unflatten)
    leaves, treedef = tree_flatten(Gen(1, (2, 3)))
    assert leaves == [1, 2, 3]
    assert tree_unflatten(treedef, leaves).items == (1, (2, 3))
    assert received == [(1, (2, 3))]
    assert tree_leaves(Gen(4, [5])) == [4, 5]
    assert [keystr(p) for p, _ in tree_leaves_with_path(Gen(6, 7))] == ["[0]", "[1]"]


def test_register_pytree_node_with_keys_func() -> None:
    class Named:
        def __init__(self, **kw: Any) -> None:
            self.kw = kw

    register_pytree_node(
        Named,
        lambda n: (list(n.kw.values()), tuple(n.kw)),
        lambda aux, ch: Named(**dict(zip(aux, ch))),
        lambda n: ([(DictKey(k), v) for k, v in n.kw.items()], tuple(n.kw)),
    )
    assert [keystr(p) for p, _ in tree_leaves_with_path(Named(u=1, v=2))] == ["['u']", "['v']"]
    assert tree_map(lambda x: x * 3, Named(u=1)).kw == {"u": 3}


def test_register_pytree_node_class_requires_methods() -> None:
    class NoMethods:
        pass

    with pytest.raises(TypeError, match="NoMethods has no tree_flatten method"):
        register_pytree_node_class(NoMethods)


def test_register_dataclass_inference_and_rebuild() -> None:
    p = Params(np.ones(2), 3.0, "layer")
    leaves, treedef = tree_flatten(p)
    assert len(leaves) == 2
    assert leaves[1] == 3.0
    rebuilt = tree_unflatten(treedef, [1, 2])
    assert rebuilt == Params(1, 2, "layer")
    assert tree_structure(Params(1, 2, "a")) != tree_structure(Params(1, 2, "b"))


def test_register_dataclass_is_a_decorator_returning_the_class() -> None:
    @dataclasses.dataclass
    class D:
        v: Any

    assert register_dataclass(D) is D
    assert tree_leaves(D(v=[1, 2])) == [1, 2]


def test_register_dataclass_errors() -> None:
    class NotDC:
        pass

    with pytest.raises(TypeError, match="NotDC is not a dataclass; pass data_fields and meta_fields"):
        register_dataclass(NotDC)

    @dataclasses.dataclass
    class DC:
        a: Any
        b: Any

    with pytest.raises(TypeError, match="pass both data_fields and meta_fields, or neither"):
        register_dataclass(DC, data_fields=["a", "b"])
    with pytest.raises(ValueError, match=r"missing \['b'\], not init fields \['c'\]"):
        register_dataclass(DC, data_fields=["a"], meta_fields=["c"])
    with pytest.raises(ValueError, match=r"fields listed more than once: \['a'\]"):
        register_dataclass(DC, data_fields=["a", "b"], meta_fields=["a"])
    with pytest.raises(TypeError, match="must be sequences of field names, not strings"):
        register_dataclass(DC, data_fields="a", meta_fields=["b"])


def test_register_dataclass_unhashable_meta_field() -> None:
    @dataclasses.dataclass
    class WithMeta:
        x: Any
        opts: Any = dataclasses.field(default=None, metadata=dict(static=True))

    register_dataclass(WithMeta)
    assert tree_leaves(WithMeta(1, opts=("ok",))) == [1]
    # As JAX 0.10.2: an unhashable meta field is kept in the treedef, compared with ==.
    leaves, treedef = tree_flatten(WithMeta(1, opts=["not", "hashable"]))
    assert leaves == [1]
    same = tree_structure(WithMeta(2, opts=["not", "hashable"]))
    assert treedef == same and hash(treedef) == hash(same)
    assert treedef != tree_structure(WithMeta(2, opts=["other"]))
    assert tree_unflatten(treedef, [5]) == WithMeta(5, opts=["not", "hashable"])


def test_register_dataclass_non_dataclass_with_explicit_fields() -> None:
    class Plain:
        def __init__(self, x: Any, mode: str) -> None:
            self.x, self.mode = x, mode

    register_dataclass(Plain, data_fields=["x"], meta_fields=["mode"])
    out = tree_map(lambda v: v + 1, Plain(1, "m"))
    assert (type(out), out.x, out.mode) == (Plain, 2, "m")


def test_cache_overflow_keeps_registered_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tree_core, "_CACHE_LIMIT", 8)
    types = [type(f"Leaf{i}", (), {}) for i in range(20)]
    objs = [t() for t in types]
    assert tree_leaves(objs) == objs
    assert tree_leaves([Box(1, 2), Point(3, 4), {"a": 5}]) == [1, 2, 3, 4, 5]


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


def test_partial_is_a_pytree() -> None:
    def f(a: int, b: int, *, c: int) -> int:
        return a * 100 + b * 10 + c

    p = Partial(f, 1, c=3)
    assert p(2) == 123
    leaves, treedef = tree_flatten(p)
    assert leaves == [1, 3]
    doubled = tree_map(lambda x: x * 2, p)
    assert isinstance(doubled, Partial)
    assert doubled.func is f
    assert doubled(2) == 226
    assert tree_structure(Partial(f, 5, c=6)) == treedef
    assert tree_structure(Partial(max, 5, c=6)) != treedef


def test_nested_partial_merges_arguments() -> None:
    p = Partial(Partial(lambda *a, **k: (a, k), 1, x=1), 2, y=2)
    assert p.args == (1, 2)
    assert p.keywords == {"x": 1, "y": 2}
    assert tree_leaves(p) == [1, 2, 1, 2]
    assert p() == ((1, 2), {"x": 1, "y": 2})


def test_plain_functools_partial_is_a_leaf() -> None:
    p = functools.partial(max, 1)
    assert tree_leaves([p]) == [p]


# ---------------------------------------------------------------------------
# The tree namespace
# ---------------------------------------------------------------------------


def test_tree_namespace_aliases() -> None:
    pairs: list[tuple[Callable[..., Any], Callable[..., Any]]] = [
        (tree.map, tree_map),
        (tree.leaves, tree_leaves),
        (tree.structure, tree_structure),
        (tree.flatten, tree_flatten),
        (tree.unflatten, tree_unflatten),
        (tree.all, tree_all),
        (tree.reduce, tree_reduce),
        (tree.transpose, tree_transpose),
        (tree.map_with_path, tree_map_with_path),
        (tree.leaves_with_path, tree_leaves_with_path),
        (tree.flatten_with_path, tree_flatten_with_path),
        (tree.broadcast, tree_util.tree_broadcast),
        (tree.reduce_associative, tree_util.tree_reduce_associative),
    ]
    for alias, original in pairs:
        assert alias is original
    assert sorted(tree.__all__) == sorted(
        [
            "map",
            "leaves",
            "structure",
            "flatten",
            "unflatten",
            "all",
            "reduce",
            "transpose",
            "broadcast",
            "reduce_associative",
            "static",
            "map_with_path",
            "leaves_with_path",
            "flatten_with_path",
        ]
    )
    assert tree.map(lambda x: x + 1, {"a": (1, 2)}) == {"a": (2, 3)}


def test_tree_util_all_names_exist() -> None:
    for name in tree_util.__all__:
        assert hasattr(tree_util, name), name


# ---------------------------------------------------------------------------
# Generated trees
# ---------------------------------------------------------------------------

leaf_values = st.one_of(
    st.integers(-5, 5), st.text(max_size=2), st.booleans(), st.builds(Tag, st.sampled_from("ab"))
)
dict_keys = st.text(alphabet="abcde", min_size=1, max_size=2)


def _containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.lists(children, max_size=4).map(tuple),
        st.lists(children, max_size=4),
        st.dictionaries(dict_keys, children, max_size=4),
        st.dictionaries(dict_keys, children, max_size=4).map(
            lambda d: collections.OrderedDict(reversed(list(d.items())))
        ),
        st.dictionaries(dict_keys, children, max_size=3).map(lambda d: collections.defaultdict(list, d)),
        st.builds(Point, children, children),
        st.builds(Box, children, children, st.sampled_from(["t", "u"])),
        st.builds(Pair, children, children),
        st.builds(Keyed, children, children),
        st.builds(Params, children, children, st.sampled_from(["p", "q"])),
        st.builds(Partial, st.just(max), children, children),
    )


pytrees = st.recursive(st.one_of(st.none(), leaf_values), _containers, max_leaves=25)

HYP = settings(max_examples=150, deadline=None, database=None)


def _partial_equal(a: Any, b: Any) -> bool:
    return (
        type(a) is type(b) is Partial
        and a.func is b.func
        and same_tree_or_partial(a.args, b.args)
        and same_tree_or_partial(a.keywords, b.keywords)
    )


def same_tree_or_partial(a: Any, b: Any) -> bool:
    if isinstance(a, Partial):
        return _partial_equal(a, b)
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return (
            set(a) == set(b)
            and all(same_tree_or_partial(a[k], b[k]) for k in a)
            and (not isinstance(a, collections.OrderedDict) or list(a) == list(b))
        )
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same_tree_or_partial(x, y) for x, y in zip(a, b))
    for cls, attrs in (
        (Box, ("a", "b", "tag")),
        (Pair, ("first", "second")),
        (Keyed, ("lo", "hi")),
        (Params, ("w", "b", "name")),
    ):
        if isinstance(a, cls):
            return all(same_tree_or_partial(getattr(a, n), getattr(b, n)) for n in attrs)
    return bool(a == b)


@HYP
@given(pytrees)
def test_generated_round_trip(t: Any) -> None:
    leaves, treedef = tree_flatten(t)
    assert treedef.num_leaves == len(leaves)
    assert same_tree_or_partial(tree_unflatten(treedef, leaves), t)
    assert tree_leaves(t) == leaves
    assert tree_structure(tree_unflatten(treedef, list(range(len(leaves))))) == treedef
    assert pickle.loads(pickle.dumps(treedef)) == treedef
    assert treedef.flatten_up_to(t) == leaves
    assert treedef.num_nodes >= treedef.num_leaves
    # Re-flattening gives an equal treedef with an equal hash.
    again = tree_structure(tree_unflatten(treedef, leaves))
    assert again == treedef
    assert hash(again) == hash(treedef)


@HYP
@given(pytrees)
def test_generated_paths_locate_leaves(t: Any) -> None:
    pairs, treedef = tree_flatten_with_path(t)
    assert treedef == tree_structure(t)
    assert [leaf for _, leaf in pairs] == tree_leaves(t)
    paths = [p for p, _ in pairs]
    assert len(set(paths)) == len(paths)
    for path, leaf in pairs:
        assert follow(t, path) is leaf


@HYP
@given(pytrees)
def test_generated_tree_map_matches_leafwise_map(t: Any) -> None:
    leaves, treedef = tree_flatten(t)
    mapped = tree_map(lambda x: ("m", x), t)
    assert tree_leaves(mapped, is_leaf=lambda x: isinstance(x, tuple) and x[:1] == ("m",)) == [
        ("m", x) for x in leaves
    ]
    indices = tree_unflatten(treedef, list(range(len(leaves))))
    assert tree_leaves(tree_map(lambda a, b: b, t, indices)) == list(range(len(leaves)))


@HYP
@given(st.lists(pytrees, min_size=1, max_size=3))
def test_generated_children_and_tuple(ts: list[Any]) -> None:
    treedef = tree_structure(tuple(ts))
    assert treedef.children() == [tree_structure(x) for x in ts]
    assert treedef_tuple(tree_structure(x) for x in ts) == treedef


def test_a_dict_with_unsortable_keys_is_a_value_error_as_in_jax() -> None:
    with pytest.raises(ValueError, match=r"a dict whose keys cannot be sorted is not a pytree .* sorting the keys "
                                         r"\[1, 'a'\] raised '<' not supported"):
        tree_util.tree_map(lambda v: v, {1: 1, "a": 2})
    with pytest.raises(ValueError, match=r"a dict whose keys cannot be sorted is not a pytree"):
        tree_flatten({"a": 'A', 2: 'two', 1: 'one'})


def test_is_leaf_takes_path() -> None:
    # JAX 0.10.2: with is_leaf_takes_path=True, is_leaf(path, subtree) decides (flax.nnx uses it).
    tree = {"a": [1, 2], "b": [3, 4]}

    def under_a(path: tuple[Any, ...], x: Any) -> bool:
        return len(path) == 1 and path[0].key == "a"

    pairs, treedef = tree_util.tree_flatten_with_path(tree, is_leaf=under_a, is_leaf_takes_path=True)
    assert [(tree_util.keystr(p), x) for p, x in pairs] == [("['a']", [1, 2]), ("['b'][0]", 3), ("['b'][1]", 4)]
    assert treedef.num_leaves == 3
    assert tree_util.tree_map_with_path(
        lambda p, x: len(p), tree, is_leaf=under_a, is_leaf_takes_path=True
    ) == {"a": 1, "b": [2, 2]}
    assert [x for _, x in tree_util.tree_leaves_with_path(tree, under_a, True)] == [[1, 2], 3, 4]
    # without the flag is_leaf gets the subtree alone
    with pytest.raises(TypeError, match="missing 1 required positional argument"):
        tree_util.tree_flatten_with_path(tree, is_leaf=under_a)
