"""The C++ flattener of the cached jit call against core's tree_util, and the
jit fast path over pytrees, host scalars, static and keyword arguments."""

from __future__ import annotations

import collections
import dataclasses
import sys
from typing import Any, NamedTuple

import numpy as np
import pytest

import plait_dispatch as plait
from plait_core import DeletedArrayError
from plait_core import tree_util as tu
from plait_core.config import enable_x64
from plait_dispatch import fast_tree

jit_module: Any = sys.modules["plait_dispatch.jit"]
jit_fast: Any = sys.modules["plait_dispatch.jit_fast"]


class Point(NamedTuple):
    x: Any
    y: Any


@dataclasses.dataclass
class Params:
    w: Any
    b: Any
    name: str = dataclasses.field(default="p", metadata={"static": True})


tu.register_dataclass(Params)


class Box:
    """A custom node registered after plait_dispatch was imported."""

    def __init__(self, items: Any, tag: str) -> None:
        self.items = items
        self.tag = tag

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Box) and self.items == other.items and self.tag == other.tag


tu.register_pytree_node(Box, lambda b: (iter(b.items), b.tag), lambda tag, kids: Box(list(kids), tag))


def _trees() -> list[Any]:
    return [
        1,
        None,
        (),
        [],
        {},
        (1, 2),
        [1, [2, (3, None)]],
        {"b": 1, "a": 2, "c": [3, 4]},
        {"a": {"z": 1, "y": (2,)}, "b": None},
        collections.OrderedDict([("z", 1), ("a", 2)]),
        collections.OrderedDict([("a", 2), ("z", 1)]),
        collections.defaultdict(list, {"q": 1, "p": [2, 3]}),
        collections.defaultdict(dict, {"q": 1, "p": [2, 3]}),
        Point(1, (2, 3)),
        Params(1, [2, 3]),
        Params(1, [2, 3], name="q"),
        Box([1, 2, {"k": 3}], "t"),
        Box([1, 2, {"k": 3}], "u"),
        tu.Partial(max, 1, 2),
        [{"w": 1, "b": 2}, {"w": 3, "b": 4}],
        ((1, 2), {}),
        ((1,), {"kw": 2}),
    ]


def test_flatteners_agree_on_leaves_and_rebuild() -> None:
    for tree in _trees():
        core_leaves, core_def = tu.tree_flatten(tree)
        cpp_leaves, cpp_def = fast_tree.flatten(tree)
        assert cpp_leaves == core_leaves, tree
        assert cpp_def.num_leaves == core_def.num_leaves
        structure = fast_tree.structure_of(core_def)
        assert structure == cpp_def, tree
        marks = [object() for _ in core_leaves]
        rebuilt = cpp_def.unflatten(marks)
        assert tu.tree_structure(rebuilt) == core_def
        assert tu.tree_leaves(rebuilt) == marks


def test_flatteners_agree_on_structure_equality() -> None:
    trees = _trees()
    for a in trees:
        for b in trees:
            same_core = tu.tree_structure(a) == tu.tree_structure(b)
            same_cpp = fast_tree.flatten(a)[1] == fast_tree.flatten(b)[1]
            assert same_core == same_cpp, (a, b)


def test_unsortable_dict_keys_leave_it_to_core() -> None:
    with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
        fast_tree.flatten({1: 1, "a": 2})
    f = plait.jit(lambda d: d)
    with pytest.raises(ValueError, match="keys cannot be sorted"):
        f({1: 1.0, "a": 2.0})


def _arr(v: Any) -> Any:
    return plait.device_put(np.asarray(v, np.float32))


def _handlers(f: Any) -> int:
    return sum(len(v) for v in jit_module.jit_state(f).tree_fast.values())


def test_dict_and_nested_pytree_take_the_fast_path() -> None:
    f = plait.jit(lambda t: tu.tree_map(lambda v: v * 2.0, t))
    tree = {"params": [{"w": _arr([1.0, 2.0]), "b": _arr(3.0)}], "opt": (Point(_arr(4.0), None),)}
    for _ in range(3):
        out = f(tree)
        np.testing.assert_array_equal(np.asarray(out["params"][0]["w"]), [2.0, 4.0])
        assert float(out["params"][0]["b"]) == 6.0
        assert isinstance(out["opt"][0], Point) and out["opt"][0].y is None
        assert float(out["opt"][0].x) == 8.0
    assert _handlers(f) == 1
    assert f._cache_size() == 1


