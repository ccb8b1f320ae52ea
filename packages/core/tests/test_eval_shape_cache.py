"""eval_shape caches its trace per function and argument signature, as JAX does."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core
from plait_core.tree_util import register_pytree_node, tree_structure


def test_a_second_call_with_the_same_signature_does_not_trace_again() -> None:
    traces: list[int] = []

    def f(x: Any, s: Any) -> Any:
        traces.append(1)
        return {"y": x * s}

    x = np.ones(3, np.float32)
    first = plait_core.eval_shape(f, x, 2.0)
    second = plait_core.eval_shape(f, x, 3.0)  # a weak float again: same signature
    assert len(traces) == 1
    assert second == first and second["y"].shape == (3,) and second["y"].dtype == np.float32
    assert first is not second  # each call gets its own tree
    plait_core.eval_shape(f, x, np.float32(3.0))  # a strong scalar: a new signature
    plait_core.eval_shape(f, np.ones(4, np.float32), 2.0)  # a new shape
    assert len(traces) == 3


def test_treedefs_with_unhashable_aux_data_hash_and_compare() -> None:
    class Node:
        def __init__(self, v: Any, meta: dict[str, int]) -> None:
            self.v, self.meta = v, meta

    register_pytree_node(Node, lambda n: ((n.v,), n.meta), lambda m, c: Node(c[0], m))
    a, b, c = (tree_structure(Node(1.0, m)) for m in ({"k": 1}, {"k": 1}, {"k": 2}))
    assert hash(a) == hash(b) and a == b and a != c
    assert len({a, b, c}) == 2
