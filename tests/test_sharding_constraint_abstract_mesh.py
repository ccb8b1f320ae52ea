"""``with_sharding_constraint(x, NamedSharding(get_abstract_mesh(), spec))`` under
``set_mesh(mesh)`` means ``mesh``'s devices, as in JAX 0.10.2 (flax.nnx builds
its Variables' shardings over the abstract mesh) (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

import plait
from plait import numpy as jnp
from plait.sharding import AbstractMesh, NamedSharding, PartitionSpec


def test_abstract_mesh_of_the_context_mesh_resolves() -> None:
    mesh = plait.make_mesh((1,), ("x",))
    x = jnp.arange(4.0)
    with plait.set_mesh(mesh):
        abstract = plait.sharding.get_abstract_mesh()
        assert abstract == mesh.abstract_mesh
        y = plait.lax.with_sharding_constraint(x, NamedSharding(abstract, PartitionSpec("x")))
        z = plait.jit(lambda v: plait.lax.with_sharding_constraint(v, NamedSharding(abstract, PartitionSpec("x"))))(x)
    for out in (y, z):
        np.testing.assert_array_equal(np.asarray(out), [0.0, 1.0, 2.0, 3.0])
        assert out.sharding.mesh == mesh


def test_an_abstract_mesh_without_its_devices_is_still_an_error() -> None:
    other = AbstractMesh((1,), ("y",))
    with pytest.raises(ValueError, match="refers to an abstract mesh, which has no devices"):
        plait.lax.with_sharding_constraint(jnp.arange(4.0), NamedSharding(other, PartitionSpec("y")))
