"""Checks of issue #13's device names on 8 CPU devices, run by
``test_device_config_debug_names.py`` in a subprocess with
``PLAIT_NUM_CPU_DEVICES=8``.  The sharding tables are the text JAX 0.10.2
prints (``jax.debug.visualize_sharding`` without colours); the collectives'
values are JAX's on CPU (``pbroadcast``: its documented definition, since
JAX has no CPU lowering of it)."""

from __future__ import annotations

import contextlib
import io
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax
from plait.sharding import NamedSharding, P

X = np.arange(32, dtype=np.float32).reshape(8, 4)


@pytest.fixture(scope="module")
def mesh() -> Any:
    return plait.make_mesh((4, 2), ("a", "b"))


def _table(shape: tuple[int, ...], sharding: Any, **kwargs: Any) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        plait.debug.visualize_sharding(shape, sharding, **kwargs)
    return buf.getvalue()


JAX_TABLES = {
    "ab": "┌───────┬───────┐\n│ CPU 0 │ CPU 1 │\n├───────┼───────┤\n│ CPU 2 │ CPU 3 │\n├───────┼───────┤\n"
          "│ CPU 4 │ CPU 5 │\n├───────┼───────┤\n│ CPU 6 │ CPU 7 │\n└───────┴───────┘\n",
    "a": "┌──────────┐\n│ CPU 0,1  │\n├──────────┤\n│ CPU 2,3  │\n├──────────┤\n│ CPU 4,5  │\n├──────────┤\n"
         "│ CPU 6,7  │\n└──────────┘\n",
    "flat": "┌" + "┬".join(["───────"] * 8) + "┐\n│" + "│".join(f" CPU {i} " for i in range(8)) + "│\n└"
            + "┴".join(["───────"] * 8) + "┘\n",
    "b": "┌───────────┬───────────┐\n" + "│           │           │\n" * 4 + "│CPU 0,2,4,6│CPU 1,3,5,7│\n"
         + "│           │           │\n" * 4 + "└───────────┴───────────┘\n",
    "rep1d": "┌───────────────────┐\n│CPU 0,1,2,3,4,5,6,7│\n└───────────────────┘\n",
}  # fmt: skip


def test_visualize_sharding_prints_jaxs_tables(mesh: Any) -> None:
    assert _table((8, 4), NamedSharding(mesh, P("a", "b"))) == JAX_TABLES["ab"]
    assert _table((8, 4), NamedSharding(mesh, P("a"))) == JAX_TABLES["a"]
    assert _table((32,), NamedSharding(mesh, P(("a", "b")))) == JAX_TABLES["flat"]
    assert _table((8, 4), NamedSharding(mesh, P(None, "b"))) == JAX_TABLES["b"]
    assert _table((8,), NamedSharding(mesh, P())) == JAX_TABLES["rep1d"]
    big = "│          │          │          │          │\n"
    row = "│  CPU {}   │  CPU {}   │  CPU {}   │  CPU {}   │\n"
    assert _table((4, 8), NamedSharding(mesh, P("b", "a"))) == (
        "┌──────────┬──────────┬──────────┬──────────┐\n" + big + row.format(0, 2, 4, 6) + big * 2
        + "├──────────┼──────────┼──────────┼──────────┤\n" + big + row.format(1, 3, 5, 7) + big * 2
        + "└──────────┴──────────┴──────────┴──────────┘\n"
    )
    x = plait.device_put(X, NamedSharding(mesh, P("a", "b")))
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        plait.debug.visualize_array_sharding(x)
    assert buf.getvalue() == JAX_TABLES["ab"]
    seen: list[Any] = []
    plait.debug.inspect_array_sharding(x, callback=seen.append)
    assert seen == [NamedSharding(mesh, P("a", "b"))]


