"""Host callbacks in programs over 8 CPU devices (run by
``test_multidevice_callbacks.py`` in a subprocess with
``PLAIT_NUM_CPU_DEVICES=8``).  Each expectation (which values each call
sees, how many calls, which errors) is JAX 0.10.2's on 8 CPU devices:
where XLA lays the program out, one device calls the callback on the whole
values; inside ``shard_map``/``pmap`` (or with ``partitioned=True``) every
device calls it on its own pieces; an ordered ``debug.callback`` over
several devices is refused; an ordered ``io_callback`` keeps its order."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax
from plait.experimental import checkify, io_callback
from plait.sharding import Mesh, NamedSharding, P, SingleDeviceSharding

ROWS = np.arange(16, dtype=np.float32).reshape(8, 2)


class Log:
    """What the callbacks saw (they run on XLA's threads)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.calls: list[tuple[Any, ...]] = []

    def recorder(self, tag: str) -> Callable[..., None]:
        def record(*args: Any) -> None:
            with self.lock:
                self.calls.append((tag, *[np.asarray(a).tolist() for a in args]))

        return record

    def taken(self) -> list[tuple[Any, ...]]:
        plait.effects_barrier()
        with self.lock:
            out, self.calls = self.calls, []
        return out


@pytest.fixture(scope="module")
def mesh() -> Mesh:
    assert len(plait.devices()) == 8
    return Mesh(np.array(plait.devices()), ("x",))


@pytest.fixture()
def x(mesh: Mesh) -> Any:
    return plait.device_put(ROWS, NamedSharding(mesh, P("x")))


def _rows() -> list[list[list[float]]]:
    return [[ROWS[k].tolist()] for k in range(8)]


def test_debug_callback_in_a_sharded_jit_runs_once_on_the_whole_value(x: Any) -> None:
    log = Log()
    f = plait.jit(lambda v: (plait.debug.callback(log.recorder("d"), v), v * 2)[1])
    np.testing.assert_array_equal(np.asarray(f(x)), ROWS * 2)
    assert log.taken() == [("d", ROWS.tolist())]
    f(x)  # a repeated call runs it again (and effects_barrier waits for it)
    assert log.taken() == [("d", ROWS.tolist())]


def test_partitioned_debug_callback_runs_on_every_shard(x: Any, mesh: Mesh) -> None:
    log = Log()
    plait.jit(lambda v: (plait.debug.callback(log.recorder("p"), v, partitioned=True), v)[1])(x)
    assert sorted(c[1] for c in log.taken()) == _rows()
    replicated = plait.device_put(np.arange(4.0, dtype=np.float32), NamedSharding(mesh, P()))
    plait.jit(lambda v: (plait.debug.callback(log.recorder("r"), v, partitioned=True), v)[1])(replicated)
    assert log.taken() == [("r", [0.0, 1.0, 2.0, 3.0])] * 8


def test_ordered_debug_callback_over_several_devices_is_refused(x: Any) -> None:
    log = Log()
    with pytest.raises(ValueError, match=r"an ordered debug callback cannot run in a program over 8 devices"):
        plait.jit(lambda v: (plait.debug.callback(log.recorder("o"), v, ordered=True), v)[1])(x)
    with pytest.raises(ValueError, match=r"an ordered debug callback cannot run in a program over 8 devices"):
        plait.pmap(lambda v: (plait.debug.callback(log.recorder("o"), v, ordered=True), v)[1])(ROWS)
    assert log.taken() == []


def test_ordered_debug_callback_on_a_one_device_mesh_runs() -> None:
    log = Log()
    one = Mesh(np.array(plait.devices()[:1]), ("x",))
    v = plait.device_put(np.arange(4.0, dtype=np.float32), NamedSharding(one, P("x")))
    plait.jit(lambda v: (plait.debug.callback(log.recorder("a"), v, ordered=True),
                         plait.debug.callback(log.recorder("b"), v + 1, ordered=True), v)[2])(v)
    assert log.taken() == [("a", [0.0, 1.0, 2.0, 3.0]), ("b", [1.0, 2.0, 3.0, 4.0])]


def test_debug_callback_in_shard_map_runs_once_per_device(x: Any, mesh: Mesh) -> None:
    log = Log()
    body = plait.shard_map(
        lambda b: (plait.debug.callback(log.recorder("s"), b, lax.axis_index("x")), b * 2)[1],
        mesh=mesh, in_specs=P("x"), out_specs=P("x"),
    )
    np.testing.assert_array_equal(np.asarray(plait.jit(body)(x)), ROWS * 2)
    assert sorted(c[1:] for c in log.taken()) == [([ROWS[k].tolist()], k) for k in range(8)]


def test_debug_callback_in_shard_map_over_two_axes() -> None:
    log = Log()
    mesh2 = Mesh(np.array(plait.devices()).reshape(4, 2), ("a", "b"))
    z = np.arange(32, dtype=np.float32).reshape(8, 4)
    body = plait.shard_map(lambda b: (plait.debug.callback(log.recorder("z"), b), b)[1],
                           mesh=mesh2, in_specs=P("a"), out_specs=P("a"))
    plait.jit(body)(plait.device_put(z, NamedSharding(mesh2, P("a"))))
    blocks = sorted(c[1] for c in log.taken())
    assert blocks == sorted([z[2 * i:2 * i + 2].tolist() for i in range(4)] * 2)  # each block on 2 devices


def test_debug_callback_under_pmap_runs_on_each_slice() -> None:
    log = Log()
    out = plait.pmap(lambda v: (plait.debug.callback(log.recorder("m"), v), v + 1)[1])(ROWS)
    np.testing.assert_array_equal(np.asarray(out), ROWS + 1)
    assert sorted(c[1] for c in log.taken()) == [ROWS[k].tolist() for k in range(8)]


def _times3(log: Log) -> Callable[[Any], np.ndarray]:
    def f(v: Any) -> np.ndarray:
        with log.lock:
            log.calls.append(("c", np.shape(v)))
        return np.asarray(v) * 3

    return f


def test_pure_callback_in_a_sharded_jit_runs_once(x: Any) -> None:
    log = Log()
    f = plait.jit(lambda v: plait.pure_callback(_times3(log), plait.ShapeDtypeStruct(v.shape, v.dtype), v) + 1)
    out = f(x)
    np.testing.assert_array_equal(np.asarray(out), ROWS * 3 + 1)
    assert log.taken() == [("c", (8, 2))]
    assert out.sharding.is_fully_replicated


def test_pure_callback_in_shard_map_runs_per_device(x: Any, mesh: Mesh) -> None:
    log = Log()
    body = plait.shard_map(
        lambda b: plait.pure_callback(_times3(log), plait.ShapeDtypeStruct(b.shape, b.dtype), b),
        mesh=mesh, in_specs=P("x"), out_specs=P("x"),
    )
    np.testing.assert_array_equal(np.asarray(plait.jit(body)(x)), ROWS * 3)
    assert log.taken() == [("c", (1, 2))] * 8


def test_a_callback_result_returned_as_it_is_lives_on_the_calling_device(x: Any) -> None:
    # JAX describes such a result as GSPMDSharding({maximal device=k}) over the
    # program's 8 devices; plait as the one device that holds it.
    log = Log()
    out = plait.jit(lambda v: plait.pure_callback(_times3(log), plait.ShapeDtypeStruct(v.shape, v.dtype), v))(x)
    assert out.sharding == SingleDeviceSharding(plait.devices()[0])
    np.testing.assert_array_equal(np.asarray(out), ROWS * 3)
    d3 = SingleDeviceSharding(plait.devices()[3])
    out = plait.jit(lambda v: io_callback(_times3(log), plait.ShapeDtypeStruct(v.shape, v.dtype), v, sharding=d3))(x)
    assert out.sharding == d3
    np.testing.assert_array_equal(np.asarray(out), ROWS * 3)
    assert log.taken() == [("c", (8, 2))] * 2


def test_ordered_io_callbacks_keep_their_order(x: Any, mesh: Mesh) -> None:
    log = Log()

    def step(tag: str) -> Callable[[Any], np.ndarray]:
        def f(v: Any) -> np.ndarray:
            time.sleep(0.01 if tag == "a" else 0.0)
            with log.lock:
                log.calls.append((tag, np.asarray(v).reshape(-1)[0].item()))
            return np.asarray(v)

        return f

    def two(v: Any) -> Any:
        s = plait.ShapeDtypeStruct(v.shape, v.dtype)
        a = io_callback(step("a"), s, v, ordered=True)
        return io_callback(step("b"), s, v * 0 + 100, ordered=True) + a

    plait.jit(two)(x)
    assert log.taken() == [("a", 0.0), ("b", 100.0)]
    plait.jit(plait.shard_map(two, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)
    calls = log.taken()
    assert sorted(c for c in calls if c[0] == "a") == [("a", float(2 * k)) for k in range(8)]
    assert [c[0] for c in calls].count("b") == 8
    # on each device "a" ran before "b": 8 "a"s cannot all come after the first "b" unless ordered per device
    first_b = [c[0] for c in calls].index("b")
    assert [c[0] for c in calls[:first_b]].count("a") >= 1


def test_callback_sharding_rules(x: Any, mesh: Mesh) -> None:
    s = plait.ShapeDtypeStruct((8, 2), np.float32)
    with pytest.raises(NotImplementedError, match=r"io_callback\(sharding=\.\.\.\) with a NamedSharding"):
        plait.jit(lambda v: io_callback(np.asarray, s, v, sharding=NamedSharding(mesh, P("x"))))(x)
    with pytest.raises(NotImplementedError, match=r"with sharding= inside shard_map"):
        plait.jit(plait.shard_map(
            lambda b: io_callback(np.asarray, plait.ShapeDtypeStruct(b.shape, b.dtype), b,
                                  sharding=SingleDeviceSharding(plait.devices()[0])),
            mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)
    four = Mesh(np.array(plait.devices()[:4]), ("x",))
    y = plait.device_put(ROWS, NamedSharding(four, P("x")))
    with pytest.raises(ValueError, match=r"names .*which is not one of the 4 devices the program runs on"):
        plait.jit(lambda v: io_callback(np.asarray, s, v, sharding=SingleDeviceSharding(plait.devices()[6])))(y)


def test_eager_callbacks_of_sharded_values_run_once(x: Any) -> None:
    log = Log()
    out = plait.pure_callback(_times3(log), plait.ShapeDtypeStruct((8, 2), np.float32), x)
    np.testing.assert_array_equal(np.asarray(out), ROWS * 3)
    plait.debug.callback(log.recorder("e"), x)
    assert log.taken() == [("c", (8, 2)), ("e", ROWS.tolist())]


def test_effects_barrier_waits_for_every_device() -> None:
    log = Log()

    def slow(v: Any) -> None:
        time.sleep(0.05)
        log.recorder("w")(v)

    plait.pmap(lambda v: (plait.debug.callback(slow, v), v)[1])(ROWS)
    assert len(log.taken()) == 8


def test_checkify_under_pmap_and_a_sharded_jit(x: Any) -> None:
    def f(v: Any) -> Any:
        checkify.check(pnp.all(v < 14), "too big: {}", pnp.max(v))
        return v * 2

    # One device (row [14, 15]) fails.  JAX prefixes "at mapped index 7: ";
    # plait's checkify gives one error for a mapped call (its documented
    # deviation, as under vmap).
    err, out = checkify.checkify(plait.pmap(f))(ROWS)
    assert err.get() == "too big: 15.0 (`check` failed)"
    np.testing.assert_array_equal(np.asarray(out), ROWS * 2)
    err, _ = checkify.checkify(plait.jit(f))(x)
    assert err.get() == "too big: 15.0 (`check` failed)"
    err, _ = checkify.checkify(plait.jit(f))(x * 0)
    assert err.get() is None
