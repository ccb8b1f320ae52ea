"""Array, devices and device_put: metadata, host conversion, repr, pickling,
DLPack, deleted/donated arrays, the donate/may_alias table, pytrees and
multi-device placement (in a subprocess with two CPU devices)."""

from __future__ import annotations

import copy
import operator
import os
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from plait_core import DeletedArrayError, get_aval, to_numpy
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.placement import (
    block_until_ready,
    default_backend,
    default_device,
    device_count,
    device_get,
    device_put,
    devices,
    local_device_count,
    local_devices,
)

DTYPES = [np.float32, np.int32, np.bool_, np.float16, ml_dtypes.bfloat16, np.uint8, np.complex64]
SHAPES = [(), (1,), (4,), (2, 3), (2, 0, 3)]


def _sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.integers(-5, 5, size=shape).astype(dtype)


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert (a.dtype, a.shape) == (b.dtype, b.shape)
    assert a.tobytes() == b.tobytes()


# -- metadata and host conversion --------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_metadata_and_data(dtype: Any, shape: tuple[int, ...]) -> None:
    x = _sample(shape, dtype)
    a = device_put(x)
    assert type(a) is Array
    assert a.shape == x.shape and a.ndim == x.ndim and a.size == x.size
    assert a.dtype == x.dtype and a.itemsize == x.itemsize and a.nbytes == x.nbytes
    assert a.weak_type is False and a.committed is False
    assert a.device is default_device() and a.devices() == {default_device()}
    assert get_aval(a) == a.aval
    _same(np.asarray(a), x)
    _same(to_numpy(a), x)
    _same(device_get(a), x)
    assert a.tolist() == x.tolist()
    assert a.on_device_size_in_bytes() >= 0


def test_asarray_dtype_and_copy_arguments() -> None:
    a = device_put(np.arange(3, dtype=np.int32))
    _same(np.asarray(a, dtype=np.float32), np.arange(3, dtype=np.float32))
    _same(np.array(a, copy=True), np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match="can only be read as a copy"):
        np.asarray(a, copy=False)


def test_host_copy_is_independent() -> None:
    a = device_put(np.arange(3, dtype=np.float32))
    h = np.asarray(a)
    h[0] = 42.0
    _same(np.asarray(a), np.arange(3, dtype=np.float32))


