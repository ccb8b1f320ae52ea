"""``shard_map(..., axis_names=set())`` maps every mesh axis, as JAX 0.10.2's
empty default does (flax.nnx passes ``axis_names=set()``; plait refused it as a
partial manual mapping) (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

import plait
from plait import lax
from plait import numpy as jnp
from plait.sharding import PartitionSpec as P


@pytest.mark.parametrize("axis_names", [set(), frozenset(), None, {"x"}])
def test_empty_axis_names_mean_all_axes(axis_names: object) -> None:
    mesh = plait.make_mesh((1,), ("x",))
    f = plait.shard_map(lambda a: lax.psum(a * 2, "x"), mesh=mesh, in_specs=P("x"), out_specs=P(),
                        axis_names=axis_names)
    np.testing.assert_array_equal(np.asarray(f(jnp.arange(4.0))), [0.0, 2.0, 4.0, 6.0])


def test_a_proper_subset_is_still_refused() -> None:
    mesh = plait.make_mesh((1, 1), ("x", "y"))
    with pytest.raises(NotImplementedError, match=r"shard_map\(axis_names=\{'x'\}\): mapping only some mesh axes"):
        plait.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})


def test_a_none_spec_over_an_output_none_asks_for_nothing() -> None:
    # flax.nnx's shard_map gives None specs for outputs that are None, as JAX allows.
    mesh = plait.make_mesh((1,), ("x",))
    f = plait.shard_map(lambda a: (a * 2, None), mesh=mesh, in_specs=P("x"), out_specs=(P("x"), None))
    doubled, nothing = f(jnp.arange(4.0))
    np.testing.assert_array_equal(np.asarray(doubled), [0.0, 2.0, 4.0, 6.0])
    assert nothing is None
    g = plait.shard_map(lambda a: (a * 2, a), mesh=mesh, in_specs=P("x"), out_specs=(P("x"), None))
    with pytest.raises(TypeError, match="out_specs has None where a PartitionSpec belongs"):
        g(jnp.arange(4.0))
