"""Dispatch's hooks for issue 13's options: ``default_device``'s validator,
``no_execution`` on every path that runs a program, ``log_compiles``, the
completion tokens of programs with host callbacks (``effects_barrier``), and
the device queries (``live_arrays``, ``process_indices``, ``Shard``)."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import config
from plait_core.config import default_device, log_compiles, no_execution
from plait_core.host_callbacks import debug_callback
from plait_dispatch import (
    Array,
    Device,
    Shard,
    _jaxlib,
    device_put,
    devices,
    effects_barrier,
    jit,
    live_arrays,
    process_indices,
)
from plait_dispatch.jit import jit_state


def test_default_device_validator_and_resolution() -> None:
    d = devices()[0]
    assert isinstance(d, Device)
    with default_device(d):
        assert _jaxlib.default_device() is d and config.guarded
    with default_device("cpu"):
        assert _jaxlib.default_device() is _jaxlib.first_device()
    with pytest.raises(ValueError, match=r"default_device must be a device of plait.devices\(\)"):
        default_device(object())
    with pytest.raises(RuntimeError, match="default_device: unknown backend 'tpu'"):
        default_device("tpu")
    other = _jaxlib.make_standalone_client(1).devices()[0]
    with pytest.raises(ValueError, match=r"default_device must be a device of plait\.devices"):
        default_device(other)  # a device of another client


def test_no_execution_on_eager_jit_and_fast_paths() -> None:
    f = jit(lambda a, b: a * b)
    x = pnp.arange(3.0)
    f(x, x)
    f(x, x)  # the fast handler is installed
    assert jit_state(f) is not None and jit_state(f).fast  # type: ignore[union-attr]
    with no_execution():
        with pytest.raises(RuntimeError, match=r"plait tried to execute jit\(<lambda>\), but no_execution is set"):
            f(x, x)
        with pytest.raises(RuntimeError, match="plait tried to execute mul, but no_execution is set"):
            x * 2.0
    np.testing.assert_array_equal(np.asarray(f(x, x)), [0.0, 1.0, 4.0])


def test_log_compiles_level(caplog: pytest.LogCaptureFixture) -> None:
    x = pnp.arange(4.0)
    with caplog.at_level(logging.DEBUG, logger="plait_dispatch.cache"), log_compiles():
        jit(lambda a: a - 3)(x)
    messages = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert any(lvl == logging.WARNING and m.startswith("Compiled jit(<lambda>) for (f32[4]) on cpu:0 in ") for lvl, m
               in messages), messages  # fmt: skip


def test_programs_with_callbacks_keep_a_token_until_the_barrier() -> None:
    calls: list[int] = []

    def slow(v: Any) -> None:
        time.sleep(0.02)
        calls.append(int(v))

    @jit
    def f(a: Any) -> Any:
        debug_callback(slow, a)
        return a + 1

    f(np.int32(1))
    f(np.int32(2))
    st = jit_state(f)
    assert st is not None and not st.fast and not st.tree_fast  # callbacks keep to the slow path
    assert len(_jaxlib._effect_tokens) >= 1
    effects_barrier()
    assert calls == [1, 2] and _jaxlib._effect_tokens == []


def test_live_arrays_process_indices_and_shard() -> None:
    a = device_put(np.ones(3))
    assert any(x is a for x in live_arrays()) and all(type(x) is Array for x in live_arrays())
    assert process_indices() == [0]
    s = Shard(devices()[0], a.sharding, (3,), a)
    assert s.index == (slice(None),) and s.replica_id == 0 and s.data is a
    with pytest.raises(ValueError, match=r"Shard: the device .* holds no piece of"):
        Shard(_jaxlib.make_standalone_client(1).devices()[0], a.sharding, (3,))