@pytest.mark.parametrize(
    "value,expected",
    [
        (np.array([1.0, 2.0], np.float32), "Array([1., 2.], dtype=float32)"),
        (np.array([1, -2], np.int32), "Array([ 1, -2], dtype=int32)"),
        (np.array([True, False]), "Array([ True, False], dtype=bool)"),
        (np.array(3.5, np.float16), "Array(3.5, dtype=float16)"),
        (np.array([1, 2], ml_dtypes.bfloat16), "Array([1, 2], dtype=bfloat16)"),
        (np.zeros((0, 3), np.float32), "Array([], shape=(0, 3), dtype=float32)"),
        (np.zeros((0,), np.int32), "Array([], dtype=int32)"),
        (np.arange(4, dtype=np.float32).reshape(2, 2), "Array([[0., 1.],\n       [2., 3.]], dtype=float32)"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_repr(value: np.ndarray, expected: str) -> None:
    assert repr(device_put(value)) == expected


def test_repr_of_weak_scalar_and_str() -> None:
    a = device_put(1.5)
    assert repr(a) == "Array(1.5, dtype=float32, weak_type=True)"
    assert str(a) == str(np.float32(1.5))
    b = device_put(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert str(b) == str(np.arange(6, dtype=np.int32).reshape(2, 3))


def test_repr_of_long_array_wraps_like_numpy() -> None:
    x = np.linspace(0, 1, 40, dtype=np.float32)
    r = repr(device_put(x))
    body = np.array2string(x, separator=", ", prefix="Array(", suffix=",")
    assert r.startswith("Array(" + body)
    assert r.endswith("dtype=float32)")
    assert all(len(line) <= np.get_printoptions()["linewidth"] for line in r.splitlines())


def test_format() -> None:
    assert f"{device_put(2.25):.3f}" == "2.250"
    assert f"{device_put(np.arange(3, dtype=np.int32))}" == str(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{device_put(np.arange(3, dtype=np.float32)):.2f}"


# -- Python protocols ----------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_len_and_iter(dtype: Any) -> None:
    x = _sample((3, 2), dtype)
    a = device_put(x)
    assert len(a) == 3
    rows = list(a)
    assert all(type(r) is Array and r.shape == (2,) and r.dtype == x.dtype for r in rows)
    for r, expected in zip(rows, x):
        _same(np.asarray(r), expected)


def test_iter_keeps_weak_type_and_placement() -> None:
    a = device_put(np.arange(4, dtype=np.float32).reshape(2, 2), default_device())
    rows = list(a)
    assert all(r.committed for r in rows)
    assert [r.weak_type for r in rows] == [False, False]


def test_len_and_iter_of_scalar() -> None:
    a = device_put(np.float32(1.0))
    with pytest.raises(TypeError, match=r"len\(\) of unsized object \(a 0-d Array f32\[\]\)"):
        len(a)
    with pytest.raises(TypeError, match=r"iteration over a 0-d Array \(f32\[\]\)"):
        iter(a)


@pytest.mark.parametrize(
    "convert,value",
    [(bool, np.bool_(True)), (bool, np.float32(0.0)), (int, np.int32(-7)), (int, np.float32(2.75)),
     (float, np.float32(2.5)), (float, np.int32(3)), (complex, np.complex64(1 + 2j)),
     (operator.index, np.int32(4)), (operator.index, np.uint8(200))],
)
def test_scalar_conversions(convert: Callable[[Any], Any], value: Any) -> None:
    got = convert(device_put(value))
    assert got == convert(value) and type(got) is type(convert(value))


def test_conversion_errors() -> None:
    with pytest.raises(ValueError, match="truth value of an array with more than one element is ambiguous"):
        bool(device_put(np.ones(2, np.float32)))
    with pytest.raises(TypeError, match=r"only 0-d integer Arrays can be used as an index, got f32\[\]"):
        operator.index(device_put(np.float32(1.0)))
    with pytest.raises(TypeError, match=r"only 0-d integer Arrays can be used as an index, got i32\[2\]"):
        operator.index(device_put(np.ones(2, np.int32)))
    with pytest.raises(TypeError, match=r"only 0-d integer Arrays can be used as an index, got bool\[\]"):
        operator.index(device_put(np.bool_(True)))


def test_unhashable() -> None:
    with pytest.raises(TypeError, match=r"unhashable type: 'Array' \(f32\[3\]\)"):
        hash(device_put(np.ones(3, np.float32)))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("weak", [False, True])
def test_pickle_round_trip(dtype: Any, weak: bool) -> None:
    x = _sample((2, 3), dtype)
    a = device_put(x, default_device())
    if weak:
        a = Array(a._buf, a.aval.update(weak_type=True), a.device, a.committed)
    b = pickle.loads(pickle.dumps(a))
    assert type(b) is Array and b.weak_type is weak and b.committed is False
    _same(np.asarray(b), x)
    # The payload is plain NumPy: the reconstructor gets an ndarray.
    _, args = a.__reduce__()
    assert isinstance(args[0], np.ndarray) and args[1] is weak
    _same(args[0], x)


def test_copy() -> None:
    x = _sample((4,), np.float32)
    a = device_put(x, default_device())
    for b in (a.copy(), copy.copy(a), copy.deepcopy(a)):
        assert b is not a and b.committed is a.committed and b.device is a.device
        b.delete()
        _same(np.asarray(a), x)  # the copy had its own buffer


def test_block_until_ready_returns_self() -> None:
    a = device_put(np.ones(3, np.float32))
    assert a.block_until_ready() is a
    assert a.is_ready()


def test_dlpack_export() -> None:
    x = _sample((2, 3), np.float32)
    a = device_put(x)
    assert a.__dlpack_device__() == (1, 0)
    view = np.from_dlpack(a)
    a.delete()  # the export was a private copy: the consumer keeps valid data
    _same(np.asarray(view), x)
    b = device_put(x)
    with pytest.raises(BufferError, match="plait exports DLPack tensors as copies"):
        b.__dlpack__(copy=False)
    with pytest.raises(BufferError, match=r"cannot export to DLPack device \(2, 0\); only CPU"):
        b.__dlpack__(dl_device=(2, 0))


# -- deleted and donated arrays ----------------------------------------------

_USES: list[tuple[str, Callable[[Array], Any], str]] = [
    ("repr", repr, "repr"),
    ("str", str, "str"),
    ("asarray", np.asarray, "convert to NumPy"),
    ("to_numpy", to_numpy, "convert to NumPy"),
    ("float", lambda a: float(a), "convert to float"),
    ("bool", lambda a: bool(a), "convert to bool"),
    ("iter", lambda a: list(a), "iterate over"),
    ("tolist", lambda a: a.tolist(), "tolist"),
    ("block_until_ready", lambda a: a.block_until_ready(), "block_until_ready"),
    ("copy", lambda a: a.copy(), "copy"),
    ("pickle", pickle.dumps, "pickle"),
    ("dlpack", np.from_dlpack, "export with DLPack"),
    ("device_put", device_put, "device_put"),
    ("device_put_to", lambda a: device_put(a, default_device()), "device_put"),
    ("device_get", device_get, "device_get"),
    ("block_until_ready_tree", lambda a: block_until_ready({"x": [a]}), "block_until_ready"),
]


@pytest.mark.parametrize("use", _USES, ids=[u[0] for u in _USES])
def test_use_after_delete(use: tuple[str, Callable[[Array], Any], str]) -> None:
    _, fn, verb = use
    a = device_put(np.ones(1, np.float32))
    a.delete()
    with pytest.raises(DeletedArrayError, match=rf"cannot {verb}: Array f32\[1\] was deleted \(x.delete\(\)"):
        fn(a)


@pytest.mark.parametrize("use", _USES, ids=[u[0] for u in _USES])
def test_use_after_donate(use: tuple[str, Callable[[Array], Any], str]) -> None:
    _, fn, verb = use
    a = device_put(np.ones(1, np.float32))
    device_put(a, donate=True)
    with pytest.raises(DeletedArrayError, match=rf"cannot {verb}: Array f32\[1\] was donated"):
        fn(a)


def test_deleted_array_error_is_runtime_and_value_error() -> None:
    a = device_put(np.ones(2, np.float32))
    a.delete()
    with pytest.raises(RuntimeError, match="was deleted"):
        np.asarray(a)
    with pytest.raises(ValueError, match="was deleted"):
        np.asarray(a)


def test_metadata_survives_deletion_and_delete_is_idempotent() -> None:
    a = device_put(np.ones((2, 3), np.int32))
    assert not a.is_deleted()
    a.delete()
    a.delete()
    assert a.is_deleted()
    assert (a.shape, a.dtype, a.ndim, a.size, len(a)) == ((2, 3), np.dtype(np.int32), 2, 6, 2)


def test_deleting_through_a_shared_buffer() -> None:
    a = device_put(np.ones(3, np.float32))
    b = device_put(a, default_device())  # commits: a new Array sharing a's buffer
    assert b is not a and b.committed and not a.committed
    a.delete()
    assert b.is_deleted()
    with pytest.raises(DeletedArrayError, match="deleted or donated through another Array that shares its"):
        np.asarray(b)


# -- device_put: the donate / may_alias table -----------------------------------


def _fresh() -> tuple[Array, np.ndarray]:
    x = _sample((3, 2), np.float32, 5)
    return device_put(x), x


@pytest.mark.parametrize("may_alias", [None, True])
def test_device_put_may_alias_returns_the_input(may_alias: bool | None) -> None:
    a, x = _fresh()
    b = device_put(a, may_alias=may_alias)
    assert b is a
    _same(np.asarray(b), x)


def test_device_put_may_alias_false_copies() -> None:
    a, x = _fresh()
    b = device_put(a, may_alias=False)
    assert b is not a and not a.is_deleted()
    b.delete()
    _same(np.asarray(a), x)


@pytest.mark.parametrize("may_alias", [None, False])
def test_device_put_donate_deletes_the_input(may_alias: bool | None) -> None:
    a, x = _fresh()
    b = device_put(a, donate=True, may_alias=may_alias)
    assert b is not a and a.is_deleted() and not b.is_deleted()
    _same(np.asarray(b), x)
    with pytest.raises(DeletedArrayError, match=r"cannot convert to NumPy: Array f32\[3,2\] was donated"):
        np.asarray(a)


def test_device_put_donate_and_may_alias_is_an_error() -> None:
    a, x = _fresh()
    with pytest.raises(ValueError, match="donate=True and may_alias=True cannot be combined"):
        device_put(a, donate=True, may_alias=True)
    _same(np.asarray(a), x)  # nothing happened to the input


def test_device_put_flag_types() -> None:
    with pytest.raises(TypeError, match="device_put: donate must be a bool, got str: 'yes'"):
        device_put(1.0, donate="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="device_put: may_alias must be a bool, got int: 1"):
        device_put(1.0, may_alias=1)  # type: ignore[arg-type]


@pytest.mark.parametrize("donate", [False, True])
def test_device_put_of_host_values(donate: bool) -> None:
    x = _sample((2,), np.float32)
    a = device_put(x, donate=donate)
    _same(np.asarray(a), x)
    x[0] = 99.0  # host data was copied
    assert float(np.asarray(a)[0]) != 99.0


# -- device_put: values, placement, pytrees -------------------------------------


@pytest.mark.parametrize(
    "value,dtype,weak",
    [(1.5, np.float32, True), (3, np.int32, True), (True, np.bool_, False), (1 + 2j, np.complex64, True),
     (np.float32(2.0), np.float32, False), (np.int64(5), np.int32, False), (np.float64(1.0), np.float32, False)],
)
def test_device_put_scalars(value: Any, dtype: Any, weak: bool) -> None:
    a = device_put(value)
    assert (a.shape, a.dtype, a.weak_type) == ((), np.dtype(dtype), weak)
    assert a.item() == value


def test_device_put_canonicalises_64_bit_arrays() -> None:
    x = np.arange(3, dtype=np.int64)
    a = device_put(x)
    assert a.dtype == np.int32
    _same(np.asarray(a), x.astype(np.int32))


def test_device_put_bad_values() -> None:
    with pytest.raises(TypeError, match=r"argument of device_put: expected an array.*got a value of type builtins\.str"):
        device_put("hello")
    with pytest.raises(TypeError, match=r"float0 arrays \(tangents of integers\) cannot be placed on a device"):
        device_put(np.zeros((2,), dtype=[("float0", np.void, 0)]))
    with pytest.raises(TypeError, match=r"device_put: device must be a device from plait\.devices\(\) or None, got str"):
        device_put(1.0, "cpu:0")
    other = _jaxlib.make_standalone_client(1).devices()[0]
    with pytest.raises(ValueError, match="does not belong to plait's client"):
        device_put(1.0, other)


def test_device_put_pytree_keeps_structure() -> None:
    tree = {"a": np.ones(2, np.float32), "b": (1.0, [np.int32(3)]), "c": None}
    out = device_put(tree)
    assert set(out) == {"a", "b", "c"} and out["c"] is None
    assert type(out["b"]) is tuple and type(out["b"][1]) is list
    assert all(type(leaf) is Array for leaf in (out["a"], out["b"][0], out["b"][1][0]))
    host = device_get(out)
    _same(host["a"], np.ones(2, np.float32))
    _same(host["b"][1][0], np.asarray(np.int32(3)))
    assert host["c"] is None


def test_device_get_leaves_other_values_alone() -> None:
    marker = object()
    got = device_get({"x": device_put(np.float32(2.0)), "m": marker, "n": 3})
    assert got["m"] is marker and got["n"] == 3
    _same(got["x"], np.asarray(np.float32(2.0)))


def test_block_until_ready_over_pytrees() -> None:
    tree = {"a": device_put(np.ones(3, np.float32)), "b": [device_put(2.0), "not an array"]}
    assert block_until_ready(tree) is tree


def test_committed_flags() -> None:
    dev = default_device()
    host = np.ones(2, np.float32)
    assert device_put(host).committed is False
    committed = device_put(host, dev)
    assert committed.committed is True and committed.device is dev
    assert device_put(committed) is committed  # stays committed
    assert device_put(committed, dev) is committed
    assert device_put(committed, may_alias=False).committed is True
    assert device_put(device_put(host), dev).committed is True


def test_device_listing() -> None:
    devs = devices()
    assert devs == local_devices() == devices("cpu")
    assert device_count() == local_device_count() == len(devs)
    assert local_devices(process_index=1) == []
    assert default_backend() == "cpu"
    assert default_device() is devs[0]
    with pytest.raises(RuntimeError, match="devices: unknown backend 'gpu'; plait runs on: cpu"):
        devices("gpu")


def test_multi_device_placement() -> None:
    script = textwrap.dedent("""
        import numpy as np
        import pytest
        from plait_core import DeletedArrayError
        from plait_dispatch.placement import devices, device_put, default_device
        d0, d1 = devices()
        assert default_device() is d0
        x = np.arange(4, dtype=np.float32)
        a = device_put(x)
        assert a.device is d0 and not a.committed
        b = device_put(a, d1)
        assert b.device is d1 and b.committed and not a.is_deleted()
        assert np.asarray(b).tolist() == x.tolist()
        c = device_put(b, d0, donate=True)
        assert c.device is d0 and c.committed and b.is_deleted()
        with pytest.raises(DeletedArrayError, match="was donated"):
            np.asarray(b)
        assert device_put(c, may_alias=False).device is d0
        assert device_put(x, d1).device is d1
        e = device_put(x, d1).copy()
        assert e.device is d1 and e.committed
        assert [r.device for r in device_put(np.ones((2, 2), np.float32), d1)] == [d1, d1]
        print("ok", len(devices()))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PLAIT_NUM_CPU_DEVICES": "2"}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok 2"


def test_core_methods_are_installed_but_device_protocols_stay_ours() -> None:
    import plait_core.numpy.methods as core_methods

    a = device_put(np.arange(3, dtype=np.float32))
    # Operators and array methods come from core (one definition for tracers and Arrays) ...
    assert Array.__add__.__module__ == core_methods.__name__
    np.testing.assert_array_equal(np.asarray(a + 1.0), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(a.sum()), 3.0)
    # ... while data, repr and lifetime protocols stay the device array's own.
    assert Array.__repr__.__module__ == "plait_dispatch.array"
    assert Array.__array__.__module__ == "plait_dispatch.array"
    assert repr(a) == "Array([0., 1., 2.], dtype=float32)"


def test_pickle_of_64_bit_data_loads_narrowed_when_x64_is_off() -> None:
    from plait_core import enable_x64

    x = np.array([1, 2**40], dtype=np.int64)
    with enable_x64(True):
        a = device_put(x)
        assert a.dtype == np.int64
        data = pickle.dumps(a)
    b = pickle.loads(data)
    assert b.dtype == np.int32
    _same(np.asarray(b), x.astype(np.int32))
