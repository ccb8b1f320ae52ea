"""Behaviour the optax/chex/equinox test suites rely on (issue 25): device
arrays' ``unsafe_buffer_pointer``, concrete 0-d device arrays as ``arange``
bounds, the ``jax_num_cpu_devices`` option and ``Lowered.compiler_ir``."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

import plait_core as pc
import plait_dispatch as pd
from plait_core import DeletedArrayError
from plait_core import numpy as pnp


def test_unsafe_buffer_pointer_addresses_the_data() -> None:
    x = pd.device_put(np.array([1.5, -2.0, 3.25, 8.0], np.float32))
    ptr = x.unsafe_buffer_pointer()
    assert isinstance(ptr, int) and ptr == x.unsafe_buffer_pointer()
    assert [ctypes.c_float.from_address(ptr + 4 * i).value for i in range(4)] == [1.5, -2.0, 3.25, 8.0]
    y = pd.device_put(np.arange(3, dtype=np.int32))
    assert y.unsafe_buffer_pointer() != ptr
    x.delete()  # the pointer's DLPack export holds no reference: deleting is fine
    with pytest.raises(DeletedArrayError, match=r"cannot unsafe_buffer_pointer: Array f32\[4\] was deleted"):
        x.unsafe_buffer_pointer()


def test_arange_takes_concrete_device_scalars() -> None:
    out = pnp.arange(pnp.array(3))
    assert isinstance(out, pd.Array) and out.dtype == np.int32 and np.asarray(out).tolist() == [0, 1, 2]
    assert pnp.arange(pnp.array(3, np.int8)).dtype == np.int8
    floats = pnp.arange(pnp.array(1.0), pnp.array(3))
    assert floats.dtype == np.float32 and np.asarray(floats).tolist() == [1.0, 2.0]
    assert np.asarray(pnp.arange(1, pnp.array(7), pnp.array(2))).tolist() == [1, 3, 5]
    with pytest.raises(ValueError, match=r"arange: start must be a scalar, got an array of shape \(1,\)"):
        pnp.arange(pnp.array([3]))
    with pytest.raises(pc.ConcretizationTypeError, match=r"arange: the start argument needs a concrete value"):
        pd.jit(lambda n: pnp.arange(n))(3)


_NUM_CPU_DEVICES_PROGRAM = """
import plait_core as pc
import plait_dispatch as pd
pc.config.update("jax_num_cpu_devices", 3)
print(len(pd.devices()), pc.config.jax_num_cpu_devices)
pc.config.update("jax_num_cpu_devices", 3)  # the count it has: fine
try:
    pc.config.update("jax_num_cpu_devices", 2)
except RuntimeError as e:
    print("RuntimeError", "already exists with 3 device(s)" in str(e), pc.config.jax_num_cpu_devices)
"""


def test_num_cpu_devices_option_before_and_after_the_first_device() -> None:
    env = {k: v for k, v in os.environ.items() if k != "PLAIT_NUM_CPU_DEVICES"}
    done = subprocess.run([sys.executable, "-c", _NUM_CPU_DEVICES_PROGRAM], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["3", "3", "RuntimeError", "True", "3"]


def test_compiler_ir_hlo_and_stablehlo() -> None:
    lowered = pd.jit(lambda x: pnp.sin(x) * 2.0).lower(np.ones(3, np.float32))
    hlo = lowered.compiler_ir("hlo")
    text = hlo.as_hlo_text()
    assert text.startswith("HloModule ") and " sine(" in text and " multiply(" in text
    assert "f32[3]" in text and hlo.as_hlo_module() is not None
    module = lowered.compiler_ir()
    assert type(module).__name__ == "Module" and "stablehlo.sine" in str(module)
    assert str(lowered.compiler_ir("stablehlo")) == str(module)
    with pytest.raises(ValueError, match=r"compiler_ir: unknown dialect 'mhlo'; plait has 'stablehlo' and 'hlo'"):
        lowered.compiler_ir("mhlo")
