"""Checks on 8 CPU devices in one process, run by ``test_multidevice.py`` in a
subprocess with ``PLAIT_NUM_CPU_DEVICES=8`` (the device count is fixed when
the client starts, so other test modules keep theirs).  Oracles: NumPy."""

from __future__ import annotations

import gc
import os
from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import DeletedArrayError, lax
from plait_core.shard_map import shard_map
from plait_core.sharding import Mesh, NamedSharding, P, SingleDeviceSharding
from plait_dispatch import (
    device_count,
    device_put,
    devices,
    jit,
    local_device_count,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    process_count,
    process_index,
    spmd,
)
from plait_dispatch.cache import clear_caches, stats
from plait_dispatch.jit import jit_state
from plait_dispatch.pmap import pmap

X = np.arange(32, dtype=np.float32).reshape(8, 4)


@pytest.fixture(scope="module")
def mesh() -> Mesh:
    return make_mesh((4, 2), ("x", "y"))


def test_device_queries() -> None:
    assert device_count() == local_device_count() == 8
    assert [d.id for d in devices()] == list(range(8)) == [d.id for d in local_devices()]
    assert process_index() == 0 and process_count() == 1
    with pytest.raises(ValueError, match="needs 16 devices, but there are 8"):
        make_mesh((4, 4), ("a", "b"))


def test_single_device_arrays_have_a_sharding() -> None:
    a = device_put(X)
    assert a.sharding == SingleDeviceSharding(devices()[0]) and a.is_fully_replicated
    (shard,) = a.addressable_shards
    assert shard.device is devices()[0] and shard.index == (slice(None), slice(None))
    np.testing.assert_array_equal(np.asarray(shard.data), X)