def test_custom_nodes_take_the_fast_path() -> None:
    f = plait.jit(lambda p, b: (Params(p.w + 1.0, p.b, p.name), Box([b.items[0] * 3.0], b.tag)))
    p, b = Params(_arr(1.0), _arr(2.0), name="z"), Box([_arr(5.0)], "t")
    for _ in range(3):
        p2, b2 = f(p, b)
        assert isinstance(p2, Params) and p2.name == "z" and float(p2.w) == 2.0
        assert isinstance(b2, Box) and b2.tag == "t" and float(b2.items[0]) == 15.0
    assert _handlers(f) == 1
    # Other static data in the node: another signature.
    p3, _ = f(Params(_arr(1.0), _arr(2.0), name="y"), b)
    assert p3.name == "y"
    assert f._cache_size() == 2


def test_host_scalars_by_value() -> None:
    f = plait.jit(lambda a, s, n: a * s + n)
    x = _arr([1.0, 2.0])
    for s, n in [(2.0, 3), (2.0, 3), (5.0, 1), (2.0, 3), (0.0, 3), (-0.0, 3), (True, 2)]:
        out = f(x, s, n)
        np.testing.assert_array_equal(np.asarray(out), np.array([1.0, 2.0], np.float32) * s + n)
        assert out.dtype == np.float32
    assert _handlers(f) >= 1
    assert f._cache_size() == 2  # (float, int) and (bool, int)


def test_static_and_keyword_arguments() -> None:
    f = plait.jit(lambda a, n, *, k: a * n + k, static_argnums=1)
    x = _arr([1.0, 2.0])
    for n in (2, 3, 2, 3):
        np.testing.assert_array_equal(np.asarray(f(x, n, k=_arr(1.0))), [n + 1.0, 2 * n + 1.0])
    assert f._cache_size() == 2
    g = plait.jit(lambda a, n: a * n, static_argnames="n")
    for n in (2.0, 2, 2.0):
        out = g(x, n=n)
        assert float(out[1]) == 2.0 * n
    assert g._cache_size() == 2  # 2.0 and 2 are different static values
    with pytest.raises(ValueError, match="unhashable"):
        g(x, n=[1])


def test_deleted_leaf_in_a_pytree_raises() -> None:
    f = plait.jit(lambda d: d["a"] + d["b"])
    d = {"a": _arr(1.0), "b": _arr(2.0)}
    for _ in range(2):
        assert float(f(d)) == 3.0
    d["b"].delete()
    with pytest.raises(DeletedArrayError, match="deleted"):
        f(d)


def test_donated_leaf_in_a_pytree() -> None:
    f = plait.jit(lambda d: {"a": d["a"] * 2.0, "b": d["b"]}, donate_argnums=0)
    d = {"a": _arr([1.0, 2.0]), "b": _arr(3.0)}
    for k in range(3):
        old = d
        d = f(d)
        assert old["a"].is_deleted() and old["b"].is_deleted()
        np.testing.assert_array_equal(np.asarray(d["a"]), [2.0 ** (k + 1), 2.0 ** (k + 2)])
    with pytest.raises(DeletedArrayError, match="donated"):
        np.asarray(old["a"])


def test_committed_leaf_keeps_its_device() -> None:
    f = plait.jit(lambda d: d["a"] * 2.0)
    dev = plait.devices()[0]
    d = {"a": plait.device_put(np.float32(1.0), dev)}
    for _ in range(2):
        out = f(d)
        assert out.committed and float(out) == 2.0
    u = f({"a": _arr(1.0)})
    assert not u.committed


