"""JAX's names around devices, configuration, debugging and helpers (issue #13):
top-level ``Device NamedSharding P Shard make_mesh set_mesh reshard smap
default_device live_arrays host_count host_id host_ids process_indices
log_compiles no_tracing no_execution effects_barrier``, ``debug.breakpoint``
and the sharding views, ``lax.axis_size pbroadcast pshuffle pswapaxes``, and
the helpers of ``example_libraries.optimizers``.  One device here; the
8-device checks run ``device_names_checks.py`` in a subprocess.  Values are
compared with JAX 0.10.2 (``PLAIT_JAX_PYTHON``) where JAX runs them on CPU."""

from __future__ import annotations

import collections
import contextlib
import functools
import io
import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax
from plait.example_libraries import optimizers

# ---------------------------------------------------------------------------
# example_libraries.optimizers helpers


def test_optimizers_helpers_are_the_standard_and_length_checked_ones() -> None:
    assert optimizers.namedtuple is collections.namedtuple and optimizers.partial is functools.partial
    assert optimizers.map is optimizers.safe_map and optimizers.zip is optimizers.safe_zip
    assert optimizers.safe_map(lambda a, b: a + b, [1, 2], (3, 4)) == [4, 6]
    assert optimizers.safe_map(str, range(3)) == ["0", "1", "2"]
    assert optimizers.safe_zip((x for x in [1, 2]), "ab") == [(1, "a"), (2, "b")]
    assert optimizers.safe_zip([1]) == [(1,)]
    assert optimizers.unzip2([(1, "a"), (2, "b")]) == ((1, 2), ("a", "b"))
    assert optimizers.unzip2(iter([])) == ((), ())
    with pytest.raises(ValueError, match=r"safe_map\(\) argument 1 has length 2 but argument 0 has length 1"):
        optimizers.safe_map(lambda a, b: a, [1], [1, 2])
    with pytest.raises(ValueError, match=r"safe_zip\(\) argument 1 has length 2 .* All lengths: \(1, 2\)"):
        optimizers.safe_zip([1], [1, 2])
    with pytest.raises(TypeError, match="safe_zip requires at least one iterable"):
        optimizers.safe_zip()
    with pytest.raises(TypeError, match="safe_map requires a function and at least one iterable"):
        optimizers.safe_map(str)
    with pytest.raises(ValueError, match="too many values to unpack"):
        optimizers.unzip2([(1, 2, 3)])


def test_optimizers_still_work_with_module_zip_and_map() -> None:
    init, update, get_params = optimizers.adam(0.1)
    params = {"w": pnp.ones(2), "b": pnp.zeros(())}
    state = update(0, {"w": pnp.ones(2), "b": pnp.ones(())}, init(params))
    np.testing.assert_allclose(np.asarray(get_params(state)["w"]), [0.9, 0.9], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(get_params(state)["b"]), -0.1, rtol=1e-5)


# ---------------------------------------------------------------------------
# lax: axis_size, pbroadcast, pshuffle, pswapaxes (compositions of collectives)

X = np.arange(12.0, dtype=np.float32).reshape(4, 3)


