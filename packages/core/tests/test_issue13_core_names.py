"""Core's part of issue 13: the configuration states (``log_compiles``,
``no_tracing``, ``no_execution``, ``default_device``), ``set_mesh`` as JAX has
it, ``smap``'s argument checks, and the collectives composed of others
(``axis_size``, ``pbroadcast``, ``pshuffle``, ``pswapaxes``), staged with an
axis environment (their values come from the interpreters that map axes)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import lax
from plait_core.config import State, config, default_device, log_compiles, no_execution, no_tracing
from plait_core.shard_map import smap
from plait_core.sharding import Mesh, get_mesh, set_mesh


def test_states_set_inside_their_block_and_read_their_value() -> None:
    for state, attr in ((log_compiles, "log_compiles"), (no_tracing, "no_tracing"), (no_execution, "no_execution")):
        assert state.value is False
        with state():
            assert state.value is True and getattr(config, attr) is True
            with state(False):
                assert state.value is False
            assert state.value is True
        assert state.value is False and config.read(f"jax_{attr}") is False
    assert repr(log_compiles) == "State(log_compiles=False)"


def test_guarded_follows_the_options_that_change_dispatch() -> None:
    assert config.guarded is False
    with no_execution():
        assert config.guarded is True
    with log_compiles(), no_tracing():
        assert config.guarded is False  # neither changes how a cached computation runs
    config.update("jax_disable_jit", True)
    try:
        assert config.guarded is True
    finally:
        config.update("jax_disable_jit", False)
    assert config.guarded is False


def test_default_device_takes_values_through_the_registered_validator() -> None:
    saved = dict(config.validators)
    try:
        config.validators.pop("default_device", None)
        marker = object()
        with default_device(marker):
            assert default_device.value is marker and config.guarded is True
        assert default_device.value is None and config.guarded is False

        def validate(value: Any) -> Any:
            if value == "bad":
                raise ValueError("not a device")
            return value

        config.register_validator("default_device", validate)
        with pytest.raises(ValueError, match="not a device"):
            default_device("bad")
        with pytest.raises(ValueError, match="not a device"):
            config.update("jax_default_device", "bad")
        with pytest.raises(TypeError, match=r"default_device\(\) needs a value"):
            default_device()
    finally:
        config.validators.clear()
        config.validators.update(saved)
    assert isinstance(default_device, State) and default_device.value is None


def test_no_tracing_refuses_staging() -> None:
    with no_tracing(), pytest.raises(RuntimeError, match=r"tracing .*for make_jaxpr to a program, but no_tracing is set"):
        pc.make_jaxpr(lambda x: x + 1)(1.0)
    with no_tracing(), pytest.raises(RuntimeError, match="no_tracing is set"):
        pc.eval_shape(lambda x: x * 2, np.ones(3, np.float32))
    assert pc.make_jaxpr(lambda x: x + 1)(1.0).out_avals[0].shape == ()


def test_set_mesh_is_a_setter_and_a_context_manager() -> None:
    devices = np.array([object()], dtype=object)
    m1, m2 = Mesh(devices, ("a",)), Mesh(devices, ("b",))
    try:
        set_mesh(m1)
        assert get_mesh() is m1
        with set_mesh(m2) as entered:
            assert entered is None and get_mesh() is m2
            with m1:
                assert get_mesh() is m1
            assert get_mesh() is m2
        assert get_mesh() is m1
        set_mesh(None)
        assert get_mesh() is None
        with pytest.raises(ValueError, match=r"set_mesh: expected a plait\.sharding\.Mesh or None, got str: 'a'"):
            set_mesh("a")  # type: ignore[arg-type]
    finally:
        set_mesh(None)


def test_smap_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="smap: in_axes is required"):
        smap(lambda a: a, out_axes=0, axis_name="x")
    with pytest.raises(TypeError, match="smap: axis_name must be one"):
        smap(lambda a: a, in_axes=0, out_axes=0, axis_name=["x"])
    with pytest.raises(TypeError, match=r"smap: the leaves of in_axes must be non-negative ints or None, got \(0, 'a'\)"):
        smap(lambda a, b: a, in_axes=(0, "a"), out_axes=0, axis_name="x")
    decorator = smap(in_axes=0, out_axes=0, axis_name="x")
    mapped = decorator(lambda a: a)
    assert callable(mapped)
    with pytest.raises(ValueError, match="smap: the context mesh is empty"):
        mapped(np.ones(2))


def _stage(f: Any, *args: Any, env: Any = (("i", 4),)) -> pc.ClosedJaxpr:
    closed: pc.ClosedJaxpr = pc.make_jaxpr(f, axis_env=list(env))(*args)
    with pc.extend_axis_env(list(env)):
        pc.check_jaxpr(closed)
    return closed


def test_composed_collectives_stage_to_existing_primitives() -> None:
    x = np.zeros((4, 3), np.float32)
    sizes: list[Any] = []
    _stage(lambda v: sizes.append((lax.axis_size("i"), lax.axis_size(("i", "j")))) or v, x, env=(("i", 4), ("j", 2)))
    assert sizes == [(4, 8)]
    closed = _stage(lambda v: lax.pbroadcast(v, "i", 3), x)
    assert closed.eqns[0].primitive.name == "all_gather" and closed.out_avals[0].shape == (4, 3)
    closed = _stage(lambda v: lax.pshuffle(v, "i", [3, 0, 1, 2]), x)
    (eqn,) = closed.eqns
    assert eqn.primitive.name == "ppermute" and eqn.params["perm"] == ((3, 0), (0, 1), (1, 2), (2, 3))
    closed = _stage(lambda v: lax.pswapaxes(v, "i", 0), x)
    (eqn,) = closed.eqns
    assert eqn.primitive.name == "all_to_all" and (eqn.params["split_axis"], eqn.params["concat_axis"]) == (0, 0)
    with pytest.raises(pc.UnboundAxisNameError, match="axis_size uses the axis name 'k'"):
        _stage(lambda v: v * lax.axis_size("k"), x)
    with pytest.raises(ValueError, match=r"pbroadcast: source must be an int in \[0, 4\)"):
        _stage(lambda v: lax.pbroadcast(v, "i", -1), x)
    with pytest.raises(ValueError, match=r"pshuffle: perm must be a permutation of 0..1, got \[1, 1\]"):
        _stage(lambda v: lax.pshuffle(v, "i", [1, 1]), x)
