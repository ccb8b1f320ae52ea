"""``jnp.einsum`` and ``lax.conv_general_dilated`` take ``out_sharding`` as JAX
0.10.2's do (flax.nnx's Einsum and Conv pass it, ``None`` by default): the values
are those without it, laid out as asked (issue 25)."""

from __future__ import annotations

import numpy as np

import plait
from plait import lax
from plait import numpy as jnp
from plait.sharding import NamedSharding, PartitionSpec


def test_einsum_out_sharding() -> None:
    a = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    b = np.arange(8.0, dtype=np.float32).reshape(4, 2)
    np.testing.assert_allclose(np.asarray(jnp.einsum("ij,jk->ik", a, b, out_sharding=None)), a @ b)
    mesh = plait.make_mesh((1,), ("x",))
    want = NamedSharding(mesh, PartitionSpec("x", None))
    out = jnp.einsum("ij,jk->ik", a, b, out_sharding=want)
    np.testing.assert_allclose(np.asarray(out), a @ b)
    assert out.sharding == jnp.dot(a, b, out_sharding=want).sharding  # laid out as dot's out_sharding does
    assert out.sharding.mesh == mesh


def test_conv_general_dilated_out_sharding() -> None:
    x = np.arange(2 * 5 * 5 * 3, dtype=np.float32).reshape(2, 5, 5, 3) / 10
    w = np.ones((3, 3, 3, 4), np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    plain = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
    none = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn, out_sharding=None)
    np.testing.assert_array_equal(np.asarray(none), np.asarray(plain))
    assert float(plain[0, 2, 2, 0]) == float(np.sum(x[0, 1:4, 1:4, :]))
    mesh = plait.make_mesh((1,), ("x",))
    want = NamedSharding(mesh, PartitionSpec("x"))
    out = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn, out_sharding=want)
    np.testing.assert_allclose(np.asarray(out), np.asarray(plain))
    assert out.sharding == jnp.dot(x, w, out_sharding=want).sharding  # laid out as dot's out_sharding does
    assert out.sharding.mesh == mesh


def test_out_sharding_over_the_empty_abstract_mesh_asks_for_nothing() -> None:
    # typeof(x).sharding outside every mesh (flax.nnx's Dropout passes it to bernoulli): as in JAX, a no-op.
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    none = plait.typeof(jnp.asarray(a)).sharding
    assert none.mesh.empty
    out = jnp.einsum("ij,kj->ik", a, a, out_sharding=none)
    np.testing.assert_allclose(np.asarray(out), a @ a.T)
    assert out.sharding == jnp.einsum("ij,kj->ik", a, a).sharding
    key = plait.random.key(0)
    drawn = plait.jit(lambda k: plait.random.bernoulli(k, 0.5, (2, 3), out_sharding=none))(key)
    np.testing.assert_array_equal(np.asarray(drawn), np.asarray(plait.random.bernoulli(key, 0.5, (2, 3))))