def test_axis_size_is_a_python_int_of_the_bound_axis() -> None:
    seen: list[Any] = []

    def f(v: Any) -> Any:
        seen.append(lax.axis_size("i"))
        return v * lax.axis_size("i") + lax.axis_size(("i",))

    np.testing.assert_array_equal(np.asarray(plait.vmap(f, axis_name="i")(X)), X * 4 + 4)
    assert seen == [4] and type(seen[0]) is int
    nested = plait.vmap(plait.vmap(lambda v: v * 0 + lax.axis_size(("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(np.asarray(nested(X)), np.full((4, 3), 12.0))
    with pytest.raises(NameError, match="axis_size uses the axis name 'k', which is not bound here"):
        plait.vmap(lambda v: v * lax.axis_size("k"), axis_name="i")(X)
    with pytest.raises(TypeError, match="axis_name must be a name or a tuple of names, got the set"):
        plait.vmap(lambda v: v * lax.axis_size({"i"}), axis_name="i")(X)


def test_pbroadcast_is_psum_of_the_source_positions_value() -> None:
    def documented(v: Any) -> Any:  # JAX's definition of pbroadcast
        return lax.psum(pnp.where(lax.axis_index("i") == 2, v, pnp.zeros_like(v)), "i")

    got = plait.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(X)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(plait.vmap(documented, axis_name="i")(X)))
    np.testing.assert_array_equal(np.asarray(got), np.tile(X[2], (4, 1)))
    tree = plait.jit(plait.vmap(lambda v: lax.pbroadcast({"a": v, "b": v > 3}, "i", 1), axis_name="i"))(X)
    np.testing.assert_array_equal(np.asarray(tree["b"]), np.tile(X[1] > 3, (4, 1)))
    assert tree["b"].dtype == np.bool_
    grad = plait.grad(lambda x: plait.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(x).sum())(X)
    np.testing.assert_array_equal(np.asarray(grad), np.array([[0] * 3, [0] * 3, [4] * 3, [0] * 3], np.float32))
    with pytest.raises(ValueError, match=r"pbroadcast: source must be an int in \[0, 4\) \(the axis size\), got 7"):
        plait.vmap(lambda v: lax.pbroadcast(v, "i", 7), axis_name="i")(X)


def _jax_python() -> str | None:
    path = os.environ.get("PLAIT_JAX_PYTHON")
    if not path:
        return None
    probe = subprocess.run([path, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True)
    return path if probe.returncode == 0 and probe.stdout.strip() == "0.10.2" else None


COLLECTIVE_PROGRAMS = {
    "pshuffle": "vmap(lambda v: lax.pshuffle(v, 'i', [1, 2, 3, 0]), axis_name='i')(X)",
    "pswapaxes": "vmap(lambda v: lax.pswapaxes(v, 'i', 0), axis_name='i')(Y)",
    "axis_size": "vmap(lambda v: v * lax.axis_size('i'), axis_name='i')(X)",
}


def _run_collectives(python: str, lib: str) -> dict[str, Any]:
    code = (
        f"import json, numpy as np\nfrom {lib} import lax, vmap\n"
        "X = np.arange(12., dtype=np.float32).reshape(4, 3); Y = np.arange(16., dtype=np.float32).reshape(4, 4)\n"
        f"progs = {COLLECTIVE_PROGRAMS!r}\n"
        "print(json.dumps({k: np.asarray(eval(p)).tolist() for k, p in progs.items()}))\n"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_pshuffle_and_pswapaxes_values_and_errors() -> None:
    got = {k: np.asarray(eval(p, {"vmap": plait.vmap, "lax": lax, "X": X, "Y": np.arange(16.0, dtype=np.float32)
                                  .reshape(4, 4)})).tolist() for k, p in COLLECTIVE_PROGRAMS.items()}  # fmt: skip
    assert got["pshuffle"] == np.roll(X, -1, axis=0).tolist()
    # A permutation of fewer positions than the axis: the others get zeros (JAX's shard_map gives the same)
    partial = plait.vmap(lambda v: lax.pshuffle(v, "i", [1, 0]), axis_name="i")(X)
    assert np.asarray(partial).tolist() == [X[1].tolist(), X[0].tolist(), [0.0] * 3, [0.0] * 3]
    assert got["pswapaxes"] == np.arange(16.0).reshape(4, 4).T.tolist()
    with pytest.raises(ValueError, match=r"pshuffle: perm must be a permutation of 0..3, got \[0, 0, 1, 2\]"):
        plait.vmap(lambda v: lax.pshuffle(v, "i", [0, 0, 1, 2]), axis_name="i")(X)
    with pytest.raises(NotImplementedError, match="all_to_all: axis_index_groups is not supported"):
        plait.vmap(lambda v: lax.pswapaxes(v, "i", 0, axis_index_groups=[[0, 1], [2, 3]]), axis_name="i")(X)


@pytest.mark.skipif(_jax_python() is None, reason="PLAIT_JAX_PYTHON does not name a JAX 0.10.2 interpreter")
def test_collectives_match_jax() -> None:
    python = _jax_python()
    assert python is not None
    assert _run_collectives(sys.executable, "plait") == _run_collectives(python, "jax")


# ---------------------------------------------------------------------------
# Top-level device names


def test_device_and_sharding_names_are_plaits() -> None:
    d = plait.devices()[0]
    assert isinstance(d, plait.Device) and not isinstance("cpu", plait.Device)
    assert plait.NamedSharding is plait.sharding.NamedSharding and plait.P is plait.sharding.PartitionSpec
    assert plait.make_mesh is plait.sharding.make_mesh and plait.reshard is plait.sharding.reshard
    assert plait.set_mesh is plait.sharding.set_mesh
    mesh = plait.make_mesh((1,), ("x",))
    x = plait.reshard(pnp.arange(4.0), plait.NamedSharding(mesh, plait.P("x")))
    assert x.sharding == plait.NamedSharding(mesh, plait.P("x"))


def test_set_mesh_sets_now_and_restores_as_a_context_manager() -> None:
    m1 = plait.make_mesh((1,), ("a",))
    m2 = plait.make_mesh((1,), ("b",))
    assert plait.sharding.get_mesh() is None
    try:
        plait.set_mesh(m1)
        assert plait.sharding.get_mesh() is m1
        with plait.set_mesh(m2) as entered:
            assert entered is None and plait.sharding.get_mesh() is m2
            y = plait.reshard(pnp.ones(2), plait.P("b"))
            assert y.sharding == plait.NamedSharding(m2, plait.P("b"))
            assert plait.device_put(np.ones(2), plait.P("b")).sharding == plait.NamedSharding(m2, plait.P("b"))
        assert plait.sharding.get_mesh() is m1
        plait.set_mesh(None)
        assert plait.sharding.get_mesh() is None
        with pytest.raises(ValueError, match=r"device_put: a PartitionSpec P\('b',\) needs a context mesh"):
            plait.device_put(np.ones(2), plait.P("b"))
        with pytest.raises(ValueError, match=r"set_mesh: expected a plait.sharding.Mesh or None, got int: 3"):
            plait.set_mesh(3)  # type: ignore[arg-type]
    finally:
        plait.set_mesh(None)


def test_smap_maps_one_mesh_axis_with_vmap_style_axes() -> None:
    mesh = plait.make_mesh((1,), ("x",))

    @plait.smap(in_axes=(0, None), out_axes=0, axis_name="x")
    def f(a: Any, b: Any) -> Any:
        return a * b + lax.axis_index("x")

    with pytest.raises(ValueError, match=r"smap: the context mesh is empty; enter one with plait.set_mesh"):
        f(pnp.ones(4), 2.0)
    with plait.set_mesh(mesh):
        np.testing.assert_array_equal(np.asarray(f(pnp.arange(4.0), 2.0)), np.arange(4.0) * 2)
        g = plait.smap(lambda a: a.sum(1), in_axes=1, out_axes=0, axis_name="x")
        np.testing.assert_array_equal(np.asarray(g(pnp.ones((2, 3)))), [3.0, 3.0])
    with pytest.raises(ValueError, match="smap: in_axes is required: JAX infers it only from explicit-sharding"):
        plait.smap(lambda a: a, out_axes=0, axis_name="x")
    with pytest.raises(TypeError, match="smap: axis_name must be one"):
        plait.smap(lambda a: a, in_axes=0, out_axes=0, axis_name=("x",))
    with pytest.raises(TypeError, match="smap: in_axes must be an int, None or a tuple"):
        plait.smap(lambda a: a, in_axes=[0], out_axes=0, axis_name="x")
    with pytest.raises(TypeError, match="smap: the leaves of out_axes must be non-negative ints or None"):
        plait.smap(lambda a: a, in_axes=0, out_axes=-1, axis_name="x")


def test_process_names_and_their_former_host_names() -> None:
    assert plait.process_indices() == [0] and plait.process_indices("cpu") == [0]
    with pytest.warns(UserWarning, match="host_count has been renamed to process_count"):
        assert plait.host_count() == 1
    with pytest.warns(UserWarning, match="host_id has been renamed to process_index"):
        assert plait.host_id() == 0
    with pytest.warns(UserWarning, match="host_ids has been renamed to process_indices"):
        assert plait.host_ids() == [0]
    with pytest.raises(RuntimeError, match="process_count: unknown backend 'gpu'"):
        plait.process_indices("gpu")


def test_live_arrays_lists_live_arrays_only() -> None:
    a = pnp.arange(3.0) + 1
    b = plait.device_put(np.ones(2))
    live = plait.live_arrays()
    assert any(x is a for x in live) and any(x is b for x in live)
    assert all(isinstance(x, plait.Array) and type(x) is type(a) and not x.is_deleted() for x in live)
    b.delete()
    assert not any(x is b for x in plait.live_arrays("cpu"))
    with pytest.raises(RuntimeError, match="live_arrays: unknown backend 'tpu'"):
        plait.live_arrays("tpu")


def test_shard_is_the_class_of_addressable_shards_with_jaxs_constructor() -> None:
    x = pnp.arange(3.0)
    d = plait.devices()[0]
    (piece,) = x.addressable_shards
    assert type(piece) is plait.Shard
    s = plait.Shard(d, plait.sharding.SingleDeviceSharding(d), (3,), x)
    assert (s.device, s.index, s.replica_id, s.data) == (d, (slice(None),), 0, x)
    assert repr(s) == "Shard(device=CpuDevice(id=0), index=(slice(None, None, None),), replica_id=0, data=[0. 1. 2.])"
    bare = plait.Shard(d, x.sharding, [3])
    assert bare.data is None and repr(bare).endswith("replica_id=0, data=None)")  # as JAX's


# ---------------------------------------------------------------------------
# Configuration: log_compiles, no_tracing, no_execution, default_device


def test_log_compiles_logs_traces_and_compilations(caplog: pytest.LogCaptureFixture) -> None:
    x = pnp.arange(3.0)

    def fresh(a: Any) -> Any:
        return a * 7 - 1

    with caplog.at_level(logging.DEBUG, logger="plait_dispatch.cache"):
        with plait.log_compiles():
            assert plait.log_compiles.value is True
            plait.jit(fresh)(x)
        assert plait.log_compiles.value is False
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(re.fullmatch(r"Finished tracing jit\(fresh\) in [0-9.]+ sec", m) for m in warnings), warnings
    assert any(re.fullmatch(r"Compiled jit\(fresh\) for \(f32\[3\]\) on cpu:0 in [0-9.]+ sec", m) for m in warnings)
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="plait_dispatch.cache"):
        plait.jit(lambda a: a * 9)(x)  # logged at DEBUG level only
    assert [r.levelno for r in caplog.records if "Compiled" in r.getMessage()] == [logging.DEBUG]
    plait.config.update("jax_log_compiles", True)
    try:
        assert plait.log_compiles.value is True and plait.config.read("jax_log_compiles") is True
    finally:
        plait.config.update("jax_log_compiles", False)


def test_no_tracing_refuses_tracing_but_not_cached_calls() -> None:
    f = plait.jit(lambda a: a + 1)
    x = pnp.arange(3.0)
    f(x)
    with plait.no_tracing():
        assert plait.no_tracing.value is True
        np.testing.assert_array_equal(np.asarray(f(x)), [1.0, 2.0, 3.0])
        with pytest.raises(RuntimeError, match=r"tracing jit\(<lambda>\) \(defined at .*\) to a program, but "
                                               r"no_tracing is set"):  # fmt: skip
            f(pnp.ones(5))
        with pytest.raises(RuntimeError, match=r"tracing .*for make_jaxpr to a program, but no_tracing is set"):
            plait.make_jaxpr(lambda a: a * 2)(1.0)
        np.testing.assert_array_equal(np.asarray(x * 2), [0.0, 2.0, 4.0])  # eager operations trace nothing
    assert plait.no_tracing.value is False
    np.testing.assert_array_equal(np.asarray(f(pnp.ones(5))), np.full(5, 2.0))


def test_no_execution_refuses_running_computations() -> None:
    f = plait.jit(lambda a: a * 2)
    x = pnp.arange(3.0)
    f(x)
    with plait.no_execution():
        with pytest.raises(RuntimeError, match=r"plait tried to execute jit\(<lambda>\), but no_execution is set"):
            f(x)
        with pytest.raises(RuntimeError, match="plait tried to execute add, but no_execution is set"):
            x + 1
        assert plait.eval_shape(f, x).shape == (3,)  # shapes need no execution
        lowered = plait.jit(lambda a: a - 1).lower(x)
        assert "stablehlo.subtract" in lowered.as_text()
    np.testing.assert_array_equal(np.asarray(f(x)), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(x + 1), [1.0, 2.0, 3.0])


def test_default_device_values_and_errors() -> None:
    d = plait.devices()[0]
    assert plait.default_device.value is None
    with plait.default_device(d):
        assert plait.default_device.value is d
        y = pnp.ones(2) + 1
        assert y.devices() == {d} and not y.committed
    with plait.default_device("cpu"):
        assert plait.default_device.value == "cpu" and (pnp.ones(2) * 2).devices() == {d}
    assert plait.default_device.value is None
    with pytest.raises(ValueError, match=r"default_device must be a device of plait.devices\(\) .* got int: 3"):
        plait.default_device(3)
    with pytest.raises(ValueError, match="default_device must be a device"):
        plait.config.update("jax_default_device", 3)
    with pytest.raises(RuntimeError, match="default_device: unknown backend 'gpu'"):
        plait.default_device("gpu")
    with pytest.raises(TypeError, match=r"default_device\(\) needs a value"):
        plait.default_device()
    plait.config.update("jax_default_device", d)
    try:
        assert plait.default_device.value is d and (pnp.ones(1) + 0).devices() == {d}
    finally:
        plait.config.update("jax_default_device", None)
    assert not plait.config.guarded


def test_effects_barrier_waits_for_host_callbacks() -> None:
    ran: list[float] = []

    def slow(v: Any) -> None:
        time.sleep(0.05)
        ran.append(float(v.sum()))

    @plait.jit
    def f(a: Any) -> Any:
        plait.debug.callback(slow, a)
        return a + 1

    for k in range(3):
        f(pnp.full((2,), float(k)))
    plait.effects_barrier()
    assert ran == [0.0, 2.0, 4.0]
    plait.effects_barrier()  # nothing outstanding: returns at once
    assert ran == [0.0, 2.0, 4.0]


# ---------------------------------------------------------------------------
# debug: sharding views and breakpoints


def _printed(fn: Any, *args: Any, **kwargs: Any) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args, **kwargs)
    return buf.getvalue()


def test_visualize_array_sharding_on_one_device_as_jax_prints_it() -> None:
    assert _printed(plait.debug.visualize_array_sharding, pnp.arange(8.0)) == (
        "┌───────┐\n│ CPU 0 │\n└───────┘\n"
    )
    blank = "│" + " " * 48 + "│\n"
    assert _printed(plait.debug.visualize_array_sharding, pnp.zeros((2, 4))) == (
        "┌" + "─" * 48 + "┐\n" + blank * 4 + "│" + " " * 21 + "CPU 0" + " " * 22 + "│\n" + blank * 4
        + "└" + "─" * 48 + "┘\n"
    )
    d = plait.devices()[0]
    one = plait.sharding.SingleDeviceSharding(d)
    both = _printed(plait.debug.visualize_sharding, (4, 4), one, scale=0.3) + _printed(
        plait.debug.visualize_sharding, (4, 4), one, scale=0.5, min_width=20
    )
    assert both == (  # JAX 0.10.2's text for the same two calls
        "┌───────┐\n│ CPU 0 │\n│       │\n└───────┘\n┌──────────────────┐\n│                  │\n"
        "│      CPU 0       │\n│                  │\n│                  │\n└──────────────────┘\n"
    )
    with pytest.raises(ValueError, match=r"only shapes of 1 or 2 dimensions can be shown, got \(2, 2, 2\)"):
        plait.debug.visualize_array_sharding(pnp.zeros((2, 2, 2)))


def test_inspect_array_sharding_calls_back_with_each_leafs_sharding() -> None:
    seen: list[Any] = []
    x = pnp.arange(3.0)
    plait.debug.inspect_array_sharding({"a": x, "b": [x * 2]}, callback=seen.append)
    assert seen == [x.sharding, x.sharding]
    with pytest.raises(NotImplementedError, match=r"inspect_array_sharding of a traced value .* is not supported"):
        plait.jit(lambda a: plait.debug.inspect_array_sharding(a, callback=print))(x)
    with pytest.raises(TypeError, match=r"expected Arrays \(with a \.sharding\), got ndarray"):
        plait.debug.inspect_array_sharding(np.ones(2), callback=seen.append)


def _inner(y: Any, commands: str, out: io.StringIO) -> Any:
    z = y * 2
    plait.debug.breakpoint(stdin=io.StringIO(commands), stdout=out)
    return z + 1


def test_breakpoint_inside_jit_shows_the_values_in_every_frame() -> None:
    out = io.StringIO()
    commands = "p z\np y\nup\np w\nw\np type(w).__name__\nn\nc\n"

    @plait.jit
    def outer(x: Any) -> Any:
        w = pnp.sin(x)
        return _inner(w, commands, out)

    result = outer(pnp.arange(3.0))
    np.testing.assert_allclose(np.asarray(result), 2 * np.sin(np.arange(3.0)) + 1, rtol=1e-6)
    text = out.getvalue()
    assert text.startswith("Entering pdb (plait.debug.breakpoint):\n> ") and "_inner()" in text
    sines = np.asarray(pnp.sin(pnp.arange(3.0)))
    assert repr(sines * 2) in text and repr(sines) in text  # p z, p y: the running program's values
    assert "outer()\n-> return _inner(w, commands, out)" in text  # up
    assert "'ndarray'" in text
    assert "*** not available at a plait breakpoint: the program runs compiled" in text
    where = text[text.index("(Pdb)   ") :]
    assert where.index("outer()") < where.index("_inner()")  # where: outermost first


def test_breakpoint_eagerly_under_vmap_and_with_a_token() -> None:
    out = io.StringIO()

    def body(a: Any) -> Any:
        b = a + 10
        plait.debug.breakpoint(stdin=io.StringIO("p b\nc\np b\nc\n"), stdout=out)
        return b

    np.testing.assert_array_equal(np.asarray(plait.vmap(body)(pnp.arange(2.0))), [10.0, 11.0])
    assert out.getvalue().count("Entering pdb") == 2
    assert "array(10., dtype=float32)" in out.getvalue() and "array(11., dtype=float32)" in out.getvalue()
    out2 = io.StringIO()

    def with_token(x: Any) -> Any:
        t = plait.debug.breakpoint(token=x, stdin=io.StringIO("p x\nc\n"), stdout=out2)
        return t * 3

    np.testing.assert_array_equal(np.asarray(plait.jit(with_token)(pnp.ones(2))), [3.0, 3.0])
    assert "array([1., 1.], dtype=float32)" in out2.getvalue()
    out3 = io.StringIO()
    plait.debug.breakpoint(stdin=io.StringIO("p out3 is not None\nc\n"), stdout=out3)  # eagerly: at once
    assert "True" in out3.getvalue()
    with pytest.raises(ValueError, match="`ordered` and `token` are mutually exclusive"):
        plait.debug.breakpoint(token=pnp.ones(1), ordered=True)
    with pytest.raises(TypeError, match=r"unexpected keyword arguments \['bogus'\]"):
        plait.debug.breakpoint(bogus=1)


def test_breakpoint_quit_exits_and_frames_can_be_limited() -> None:
    out = io.StringIO()
    with pytest.raises(SystemExit):
        plait.debug.breakpoint(stdin=io.StringIO("q\n"), stdout=out)
    out = io.StringIO()
    plait.debug.breakpoint(num_frames=1, stdin=io.StringIO("up\nc\n"), stdout=out)
    assert "*** Oldest frame" in out.getvalue()


# ---------------------------------------------------------------------------
# Eight devices, in a subprocess


def test_device_names_on_eight_cpu_devices() -> None:
    checks = Path(__file__).with_name("device_names_checks.py")
    env = {**os.environ, "PLAIT_NUM_CPU_DEVICES": "8", "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(checks)],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
    assert re.search(r"\d+ passed", proc.stdout) and "failed" not in proc.stdout
