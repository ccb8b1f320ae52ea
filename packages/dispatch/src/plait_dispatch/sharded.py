"""Arrays laid out over several devices: placing, assembling, meshes.

``device_put(x, sharding)`` (through :func:`put_sharded`), the three
``make_array_from_*`` constructors of JAX, and :func:`make_mesh`.  A
:class:`~plait_core.sharding.SingleDeviceSharding` gives an ordinary
single-device Array; any other sharding a multi-device Array (see
:mod:`plait_dispatch.array`), committed to its devices.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from plait_core import ShapedArray, dtypes, get_aval, to_numpy
from plait_core.sharding import Index, Mesh, Sharding, SingleDeviceSharding
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array

__all__ = [
    "jaxlib_sharding",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_mesh",
    "put_sharded",
]


def jaxlib_sharding(sharding: Sharding, ndim: int) -> Any:
    """The jaxlib sharding of ``sharding`` for arrays of rank ``ndim``."""
    return _jaxlib.multi_device_sharding(sharding._device_assignment, sharding._tiling(ndim).assignment)


def check_sharding(sharding: Any, where: str) -> Sharding:
    """``sharding`` if it is a plait sharding on plait's devices, else a clear error."""
    if not isinstance(sharding, Sharding):
        raise TypeError(
            f"{where}: expected a sharding (plait.sharding.NamedSharding, SingleDeviceSharding, ...), "
            f"got {type(sharding).__name__}: {sharding!r}"
        )
    for d in sharding._device_assignment:
        if not _jaxlib.is_device(d) or not _jaxlib.owns_device(d):
            raise ValueError(f"{where}: the sharding {sharding!r} uses {d!r}, which is not one of plait's devices")
    return sharding


def _pieces(value: np.ndarray, sharding: Sharding) -> tuple[list[np.ndarray], list[Any]]:
    indices = sharding.devices_indices_map(value.shape)
    local = sharding.addressable_devices
    devs = [d for d in sharding._device_assignment if d in local]
    return [np.ascontiguousarray(value[indices[d]]) for d in devs], devs


def put_sharded(x: Any, sharding: Sharding, donate: bool = False) -> Array:
    """One leaf placed as ``sharding`` says (host data, or an Array anywhere)."""
    if isinstance(sharding, SingleDeviceSharding):
        from plait_dispatch.placement import device_put

        if type(x) is Array and x._device is None:
            x = _host_copy(x, donate)
        return device_put(x, sharding._device, donate=donate)  # type: ignore[no-any-return]
    if type(x) is Array:
        if x._device is None and x._sharding == sharding:
            return x._move(True) if donate else x
        aval = x.aval
        value = x._value("device_put")
        if donate:
            x._donate()
    else:
        aval = get_aval(x, "argument of device_put")
        if aval.dtype == dtypes.float0:
            raise TypeError("device_put: float0 arrays (tangents of integers) cannot be placed on a device")
        value = to_numpy(x, aval.dtype)
    return from_host(value, aval, sharding)


def _host_copy(x: Array, donate: bool) -> np.ndarray:
    value = x._value("device_put")
    if donate:
        x._donate()
    return value


def from_host(value: np.ndarray, aval: ShapedArray, sharding: Sharding) -> Array:
    """A multi-device Array of ``aval`` holding the host array ``value``."""
    pieces, devs = _pieces(value, sharding)
    buf = _jaxlib.put_shards(aval, jaxlib_sharding(sharding, value.ndim), pieces, devs)
    return Array._multi(buf, aval, sharding)


def make_array_from_callback(
    shape: Sequence[int], sharding: Sharding, data_callback: Callable[[Index], Any], dtype: Any = None
) -> Array:
    """An Array of ``shape`` laid out as ``sharding``, each device's piece made by
    ``data_callback(index)`` (``index``: the piece's tuple of slices of the
    global array; the callback returns host data of the piece's shape)."""
    sharding = check_sharding(sharding, "make_array_from_callback")
    shape = tuple(int(d) for d in shape)
    indices = sharding.addressable_devices_indices_map(shape)
    pieces: list[np.ndarray] = []
    devs: list[Any] = []
    for d in sharding._device_assignment:
        if d not in indices:
            continue
        piece = np.asarray(data_callback(indices[d]))
        want = tuple(len(range(*s.indices(n))) for s, n in zip(indices[d], shape))
        if piece.shape != want:
            raise ValueError(
                f"make_array_from_callback: data_callback({indices[d]}) returned shape {piece.shape}, but "
                f"the piece of {_jaxlib.device_description(d)} has shape {want}"
            )
        pieces.append(piece)
        devs.append(d)
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else pieces[0].dtype)
    pieces = [np.ascontiguousarray(p, dt) for p in pieces]
    aval = ShapedArray(shape, dt, False)
    if isinstance(sharding, SingleDeviceSharding):
        d = sharding._device
        return Array(_jaxlib.device_put(pieces[0], aval, d, True), aval, d, True)
    buf = _jaxlib.put_shards(aval, jaxlib_sharding(sharding, len(shape)), pieces, devs)
    return Array._multi(buf, aval, sharding)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Sharding, arrays: Sequence[Array]) -> Array:
    """An Array of ``shape`` laid out as ``sharding`` from this process's pieces,
    one single-device Array per addressable device (in any order; each on
    its device, of the piece's shape).  The pieces' buffers are used as they
    are (no copy)."""
    sharding = check_sharding(sharding, "make_array_from_single_device_arrays")
    shape = tuple(int(d) for d in shape)
    want = sharding.shard_shape(shape)
    by_device: dict[Any, Array] = {}
    for a in arrays:
        if type(a) is not Array or a._device is None:
            raise TypeError(
                f"make_array_from_single_device_arrays: expected single-device Arrays, got {type(a).__name__}"
            )
        if a.shape != want:
            raise ValueError(
                f"make_array_from_single_device_arrays: an array on {_jaxlib.device_description(a._device)} has "
                f"shape {a.shape}, but each piece of {shape} under {sharding!r} has shape {want}"
            )
        by_device[a._device] = a
    local = [d for d in sharding._device_assignment if d in sharding.addressable_devices]
    missing = [d for d in local if d not in by_device]
    if missing or len(by_device) != len(local):
        raise ValueError(
            f"make_array_from_single_device_arrays: expected one array per device of the sharding "
            f"({len(local)}), got arrays on {sorted(_jaxlib.device_description(d) for d in by_device)}"
        )
    dts = {a.dtype for a in arrays}
    if len(dts) != 1:
        raise ValueError(f"make_array_from_single_device_arrays: the arrays have different dtypes {sorted(map(str, dts))}")
    aval = ShapedArray(shape, dts.pop(), False)
    bufs = [by_device[d]._live_buffer("assemble it") for d in local]
    buf = _jaxlib.assemble(aval, jaxlib_sharding(sharding, len(shape)), bufs)
    return Array._multi(buf, aval, sharding)


