"""vmap rebuilds its outputs under the caller's trace, as JAX does: a pytree node
whose unflatten looks at the current trace (flax.nnx's Variables remember the
trace they were made under, and refuse updates from another) sees the caller's,
not the finished vmap's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_batching import Pile, pile_axis, vmap
from plait_core import current_trace
from plait_core.tree_util import register_pytree_node


class Box:
    """A node that records the trace current when it was rebuilt."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.made_under = current_trace()


register_pytree_node(Box, lambda b: ((b.value,), None), lambda _, children: Box(children[0]))


def test_vmap_output_nodes_are_rebuilt_under_the_callers_trace() -> None:
    outer = current_trace()
    out = vmap(lambda x: Box(x * 2.0))(np.arange(3.0, dtype=np.float32))
    assert isinstance(out, Box)
    assert out.made_under is outer
    np.testing.assert_allclose(np.asarray(out.value), [0.0, 2.0, 4.0])


@pytest.mark.parametrize("out_axes", [0, (0, 1)])
def test_nested_output_containers_too(out_axes: Any) -> None:
    outer = current_trace()
    outs = vmap(lambda x: (Box(x), Box(x + 1.0)), out_axes=out_axes)(np.ones((2, 2), np.float32))
    assert all(b.made_under is outer for b in outs)
    np.testing.assert_allclose(np.asarray(outs[1].value), np.full((2, 2), 2.0))


def test_pile_outputs_too() -> None:
    outer = current_trace()
    pile = Pile.from_arrays([np.ones(2, np.float32), np.ones(3, np.float32)])
    out = vmap(lambda x: Box(x * 3.0), in_axes=pile_axis, out_axes=pile_axis)(pile)
    assert out.made_under is outer