def test_collectives_under_shard_map_and_pmap(mesh: Any) -> None:
    m = plait.make_mesh((4,), ("i",))
    x = np.arange(12.0, dtype=np.float32).reshape(4, 3)

    def sm(f: Any, v: Any) -> Any:
        return plait.shard_map(f, mesh=m, in_specs=P("i"), out_specs=P("i"))(v)

    np.testing.assert_array_equal(np.asarray(sm(lambda v: lax.pbroadcast(v, "i", 2), x)), np.tile(x[2], (4, 1)))
    np.testing.assert_array_equal(np.asarray(sm(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]), x)), np.roll(x, -1, 0))
    y = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    swapped = plait.jit(lambda v: sm(lambda b: lax.pswapaxes(b, "i", 1), v))(y)
    np.testing.assert_array_equal(np.asarray(swapped), y.T)  # JAX: [[0, 4, 8, 12], ...]
    np.testing.assert_array_equal(np.asarray(sm(lambda v: v * lax.axis_size("i"), x)), x * 4)
    two = plait.shard_map(lambda v: v * 0 + lax.axis_size(("a", "b")), mesh=mesh, in_specs=P("a", "b"),
                          out_specs=P("a", "b"))(X)  # fmt: skip
    np.testing.assert_array_equal(np.asarray(two), np.full((8, 4), 8.0))
    np.testing.assert_array_equal(np.asarray(plait.pmap(lambda v: lax.pbroadcast(v, "i", 3), axis_name="i")(x)),
                                  np.tile(x[3], (4, 1)))  # fmt: skip


def test_smap_and_set_mesh_over_devices() -> None:
    m = plait.make_mesh((8,), ("x",))
    with plait.set_mesh(m):
        f = plait.smap(lambda a, b: a * b + lax.axis_index("x"), in_axes=(0, None), out_axes=0, axis_name="x")
        got = f(pnp.zeros(16), 3.0)
        np.testing.assert_array_equal(np.asarray(got), np.repeat(np.arange(8.0), 2))
        assert got.sharding == NamedSharding(m, P("x"))
        r = plait.reshard(pnp.arange(16.0), P("x"))
        assert r.sharding == NamedSharding(m, P("x"))
        put = plait.device_put(np.arange(16.0, dtype=np.float32), P("x"))
        assert put.sharding == NamedSharding(m, P("x")) and len(put.addressable_shards) == 8
        np.testing.assert_array_equal(np.asarray(put.addressable_shards[3].data), [6.0, 7.0])
        cols = plait.smap(lambda a: a * 2, in_axes=1, out_axes=1, axis_name="x")(pnp.ones((2, 8)))
        assert cols.sharding == NamedSharding(m, P(None, "x"))
    with plait.set_mesh(plait.make_mesh((4, 2), ("a", "b"))), pytest.raises(
        NotImplementedError, match="mapping only some mesh axes manually is not supported"
    ):
        plait.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="a")(pnp.ones(8))


def test_shard_constructor_finds_index_and_replica(mesh: Any) -> None:
    s = NamedSharding(mesh, P("a"))
    devs = plait.devices()
    first = plait.Shard(devs[2], s, (8, 4))
    second = plait.Shard(devs[3], s, (8, 4))
    assert first.index == second.index == (slice(2, 4), slice(None))
    assert (first.replica_id, second.replica_id) == (0, 1)
    x = plait.device_put(X, s)
    assert [(p.index, p.replica_id) for p in x.addressable_shards][2:4] == [
        ((slice(2, 4), slice(None)), 0), ((slice(2, 4), slice(None)), 1)
    ]


def test_default_device_moves_uncommitted_work() -> None:
    d0, d1 = plait.devices()[:2]
    f = plait.jit(lambda a: a * 2)
    x = pnp.ones(3)
    assert f(x).devices() == {d0}
    with plait.default_device(d1):
        y = pnp.ones(3)
        assert y.devices() == {d1} and not y.committed
        assert f(x).devices() == {d1} and (x + 1).devices() == {d1}
        assert plait.device_put(np.ones(2)).devices() == {d1}
        z = plait.device_put(np.ones(2), d0)  # committed values stay where they are put
        assert (z + 1).devices() == {d0} and f(z).devices() == {d0}
    assert f(x).devices() == {d0} and (x + 1).devices() == {d0} and pnp.ones(3).devices() == {d0}
    assert f(y).devices() == {d0}  # an uncommitted value follows the computation
