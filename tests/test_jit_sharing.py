"""JAX's caching semantics: jit(f) made twice shares one cache, and pytree nodes
whose aux data is not hashable (a dict) are jit arguments like any other."""

from __future__ import annotations

import gc
import weakref
from typing import Any

import numpy as np

import plait
import plait.numpy as pnp
from plait import tree_util


def test_jit_of_the_same_function_twice_shares_one_cache() -> None:
    traces: list[int] = []

    def f(x: Any) -> Any:
        traces.append(1)
        return x + 1

    x = pnp.ones(3)
    plait.jit(f)(x)
    plait.jit(f)(x)  # a new wrapper, the same function and options: no new trace
    assert len(traces) == 1
    np.testing.assert_array_equal(np.asarray(plait.jit(f, donate_argnums=0)(pnp.ones(3))), 2.0)
    assert len(traces) == 2  # other options: a cache of their own


def test_the_shared_cache_dies_with_its_function() -> None:
    def f(x: Any) -> Any:
        return x * 3

    ref = weakref.ref(f)
    np.testing.assert_array_equal(np.asarray(plait.jit(f)(pnp.ones(2))), 3.0)
    lowered = plait.jit(f).lower(np.ones(2, np.float32))
    del f
    gc.collect()
    assert ref() is None
    np.testing.assert_array_equal(np.asarray(lowered.compile()(np.ones(2, np.float32))), 3.0)


def test_unhashable_aux_data_in_a_jit_argument() -> None:
    class Node:
        def __init__(self, v: Any, meta: dict[str, float]) -> None:
            self.v, self.meta = v, meta

    tree_util.register_pytree_node(Node, lambda n: ((n.v,), n.meta), lambda m, c: Node(c[0], m))
    traces: list[int] = []

    def scale(n: Node) -> Any:
        traces.append(1)
        return n.v * n.meta["a"]

    jitted, x = plait.jit(scale), pnp.ones(2)
    got = [float(jitted(Node(x, {"a": a}))[0]) for a in (1.0, 2.0, 1.0, 2.0)]
    assert got == [1.0, 2.0, 1.0, 2.0] and len(traces) == 2


def test_eval_shape_does_not_trace_again() -> None:
    traces: list[int] = []

    def f(x: Any, s: Any) -> Any:
        traces.append(1)
        return x * s

    x = pnp.ones(3)
    out = [plait.eval_shape(f, x, s) for s in (2.0, 3.0)]
    assert len(traces) == 1 and out[0].shape == (3,) and not out[1].weak_type