def test_x64_flag_is_part_of_the_signature() -> None:
    f = plait.jit(lambda d, s: d["a"] + s)
    d = {"a": _arr(1.0)}
    assert f(d, 1.5).dtype == np.float32
    assert f(d, 1.5).dtype == np.float32
    with enable_x64(True):
        out = f(d, 1.5)
        assert float(out) == 2.5 and out.dtype == np.float32
        assert f({"a": plait.device_put(np.float64(1.0))}, 1.5).dtype == np.float64
    assert f(d, 1.5).dtype == np.float32


def test_pytree_calls_from_eight_threads() -> None:
    import threading

    f = plait.jit(lambda t, s: {"sum": t["a"] + t["b"][0], "scaled": [v * s for v in t["b"]]})
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(k: int) -> None:
        try:
            barrier.wait()
            for r in range(30):
                a, b0, b1 = float(k), float(r), float(k + r)
                out = f({"a": _arr(a), "b": [_arr(b0), _arr(b1)]}, float(r + 1))
                assert float(out["sum"]) == a + b0
                assert [float(v) for v in out["scaled"]] == [b0 * (r + 1), b1 * (r + 1)]
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors[0]
    assert f._cache_size() == 1
    assert _handlers(f) >= 1


def test_static_positional_calls_with_arrays() -> None:
    f = plait.jit(lambda a, n, b: a * n + b, static_argnums=1, donate_argnums=2)
    x = _arr([1.0, 2.0])
    for n in (2, 3, 2):
        b = _arr([10.0, 20.0])
        out = f(x, n, b)
        np.testing.assert_array_equal(np.asarray(out), [n + 10.0, 2 * n + 20.0])
        assert b.is_deleted() and not x.is_deleted()
    assert f._cache_size() == 2
    assert len(jit_module.jit_state(f).fast) == 2
    dead = _arr([1.0, 2.0])
    dead.delete()
    with pytest.raises(DeletedArrayError, match="deleted"):
        f(dead, 2, _arr([0.0, 0.0]))
    g = plait.jit(lambda a, n: a * n, static_argnums=1)
    assert float(g(_arr(2.0), 3)[()]) == 6.0
    assert float(g(_arr(2.0), 3)[()]) == 6.0
    committed = g(plait.device_put(np.float32(2.0), plait.devices()[0]), 3)
    assert committed.committed and float(committed) == 6.0
    with pytest.raises(ValueError, match="unhashable"):
        g(_arr(2.0), [3])


def test_a_signature_under_both_x64_settings_keeps_both_handlers() -> None:
    f = plait.jit(lambda d: d["a"] * 2)
    d = {"a": _arr([1.0, 2.0])}
    for _ in range(2):
        assert f(d).dtype == np.float32
        with enable_x64(True):
            assert f(d).dtype == np.float32
    assert _handlers(f) == 2
    with enable_x64(True):
        np.testing.assert_array_equal(np.asarray(f(d)), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(f(d)), [2.0, 4.0])


def test_many_signatures_of_one_structure_all_take_the_fast_path() -> None:
    # A loop over sequences of many lengths (one signature each, one pytree
    # structure): past the scanned first few, all are found by their types'
    # hash; none is left to the general path on every call.
    f = plait.jit(lambda p, x: {"s": (x @ p["w"]).sum() + p["b"], "n": x.shape[0] * p["b"]})
    p = {"w": _arr(np.ones((3, 2))), "b": _arr(1.0)}
    xs = [_arr(np.full((n, 3), n)) for n in range(1, 15)]
    for x in xs:  # compiles each length; installs its handler
        f(p, x)
    state = jit_module.jit_state(f)
    assert _handlers(f) == jit_fast.TREE_SCAN
    (more,) = state.tree_more.values()
    assert len(more) == len(xs)  # all of them, the scanned first few too
    before = plait.stats.snapshot()["trace_hits"]
    for n, x in zip(range(1, 15), xs):
        out = f(p, x)
        assert float(out["s"]) == 2.0 * 3 * n * n + 1.0 and float(out["n"]) == n
    assert plait.stats.snapshot()["trace_hits"] == before  # none went through the tracing cache
    state.clear_cache()
    assert not state.tree_more and not state.tree_fast