@pytest.mark.parametrize(
    "spec, tiles, replicas",
    [(P("x", "y"), (4, 2), 1), (P("x"), (4, 1), 2), (P(None, "y"), (1, 2), 4), (P(("x", "y")), (8, 1), 1), (P(), (1, 1), 8)],
)
def test_device_put_lays_out_pieces(mesh: Mesh, spec: P, tiles: tuple[int, int], replicas: int) -> None:
    s = NamedSharding(mesh, spec)
    a = device_put(X, s)
    assert a.sharding == s and a.shape == (8, 4) and a.is_fully_replicated == (tiles == (1, 1))
    np.testing.assert_array_equal(np.asarray(a), X)
    shards = a.addressable_shards
    assert len(shards) == 8 and {sh.device for sh in shards} == set(devices())
    for sh in shards:
        assert sh.data.shape == (8 // tiles[0], 4 // tiles[1]) and sh.data.device is sh.device
        np.testing.assert_array_equal(np.asarray(sh.data), X[sh.index])
    assert sorted(sh.replica_id for sh in shards) == sorted(list(range(replicas)) * (8 // replicas))


def test_indices_follow_the_mesh(mesh: Mesh) -> None:
    idx = NamedSharding(mesh, P("x", "y")).devices_indices_map((8, 4))
    d = devices()
    assert idx[d[0]] == (slice(0, 2), slice(0, 2)) and idx[d[1]] == (slice(0, 2), slice(2, 4))
    assert idx[d[7]] == (slice(6, 8), slice(2, 4))


def test_uneven_split_is_a_value_error(mesh: Mesh) -> None:
    with pytest.raises(ValueError, match="dimension 0 of an array of shape \\(6, 4\\) into 4 pieces"):
        device_put(np.zeros((6, 4), np.float32), NamedSharding(mesh, P("x")))


def test_make_array_from_callback_and_single_device_arrays(mesh: Mesh) -> None:
    s = NamedSharding(mesh, P("y", "x"))
    seen = []
    a = make_array_from_callback((8, 4), s, lambda idx: (seen.append(idx), X[idx])[1])
    assert len(seen) == 8 and a.sharding == s
    np.testing.assert_array_equal(np.asarray(a), X)
    b = make_array_from_single_device_arrays((8, 4), s, [sh.data for sh in reversed(a.addressable_shards)])
    np.testing.assert_array_equal(np.asarray(b), X)
    c = make_array_from_process_local_data(s, X)
    np.testing.assert_array_equal(np.asarray(c), X)
    with pytest.raises(ValueError, match="expected one array per device of the sharding \\(8\\)"):
        make_array_from_single_device_arrays((8, 4), s, [sh.data for sh in a.addressable_shards[:3]])
    with pytest.raises(ValueError, match="returned shape \\(8, 4\\), but the piece of cpu:0 has shape \\(4, 1\\)"):
        make_array_from_callback((8, 4), s, lambda idx: X)


def test_moving_between_layouts_and_back_to_one_device(mesh: Mesh) -> None:
    a = device_put(X, NamedSharding(mesh, P("x")))
    b = device_put(a, NamedSharding(mesh, P(None, "y")))
    assert b.sharding.spec == P(None, "y")
    np.testing.assert_array_equal(np.asarray(b), X)
    c = device_put(b, devices()[3])
    assert c.device is devices()[3] and c.committed
    np.testing.assert_array_equal(np.asarray(c), X)
    d = b.copy()
    b.delete()
    np.testing.assert_array_equal(np.asarray(d), X)
    with pytest.raises(DeletedArrayError):
        np.asarray(b)


def test_eager_ops_on_sharded_arrays_stay_sharded(mesh: Mesh) -> None:
    s = NamedSharding(mesh, P("x", "y"))
    a = device_put(X, s)
    b = pnp.sin(a) * 2 + 1
    assert b.sharding == s
    np.testing.assert_allclose(np.asarray(b), np.sin(X) * 2 + 1, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(a.sum(0)), X.sum(0))


def test_jit_in_and_out_shardings(mesh: Mesh) -> None:
    f = jit(lambda a, b: a @ b, in_shardings=(NamedSharding(mesh, P("x")), None), out_shardings=NamedSharding(mesh, P("x", "y")))
    w = np.ones((4, 6), np.float32)
    r = f(X, w)
    assert r.sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_allclose(np.asarray(r), X @ w)
    g = jit(lambda a: a.sum(0), out_shardings=NamedSharding(mesh, P()))
    r = g(device_put(X, NamedSharding(mesh, P("x", "y"))))
    assert r.sharding.spec == P() and r.is_fully_replicated
    np.testing.assert_allclose(np.asarray(r), X.sum(0))
    # Without a request the layout is what XLA propagated, as a NamedSharding of the mesh.
    h = jit(lambda a: pnp.exp(a) - a)
    assert h(device_put(X, NamedSharding(mesh, P("x")))).sharding.spec == P("x")


def test_jit_shardings_errors(mesh: Mesh) -> None:
    with pytest.raises(ValueError, match="in_shardings has 1 entries but the function was called with 2"):
        jit(lambda a, b: a, in_shardings=(NamedSharding(mesh, P()),))(X, X)
    with pytest.raises(TypeError, match="expected shardings, PartitionSpecs or None as leaves, got str"):
        jit(lambda a: a, in_shardings="x")
    other = Mesh(np.array(devices()[4:] + devices()[:4], dtype=object).reshape(8), ("z",))
    with pytest.raises(ValueError, match="must use the same devices in the same order"):
        jit(lambda a, b: a + b)(device_put(X, NamedSharding(mesh, P("x"))), device_put(X, NamedSharding(other, P("z"))))


def test_with_sharding_constraint(mesh: Mesh) -> None:
    s = NamedSharding(mesh, P(None, "y"))
    r = jit(lambda a: lax.with_sharding_constraint(a * 2, s) + 1)(X)
    assert r.sharding == s
    np.testing.assert_allclose(np.asarray(r), X * 2 + 1)
    assert lax.with_sharding_constraint(device_put(X), s).sharding == s
    with mesh:
        assert jit(lambda a: lax.with_sharding_constraint(a, P("x")))(X).sharding.spec == P("x")
    with pytest.raises(ValueError, match="needs a context mesh"):
        lax.with_sharding_constraint(X, P("x"))


def test_donating_a_sharded_array_deletes_every_shard(mesh: Mesh) -> None:
    s = NamedSharding(mesh, P("x", "y"))
    a = device_put(X, s)
    shards = [sh.data for sh in a.addressable_shards]
    r = jit(lambda v: v + 1, donate_argnums=0)(a)
    np.testing.assert_array_equal(np.asarray(r), X + 1)
    assert a.is_deleted() and all(sh.is_deleted() for sh in shards)
    with pytest.raises(DeletedArrayError, match="donated"):
        np.asarray(a)


@pytest.mark.parametrize(
    "name, body, in_spec, out_spec, expected",
    [
        ("psum", lambda a: lax.psum(a, "x"), P("x"), P(), X.reshape(4, 2, 4).sum(0)),
        ("psum2", lambda a: lax.psum(a, ("x", "y")), P("x", "y"), P(), X.reshape(4, 2, 2, 2).sum((0, 2))),
        ("pmax", lambda a: lax.pmax(a, "y"), P(None, "y"), P(), np.maximum(X[:, :2], X[:, 2:])),
        ("pmin", lambda a: lax.pmin(a, "x"), P("x"), P(), X.reshape(4, 2, 4).min(0)),
        ("pmean", lambda a: lax.pmean(a, "x"), P("x"), P(), X.reshape(4, 2, 4).mean(0)),
        ("all_gather", lambda a: lax.all_gather(a, "x"), P("x"), P(), X.reshape(4, 2, 4)),
        ("all_gather_tiled", lambda a: lax.all_gather(a, "x", axis=1, tiled=True), P(None, "y"), P(None, "y"),
         np.concatenate([np.tile(X[:, :2], (1, 4)), np.tile(X[:, 2:], (1, 4))], 1)),
        ("axis_index", lambda a: a * lax.axis_index("x").astype(np.float32), P("x"), P("x"), X * np.repeat(np.arange(4), 2)[:, None]),
        ("axis_index2", lambda a: a * lax.axis_index(("x", "y")).astype(np.float32), P(("x", "y")), P(("x", "y")), X * np.arange(8)[:, None]),
        ("ppermute", lambda a: lax.ppermute(a, "x", [(0, 1), (1, 2), (2, 0)]), P("x"), P("x"),
         np.concatenate([X[4:6], X[0:2], X[2:4], np.zeros((2, 4), np.float32)])),
        ("psum_scatter", lambda a: lax.psum_scatter(a.reshape(4, 2, 4), "x"), P(), P("x"), 4 * X),
        ("psum_scatter_tiled", lambda a: lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True), P("x"), P(None, "x"),
         np.tile(X.reshape(4, 2, 4).sum(0), (1, 1))),
        ("all_to_all", lambda a: lax.all_to_all(a.reshape(4, 2, 1), "x", 0, 2), P("x"), P("x"),
         np.stack([X[2 * j : 2 * j + 2].reshape(4, 2) for j in range(4)], -1).reshape(8, 1, 4)),
        ("all_to_all_tiled", lambda a: lax.all_to_all(a, "x", 1, 0, tiled=True), P("x"), P("x"),
         X.reshape(4, 2, 4, 1).transpose(2, 0, 1, 3).reshape(32, 1)),
    ],
)
def test_collectives_in_shard_map(mesh: Mesh, name: str, body: object, in_spec: P, out_spec: P, expected: np.ndarray) -> None:
    # all_gather's result varies over the gathered axis (JAX 0.10's typing), so out specs
    # that leave that axis out take the pieces as equal unchecked (check_vma=False).
    f = shard_map(body, mesh=mesh, in_specs=in_spec, out_specs=out_spec, check_vma=not name.startswith("all_gather"))
    np.testing.assert_allclose(np.asarray(f(X)), expected, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(jit(f)(X)), expected, rtol=1e-6)


def test_shard_map_shapes_and_errors(mesh: Mesh) -> None:
    f = shard_map(lambda a, b: (a.sum(0, keepdims=True), b), mesh=mesh, in_specs=(P("x", "y"), P()), out_specs=(P("x", "y"), P()))
    s, b = f(X, np.float32(3.0))
    assert s.shape == (4, 4) and s.sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_allclose(np.asarray(s), X.reshape(4, 2, 4).sum(1))
    assert float(b) == 3.0
    with pytest.raises(ValueError, match="split over the mesh axes \\('x',\\) \\(4 pieces\\), but 6 is not divisible by 4"):
        shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(np.zeros((6,), np.float32))
    with pytest.raises(TypeError, match="in_specs has None where a PartitionSpec belongs"):
        shard_map(lambda a: a, mesh=mesh, in_specs=None, out_specs=P())(X)


def test_a_collective_outside_shard_map_names_an_unbound_axis() -> None:
    from plait_core import UnboundAxisNameError

    with pytest.raises(UnboundAxisNameError, match="'x'"):
        jit(lambda a: lax.psum(a, "x"))(X)


def test_pmap_basics() -> None:
    y = np.arange(24, dtype=np.float32).reshape(8, 3)
    r = pmap(lambda a: lax.psum(a, "i") - a, "i")(y)
    np.testing.assert_allclose(np.asarray(r), y.sum(0) - y)
    assert r.sharding.spec == P("i") and len(r.addressable_shards) == 8
    r = pmap(lambda a, b: a * b, in_axes=(0, None))(y, np.arange(3, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(r), y * np.arange(3))
    r = pmap(lambda a: a * 2, in_axes=1, out_axes=1)(y.T)
    np.testing.assert_allclose(np.asarray(r), 2 * y.T)
    r = pmap(lambda a: lax.pmax(a, "i"), "i", out_axes=None)(y)
    np.testing.assert_allclose(np.asarray(r), y.max(0))
    r = pmap(lambda a, k: a ** k, static_broadcasted_argnums=1)(y[:4], 2)
    np.testing.assert_allclose(np.asarray(r), y[:4] ** 2)
    r = pmap(lambda a: lax.axis_index("i"), "i")(y)
    np.testing.assert_array_equal(np.asarray(r), np.arange(8))
    r = pmap(lambda d: {"s": d["a"] + d["b"]})({"a": y, "b": y})
    np.testing.assert_allclose(np.asarray(r["s"]), 2 * y)


def test_pmap_keyword_arguments_are_mapped_over_axis_0() -> None:
    # JAX 0.10.2's results (keyword arguments: axis 0, whatever in_axes says of the positional ones).
    y = np.arange(16, dtype=np.float32).reshape(8, 2)

    def f(a: Any, b: Any, c: Any = None) -> Any:
        return a + b if c is None else a + b + c

    np.testing.assert_allclose(np.asarray(pmap(f)(a=y, b=y)), 2 * y)
    np.testing.assert_allclose(np.asarray(pmap(f, in_axes=(0,))(y, b=y)), 2 * y)
    r = pmap(f, in_axes=(0, None))(y, np.ones(2, np.float32), c=np.arange(8, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(r), y + 1 + np.arange(8, dtype=np.float32)[:, None])
    np.testing.assert_allclose(np.asarray(pmap(f, static_broadcasted_argnums=1)(y, 3.0, c=y)), 2 * y + 3)
    with pytest.raises(ValueError, match="in_axes has 2 entries but 1 arguments were passed"):
        pmap(f, in_axes=(0, 0))(y, b=y)


def test_pmap_donation_and_devices() -> None:
    y = np.arange(24, dtype=np.float32).reshape(8, 3)
    step = pmap(lambda a: a + 1, donate_argnums=0)
    a = pmap(lambda v: v)(y)
    b = step(a)
    assert a.is_deleted()
    np.testing.assert_allclose(np.asarray(step(b)), y + 2)
    r = pmap(lambda v: v * 3, devices=devices()[4:])(y[:4])
    assert r.sharding.device_set == set(devices()[4:])
    np.testing.assert_allclose(np.asarray(r), 3 * y[:4])


def test_pmap_size_errors() -> None:
    with pytest.raises(ValueError, match="the mapped axis has size 9, but there are only 8 device"):
        pmap(lambda a: a)(np.zeros((9, 2), np.float32))
    with pytest.raises(ValueError, match="has size 3, but devices= lists 2 device"):
        pmap(lambda a: a, devices=devices()[:2])(np.zeros((3, 2), np.float32))
    with pytest.raises(ValueError, match="sizes 8 and 4"):
        pmap(lambda a, b: a + b)(np.zeros((8,), np.float32), np.zeros((4,), np.float32))


def test_ahead_of_time_compile_of_a_sharded_call_says_why(mesh: Mesh) -> None:
    x = device_put(X, NamedSharding(mesh, P("x")))
    compiled = jit(lambda a: a + 1).lower(X).compile()
    with pytest.raises(NotImplementedError, match=r"ahead-of-time lowering and compiling .* of SPMD programs is not"):
        compiled(x)


def test_nested_maps_say_what_to_do_instead(mesh: Mesh) -> None:
    x = np.zeros((2, 4), np.float32)
    with pytest.raises(NotImplementedError, match=r"shard_map of pmap\(<lambda>\): a shard_map \(or pmap\) inside"):
        pmap(pmap(lambda a: a, "j"), "i")(x)
    inner = shard_map(lambda a: a, mesh=mesh, in_specs=P(), out_specs=P())
    with pytest.raises(NotImplementedError, match="map over one mesh with several axes instead"):
        shard_map(lambda a: inner(a), mesh=mesh, in_specs=P(), out_specs=P())(x)


def _fast_handlers(f: object) -> int:
    state = jit_state(f)
    assert state is not None
    return sum(len(c) for c in state.spmd_fast.values())


def test_repeated_sharded_calls_take_the_fast_path(mesh: Mesh) -> None:
    rows, repl = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    const = np.arange(4, dtype=np.float32)  # captured: placed once for the fast path

    def step(ps: dict[str, object], x: object, *, scale: float) -> tuple[dict[str, object], object]:
        h = x @ ps["w"] + ps["b"] + const
        return {"w": ps["w"] * scale, "b": ps["b"] + h.sum(0)}, h

    f = jit(step, static_argnames="scale", in_shardings=(repl, rows), out_shardings=(repl, rows))
    w, b = np.eye(4, dtype=np.float32), np.ones(4, np.float32)
    ps = {"w": device_put(w, repl), "b": device_put(b, repl)}
    x = device_put(X, rows)
    before = stats.snapshot()
    for _ in range(4):
        ps, h = f(ps, x, scale=0.5)
        want_h = X @ w + b + const
        w, b = w * 0.5, b + want_h.sum(0)
        np.testing.assert_allclose(np.asarray(h), want_h, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(ps["w"]), w)
        np.testing.assert_allclose(np.asarray(ps["b"]), b, rtol=1e-6)
        assert ps["w"].sharding == repl and h.sharding == rows
    # One traced call, then the fast path (which the slow-path counter does not see).
    assert stats.snapshot()["trace_hits"] - before["trace_hits"] <= 1
    assert _fast_handlers(f) == 1
    # Another static value is another signature; the first stays.
    ps2, _ = f(ps, x, scale=2.0)
    np.testing.assert_allclose(np.asarray(ps2["w"]), w * 2.0)
    assert _fast_handlers(f) == 2


def test_many_sharded_signatures_of_one_structure_all_take_the_fast_path(mesh: Mesh) -> None:
    # Batches of 12 sizes through one sharded step (one pytree structure): past
    # the scanned first few, every signature is found by its types and layouts.
    rows, repl = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    f = jit(lambda ps, x: {"s": (x @ ps["w"]).sum(0) + ps["b"]}, in_shardings=(repl, rows), out_shardings=repl)
    ps = {"w": device_put(np.eye(4, dtype=np.float32), repl), "b": device_put(np.ones(4, np.float32), repl)}
    batches = [np.full((4 * n, 4), n, np.float32) for n in range(1, 13)]
    xs = [device_put(b, rows) for b in batches]
    for x in xs:
        f(ps, x)
    state = jit_state(f)
    assert state is not None
    (more,) = state.spmd_more.values()
    assert len(more) == len(xs)
    before = stats.snapshot()["trace_hits"]
    for b, x in zip(batches, xs):
        out = f(ps, x)["s"]
        np.testing.assert_allclose(np.asarray(out), b.sum(0) + 1.0)
        assert out.sharding == repl
    assert stats.snapshot()["trace_hits"] == before  # none went through the tracing cache
    state.clear_cache()
    assert not state.spmd_more and not state.spmd_fast


def test_the_fast_path_leaves_other_layouts_and_arguments_to_the_general_path(mesh: Mesh) -> None:
    h = jit(lambda a: a * 2.0 + 1.0)
    by_x = device_put(X, NamedSharding(mesh, P("x")))
    for _ in range(2):
        r = h(by_x)
        np.testing.assert_array_equal(np.asarray(r), X * 2 + 1)
        assert r.sharding.spec == P("x")
    # Same shape, another layout: its own program and output layout.
    by_y = device_put(X, NamedSharding(mesh, P(None, "y")))
    for _ in range(2):
        r = h(by_y)
        np.testing.assert_array_equal(np.asarray(r), X * 2 + 1)
        assert r.sharding.spec == P(None, "y")
    # An equal sharding made anew matches too.
    r = h(device_put(X, NamedSharding(mesh, P("x"))))
    assert r.sharding.spec == P("x")
    # Host data and single-device Arrays where a sharded Array was: the general path.
    np.testing.assert_array_equal(np.asarray(h(X)), X * 2 + 1)
    np.testing.assert_array_equal(np.asarray(h(device_put(X))), X * 2 + 1)
    g = jit(lambda a: a - 1.0, in_shardings=NamedSharding(mesh, P("x")))
    for arg in (by_x, X, device_put(X), by_y, by_x):
        r = g(arg)
        np.testing.assert_array_equal(np.asarray(r), X - 1)
        assert r.sharding.spec == P("x")
    np.testing.assert_array_equal(np.asarray(by_y), X)  # re-laid out, not consumed


def test_the_fast_path_refuses_deleted_and_twice_donated_arrays(mesh: Mesh) -> None:
    s = NamedSharding(mesh, P("x"))
    f = jit(lambda a, b: a + b, donate_argnums=0)
    a = device_put(X, s)
    for k in range(3):
        shards = [sh.data for sh in a.addressable_shards]
        old = a
        a = f(a, device_put(X, s))
        np.testing.assert_array_equal(np.asarray(a), X * (k + 2))
        assert old.is_deleted() and all(sh.is_deleted() for sh in shards)
        with pytest.raises(DeletedArrayError, match="donated"):
            np.asarray(old)
    assert _fast_handlers(f) == 1
    with pytest.raises(DeletedArrayError, match="donated"):
        f(old, a)
    dead = device_put(X, s)
    dead.delete()
    with pytest.raises(DeletedArrayError, match="deleted"):
        f(a, dead)
    with pytest.raises(ValueError, match="donat"):
        f(a, a)
    np.testing.assert_array_equal(np.asarray(a), X * 4)  # not consumed by the refused call


def test_clear_caches_frees_the_spmd_executables(mesh: Mesh) -> None:
    # Functions jitted afresh for sharded inputs (as a long fuzz run makes them): after
    # clear_caches, XLA's executables are freed, so the process's memory maps stay flat
    # (the SPMD calls' caches kept them: a 16-minute run ran out of maps).
    x = device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P("x")))

    def maps() -> int:
        with open(f"/proc/{os.getpid()}/maps") as f:
            return sum(1 for _ in f)

    def churn(n: int, start: int) -> None:
        for i in range(start, start + n):
            f = jit(lambda a, c=float(i): a * c + 1.0)
            np.testing.assert_allclose(np.asarray(f(x)), np.full((8, 4), i + 1.0))

    churn(10, 0)
    assert spmd._calls and spmd._known
    clear_caches()
    gc.collect()
    assert not spmd._calls and not spmd._known
    before = maps()
    churn(40, 10)
    clear_caches()
    gc.collect()
    assert maps() - before < 40  # was about 3 maps per executable
