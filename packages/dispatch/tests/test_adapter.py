"""The jaxlib adapter: client and devices, transfers, compiling and running
hand-written StableHLO, donation, compiled statistics, and never importing jax."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

from plait_core import ShapedArray
from plait_dispatch import _jaxlib

DTYPES = [np.float32, np.int32, np.float16, ml_dtypes.bfloat16]
SHAPES = [(), (3,), (2, 3)]

_MLIR_TYPE = {
    np.dtype(np.float32): "f32",
    np.dtype(np.int32): "i32",
    np.dtype(np.float16): "f16",
    np.dtype(ml_dtypes.bfloat16): "bf16",
}


def _tensor(shape: tuple[int, ...], dtype: np.dtype) -> str:
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{_MLIR_TYPE[np.dtype(dtype)]}>"


def _binary_module(op: str, shape: tuple[int, ...], dtype: np.dtype, donate: bool = False) -> str:
    t = _tensor(shape, dtype)
    attr = " {tf.aliasing_output = 0 : i32}" if donate else ""
    return textwrap.dedent(f"""\
        module @test_{op} {{
          func.func public @main(%arg0: {t}{attr}, %arg1: {t}) -> ({t}) {{
            %0 = stablehlo.{op} %arg0, %arg1 : {t}
            return %0 : {t}
          }}
        }}
        """)


def _put(value: np.ndarray, device: object = None) -> object:
    dev = _jaxlib.default_device() if device is None else device
    return _jaxlib.device_put(value, ShapedArray(value.shape, value.dtype), dev, False)


def _sample(shape: tuple[int, ...], dtype: np.dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-8, 8, size=shape).astype(dtype)


def test_client_and_devices() -> None:
    devs = _jaxlib.devices()
    assert len(devs) >= 1
    assert _jaxlib.default_device() is devs[0]
    assert _jaxlib.default_backend() == "cpu"
    assert [d.id for d in devs] == list(range(len(devs)))
    assert _jaxlib.client() is _jaxlib.client()
    assert _jaxlib.device_description(devs[0]) == "cpu:0"
    assert _jaxlib.is_device(devs[0]) and not _jaxlib.is_device("cpu:0")
    assert _jaxlib.JAXLIB_VERSION == "0.10.2"


def test_device_count_cannot_change_once_the_client_exists() -> None:
    have = len(_jaxlib.devices())
    _jaxlib.set_num_cpu_devices(have)  # the same count is fine
    with pytest.raises(RuntimeError, match=r"set_num_cpu_devices\(\d+\): the CPU client already exists"):
        _jaxlib.set_num_cpu_devices(have + 1)
    with pytest.raises(ValueError, match="expected a positive int, got 0"):
        _jaxlib.set_num_cpu_devices(0)


@pytest.mark.parametrize("raw", ["zero", "0", "-2"])
def test_bad_device_count_in_environment(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv(_jaxlib.NUM_CPU_DEVICES_ENV, raw)
    with pytest.raises(ValueError, match=f"PLAIT_NUM_CPU_DEVICES must be a positive integer, got '{raw}'"):
        _jaxlib._num_devices_from_env()


def test_device_count_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    monkeypatch.setenv(_jaxlib.NUM_CPU_DEVICES_ENV, "3")
    assert _jaxlib._num_devices_from_env() == 3
    monkeypatch.delenv(_jaxlib.NUM_CPU_DEVICES_ENV)
    assert _jaxlib._num_devices_from_env() == 1


def test_device_count_from_jaxs_xla_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    # JAX's way of asking for CPU devices (flax's spmd tests set it), used when
    # PLAIT_NUM_CPU_DEVICES is not set.
    monkeypatch.delenv(_jaxlib.NUM_CPU_DEVICES_ENV, raising=False)
    monkeypatch.setenv("XLA_FLAGS", "--xla_cpu_enable_fast_math=false --xla_force_host_platform_device_count=4")
    assert _jaxlib._num_devices_from_env() == 4
    monkeypatch.setenv(_jaxlib.NUM_CPU_DEVICES_ENV, "2")
    assert _jaxlib._num_devices_from_env() == 2  # plait's own variable wins
    monkeypatch.delenv(_jaxlib.NUM_CPU_DEVICES_ENV)
    monkeypatch.setenv("XLA_FLAGS", "--xla_force_host_platform_device_count=0")
    with pytest.raises(ValueError, match="XLA_FLAGS: --xla_force_host_platform_device_count=0 must give a positive"):
        _jaxlib._num_devices_from_env()


@pytest.mark.parametrize(
    "dtype",
    [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint32, np.float16, ml_dtypes.bfloat16,
     np.float32, np.complex64, ml_dtypes.float8_e4m3fn],
    ids=lambda d: np.dtype(d).name,
)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3, 4)], ids=str)
def test_transfer_round_trip(dtype: type, shape: tuple[int, ...]) -> None:
    x = _sample(shape, np.dtype(dtype), 0)
    if x.dtype.kind == "c":
        x = x + 1j * _sample(shape, np.dtype(dtype), 1)
    buf = _put(x)
    y = _jaxlib.to_numpy(buf, np.dtype(dtype))
    assert (y.dtype, y.shape) == (x.dtype, x.shape)
    assert y.tobytes() == x.tobytes()
    y.fill(1)  # the host copy is the caller's: writing it leaves the device data alone
    assert _jaxlib.to_numpy(buf, np.dtype(dtype)).tobytes() == x.tobytes()


def test_transfer_copies_host_data_and_handles_strides() -> None:
    x = np.arange(12, dtype=np.float32).reshape(3, 4).T
    buf = _put(x)
    expected = x.copy()
    x[0, 0] = 100.0
    np.testing.assert_array_equal(_jaxlib.to_numpy(buf, np.dtype(np.float32)), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("op,ref", [("add", np.add), ("multiply", np.multiply), ("maximum", np.maximum)])
def test_compile_and_execute(dtype: type, shape: tuple[int, ...], op: str, ref: np.ufunc) -> None:
    dt = np.dtype(dtype)
    dev = _jaxlib.default_device()
    exe = _jaxlib.compile_stablehlo(_binary_module(op, shape, dt), dev)
    x, y = _sample(shape, dt, 1), _sample(shape, dt, 2)
    out_aval = ShapedArray(shape, dt)
    (out,) = _jaxlib.execute(exe, [_put(x), _put(y)], [_jaxlib.result_handler(out_aval, dev)])
    assert out.aval is out_aval
    np.testing.assert_array_equal(_jaxlib.to_numpy(out, dt).astype(np.float64), ref(x, y).astype(np.float64))


def test_execute_many_times_reuses_the_executable() -> None:
    dev = _jaxlib.default_device()
    exe = _jaxlib.compile_stablehlo(_binary_module("add", (3,), np.dtype(np.float32)), dev)
    handlers = [_jaxlib.result_handler(ShapedArray((3,), np.float32), dev)]
    acc = _put(np.zeros(3, np.float32))
    one = _put(np.ones(3, np.float32))
    for _ in range(10):
        (acc,) = _jaxlib.execute(exe, [acc, one], handlers)
    np.testing.assert_array_equal(_jaxlib.to_numpy(acc, np.dtype(np.float32)), np.full(3, 10, np.float32))


def test_donation_deletes_the_input() -> None:
    dev = _jaxlib.default_device()
    f32 = np.dtype(np.float32)
    exe = _jaxlib.compile_stablehlo(_binary_module("subtract", (4,), f32, donate=True), dev)
    x, y = np.arange(4, dtype=np.float32), np.full(4, 0.5, np.float32)
    bx, by = _put(x), _put(y)
    (out,) = _jaxlib.execute(exe, [bx, by], [_jaxlib.result_handler(ShapedArray((4,), f32), dev)])
    assert _jaxlib.is_deleted(bx)
    assert not _jaxlib.is_deleted(by)
    np.testing.assert_array_equal(_jaxlib.to_numpy(out, f32), x - y)
    stats = _jaxlib.memory_stats(exe)
    assert stats["alias_size_in_bytes"] == 16
    assert stats["argument_size_in_bytes"] == 32
    assert stats["output_size_in_bytes"] == 16


def test_memory_stats_and_cost_analysis_without_donation() -> None:
    dev = _jaxlib.default_device()
    exe = _jaxlib.compile_stablehlo(_binary_module("add", (3,), np.dtype(np.float32)), dev)
    stats = _jaxlib.memory_stats(exe)
    assert stats["alias_size_in_bytes"] == 0
    assert stats["argument_size_in_bytes"] == 24
    assert {"temp_size_in_bytes", "generated_code_size_in_bytes", "peak_memory_in_bytes"} <= set(stats)
    cost = _jaxlib.cost_analysis(exe)
    assert cost["flops"] == 3.0
    assert "add" in _jaxlib.hlo_text(exe)


def test_compile_error_carries_xla_message() -> None:
    with pytest.raises(_jaxlib.XlaRuntimeError, match="custom op 'garbage' is unknown"):
        _jaxlib.compile_stablehlo("module @bad { garbage }", _jaxlib.default_device())


def test_delete_and_fetch_after_delete() -> None:
    buf = _put(np.ones(3, np.float32))
    assert not _jaxlib.is_deleted(buf)
    _jaxlib.delete(buf)
    assert _jaxlib.is_deleted(buf)
    _jaxlib.delete(buf)  # twice is harmless
    with pytest.raises(_jaxlib.XlaRuntimeError, match="deleted"):
        _jaxlib.to_numpy(buf, np.dtype(np.float32))


def test_dlpack_capsule_outlives_the_original() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    buf = _put(x)
    capsule = _jaxlib.dlpack_capsule(buf, _jaxlib.default_device())
    _jaxlib.delete(buf)  # would abort the process if the capsule shared buf
    view = np.from_dlpack(_jaxlib._Capsule(capsule))
    np.testing.assert_array_equal(view, x)


def test_block_until_ready_and_sizes() -> None:
    bufs = [_put(np.ones(n, np.float32)) for n in (1, 2, 3)]
    _jaxlib.block_until_ready(bufs)
    _jaxlib.block_until_ready(bufs[:1])
    _jaxlib.block_until_ready([])
    assert [_jaxlib.nbytes_on_device(b) for b in bufs] == [4, 8, 12]


def _run(script: str, **env: str) -> str:
    full_env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), **env}
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, env=full_env, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_plait_dispatch_never_imports_jax() -> None:
    out = _run("""
        import sys, pickle
        import numpy as np
        import plait_dispatch
        from plait_dispatch import _jaxlib, placement as devices
        from plait_core import ShapedArray
        x = devices.device_put(np.arange(3, dtype=np.float32))
        text = '''module @m { func.func public @main(%a: tensor<3xf32>) -> tensor<3xf32> {
            %0 = stablehlo.negate %a : tensor<3xf32>
            return %0 : tensor<3xf32> } }'''
        dev = _jaxlib.default_device()
        exe = _jaxlib.compile_stablehlo(text, dev)
        (out,) = _jaxlib.execute(exe, [x._buf], [_jaxlib.result_handler(ShapedArray((3,), np.float32), dev)])
        print(_jaxlib.to_numpy(out, np.dtype(np.float32)).tolist(), repr(x), str(x), x.tolist())
        pickle.loads(pickle.dumps(x)); np.from_dlpack(x); x.copy().block_until_ready(); x.delete()
        _jaxlib.memory_stats(exe); _jaxlib.cost_analysis(exe)
        print(sorted(m for m in sys.modules if m == "jax" or m.startswith("jax.")))
    """)
    assert out.splitlines() == ["[-0.0, -1.0, -2.0] Array([0., 1., 2.], dtype=float32) [0. 1. 2.] [0.0, 1.0, 2.0]", "[]"]


def test_two_devices_compile_and_run_on_the_second() -> None:
    out = _run("""
        import numpy as np
        from plait_dispatch import _jaxlib
        from plait_core import ShapedArray
        d0, d1 = _jaxlib.devices()
        text = '''module @m { func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {
            %0 = stablehlo.add %a, %a : tensor<2xf32>
            return %0 : tensor<2xf32> } }'''
        aval = ShapedArray((2,), np.float32)
        exe = _jaxlib.compile_stablehlo(text, d1)
        x = _jaxlib.device_put(np.array([1.0, 2.0], np.float32), aval, d1, True)
        (out,) = _jaxlib.execute(exe, [x], [_jaxlib.result_handler(aval, d1)])
        moved = _jaxlib.copy_buffer(out, d0)
        print(_jaxlib.to_numpy(out, aval.dtype).tolist(), out._sharding._device.id,
              _jaxlib.to_numpy(moved, aval.dtype).tolist(), moved._sharding._device.id)
        try:
            _jaxlib.execute(exe, [_jaxlib.device_put(np.zeros(2, np.float32), aval, d0, True)],
                            [_jaxlib.result_handler(aval, d1)])
        except _jaxlib.XlaRuntimeError as e:
            print("wrong device:", "is on device cpu:0" in str(e))
    """, PLAIT_NUM_CPU_DEVICES="2")
    assert out.splitlines() == ["[2.0, 4.0] 1 [2.0, 4.0] 0", "wrong device: True"]


def test_set_num_cpu_devices_before_first_use() -> None:
    out = _run("""
        from plait_dispatch import _jaxlib
        _jaxlib.set_num_cpu_devices(3)
        print(len(_jaxlib.devices()))
    """, PLAIT_NUM_CPU_DEVICES="2")
    assert out.strip() == "3"