def make_array_from_process_local_data(
    sharding: Sharding, local_data: Any, global_shape: Sequence[int] | None = None
) -> Array:
    """A global Array laid out as ``sharding`` from this process's part of it.

    ``local_data`` is the slice of the global array this process's devices
    hold (for data-parallel input: this process's rows of the batch).  The
    global shape defaults to the local shape scaled, along each dimension the
    sharding splits across processes, by the number of processes' pieces."""
    sharding = check_sharding(sharding, "make_array_from_process_local_data")
    data = np.asarray(local_data)
    nproc = len({getattr(d, "process_index", 0) for d in sharding._device_assignment})
    tiling = sharding._tiling(data.ndim)
    if global_shape is None:
        factors = [_process_factor(sharding, tiling.assignment, dim) for dim in range(data.ndim)]
        global_shape = tuple(n * f for n, f in zip(data.shape, factors))
    shape = tuple(int(d) for d in global_shape)
    if nproc == 1:
        if data.shape != shape:
            raise ValueError(
                f"make_array_from_process_local_data: in one process the local data is the whole array, but "
                f"its shape {data.shape} is not the global shape {shape}"
            )
        return make_array_from_callback(shape, sharding, lambda idx: data[idx])
    indices = sharding.addressable_devices_indices_map(shape)
    starts = [min((s.start or 0) for s in (idx[dim] for idx in indices.values())) for dim in range(len(shape))]

    def local_piece(idx: Index) -> np.ndarray:
        shifted = tuple(
            slice((s.start or 0) - starts[k], (s.stop if s.stop is not None else shape[k]) - starts[k])
            for k, s in enumerate(idx)
        )
        return data[shifted]

    return make_array_from_callback(shape, sharding, local_piece)


def _process_factor(sharding: Sharding, assignment: np.ndarray, dim: int) -> int:
    """How many processes' pieces dimension ``dim`` is split into."""
    devs = sharding._device_assignment
    tiles = assignment.shape[dim]
    if tiles == 1:
        return 1
    moved = np.moveaxis(assignment, dim, 0).reshape(tiles, -1)
    procs = [getattr(devs[int(row[0])], "process_index", 0) for row in moved]
    return len(dict.fromkeys(procs))


def make_mesh(
    axis_shapes: Sequence[int], axis_names: Sequence[Hashable], axis_types: Any = None, *,
    devices: Sequence[Any] | None = None,
) -> Mesh:
    """A :class:`Mesh` of shape ``axis_shapes`` over the first
    ``prod(axis_shapes)`` devices (or ``devices``), in id order.  Asking for
    more devices than there are is a ``ValueError`` that says both numbers.

    ``axis_types``: one :class:`~plait_core.sharding.AxisType` per axis (or one
    for all).  The default is every axis ``Auto`` (layouts decided by XLA's
    partitioner).  JAX 0.10 defaults to ``Explicit`` (sharding in types); plait
    does not, because its explicit-sharding rules cover the common primitives
    only (see :mod:`plait_core.explicit_sharding`) and a program using another
    one on split values would be refused where it runs with ``Auto`` axes with
    the same numbers.  Pass ``axis_types=(AxisType.Explicit,) * n`` for JAX's
    explicit mode."""
    shape = tuple(int(s) for s in axis_shapes)
    names = tuple(axis_names)
    if len(shape) != len(names):
        raise ValueError(f"make_mesh: {len(shape)} axis sizes {shape} but {len(names)} names {names}")
    devs = list(devices) if devices is not None else _jaxlib.devices()
    need = math.prod(shape)
    if need > len(devs):
        raise ValueError(
            f"make_mesh: a mesh of shape {shape} needs {need} devices, but there are {len(devs)} "
            f"(set PLAIT_NUM_CPU_DEVICES for more CPU devices)"
        )
    arr = np.empty(need, dtype=object)
    arr[:] = devs[:need]
    return Mesh(arr.reshape(shape), names, axis_types=axis_types)
