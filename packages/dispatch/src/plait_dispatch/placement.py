"""Devices, and moving values onto and off them.

plait runs on the CPU devices of one jaxlib client, made on first use.  Their
number comes from ``$PLAIT_NUM_CPU_DEVICES`` (default 1) or
:func:`set_num_cpu_devices`, before the first use.

Placement follows JAX.  An Array is *committed* when it was explicitly
placed (``device_put(x, device)``) and *uncommitted* otherwise (made from
host data with ``device_put(x)``, or a result of a computation that had no
committed input).  A computation runs on the device of its committed
arguments, uncommitted ones follow it; committed arguments on different
devices are an error.  Computations whose inputs are all uncommitted run on
the default device (the first one) and their results stay uncommitted.
"""

from __future__ import annotations

import gc
import warnings
from typing import Any

import numpy as np

from plait_core import Tracer, config, dtypes, get_aval, to_numpy, tree_util
from plait_core.sharding import NamedSharding, PartitionSpec, Sharding, get_mesh
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.sharded import check_sharding, put_sharded

Device = _jaxlib.Device

__all__ = [
    "block_until_ready",
    "default_backend",
    "default_device",
    "device_count",
    "device_get",
    "device_put",
    "devices",
    "effects_barrier",
    "host_count",
    "host_id",
    "host_ids",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "process_count",
    "process_index",
    "process_indices",
    "set_num_cpu_devices",
]

set_num_cpu_devices = _jaxlib.set_num_cpu_devices


def _check_backend(backend: str | None, where: str) -> None:
    if backend is not None and backend != _jaxlib.PLATFORM:
        # ending in JAX's words, which libraries match (chex: "Unknown backend")
        raise RuntimeError(
            f"{where}: unknown backend {backend!r}; plait runs on: {_jaxlib.PLATFORM} (Unknown backend: "
            f"{backend!r} requested, but no platforms that are instances of {backend} are present)"
        )


def devices(backend: str | None = None) -> list[Device]:
    """All devices (``[CpuDevice(id=0), ...]``).  ``backend`` may be ``None``
    or ``"cpu"``; any other name is a ``RuntimeError``."""
    _check_backend(backend, "devices")
    return _jaxlib.devices()


def local_devices(process_index: int | None = None, backend: str | None = None) -> list[Device]:
    """The devices of process ``process_index`` (default: this process)."""
    _check_backend(backend, "local_devices")
    want = _jaxlib.process_index() if process_index is None else process_index
    return [d for d in _jaxlib.devices() if d.process_index == want]


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of a distributed run (0 alone)."""
    _check_backend(backend, "process_index")
    return _jaxlib.process_index()


def process_count(backend: str | None = None) -> int:
    """How many processes take part (1 unless ``plait.distributed.initialize`` ran)."""
    _check_backend(backend, "process_count")
    return len({d.process_index for d in _jaxlib.devices()})


def device_count(backend: str | None = None) -> int:
    """Number of devices."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """Number of devices of this process."""
    return len(local_devices(backend=backend))


def default_backend() -> str:
    """The platform computations run on: ``"cpu"``."""
    return _jaxlib.default_backend()


def default_device() -> Device:
    """Where uncommitted values live: the configured default device
    (``plait.default_device(d)``), else the first device."""
    return _jaxlib.default_device()


def host_count(backend: str | None = None) -> int:
    """JAX's former name of :func:`process_count` (warns, as JAX does)."""
    warnings.warn("host_count has been renamed to process_count; use that name", UserWarning, stacklevel=2)
    return process_count(backend)


def host_id(backend: str | None = None) -> int:
    """JAX's former name of :func:`process_index` (warns, as JAX does)."""
    warnings.warn("host_id has been renamed to process_index; use that name", UserWarning, stacklevel=2)
    return process_index(backend)


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of every process of the run: ``[0, ..., process_count() - 1]``."""
    return list(range(process_count(backend)))


def host_ids(backend: str | None = None) -> list[int]:
    """JAX's former name of :func:`process_indices` (warns, as JAX does)."""
    warnings.warn("host_ids has been renamed to process_indices; use that name", UserWarning, stacklevel=2)
    return process_indices(backend)


def live_arrays(platform: str | None = None) -> list[Array]:
    """Every Array of this process that is alive and not deleted (nor donated).
    ``platform`` may be ``None`` or ``"cpu"``."""
    _check_backend(platform, "live_arrays")
    return [a for a in gc.get_objects() if type(a) is Array and not a.is_deleted()]


def effects_barrier() -> None:
    """Wait until every computation started so far that calls the host
    (``debug.print``, ``debug.callback``, ``io_callback``, ...) has finished,
    its callbacks included."""
    _jaxlib.effects_barrier()


def _check_default_device(value: Any) -> Any:
    """What ``default_device`` may be set to: ``None``, a device of plait's
    client, or a platform name (``"cpu"``: the first device)."""
    if value is None:
        return None
    if isinstance(value, str):
        _check_backend(value, "default_device")
        return value
    if _jaxlib.is_device(value) and _jaxlib.owns_device(value):
        return value
    raise ValueError(
        "default_device must be a device of plait.devices() (e.g. plait.devices()[1]), a platform name such as "
        f"'cpu', or None; got {type(value).__name__}: {value!r}"
    )


config.register_validator("default_device", _check_default_device)


def _check_num_cpu_devices(value: int) -> int:
    """``config.update("jax_num_cpu_devices", n)``: ask for ``n`` CPU devices,
    only before the first device is used (``RuntimeError`` after, unless the
    client already has ``n``); -1 (the default's value) changes nothing."""
    if value != -1:
        _jaxlib.set_num_cpu_devices(value)
    return value


config.register_validator("num_cpu_devices", _check_num_cpu_devices)


def _check_device(device: Any) -> Device:
    if not _jaxlib.is_device(device):
        raise TypeError(
            f"device_put: device must be a device from plait.devices() or None, "
            f"got {type(device).__name__}: {device!r}"
        )
    if not _jaxlib.owns_device(device):
        raise ValueError(
            f"device_put: device {device!r} does not belong to plait's client; "
            f"plait's devices are {_jaxlib.devices()}"
        )
    return device


def _check_flag(value: Any, name: str) -> None:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"device_put: {name} must be a bool, got {type(value).__name__}: {value!r}")


def device_put(x: Any, device: Any = None, *, donate: bool = False, may_alias: bool | None = None) -> Any:
    """Place every leaf of the pytree ``x`` on a device, as Arrays.

    ``device=None`` keeps Arrays where they are (and as committed as they
    are) and puts host values (NumPy arrays, scalars) on the default device,
    uncommitted; a device commits the results to it.  Python scalars become
    weakly typed Arrays.  Traced values are returned unchanged.

    ``donate`` and ``may_alias`` decide what happens to an Array input:

    ==========  ============  =====================================================
    donate      may_alias     result
    ==========  ============  =====================================================
    False       None / True   may be ``x`` itself (or share its buffer)
    False       False         always a fresh copy; ``x`` stays valid
    True        None / False  ``x`` is donated: using it later raises
                              ``DeletedArrayError``; on the same device the result
                              takes over its buffer (no second buffer is needed)
    True        True          ``ValueError``: a donated input cannot be aliased
    ==========  ============  =====================================================

    ``may_alias=None`` means ``not donate``.  A deleted or donated Array input
    raises :class:`~plait_core.DeletedArrayError`.

    ``device`` may also be a ``PartitionSpec`` of the context mesh
    (``plait.set_mesh``), or a sharding (``plait.sharding.NamedSharding``, ...):
    each leaf is laid out over the sharding's devices, as one Array whose
    ``addressable_shards`` hold the pieces; a dimension the sharding splits
    must be divisible by its number of pieces (``ValueError``).
    """
    _check_flag(donate, "donate")
    if may_alias is None:
        may_alias = not donate
    else:
        _check_flag(may_alias, "may_alias")
    if donate and may_alias:
        raise ValueError(
            "device_put: donate=True and may_alias=True cannot be combined: a donated input is "
            "deleted, so the result cannot alias it (use may_alias=None or False)"
        )
    if isinstance(device, PartitionSpec):  # of the context mesh (set_mesh / with mesh:)
        mesh = get_mesh()
        if mesh is None:
            raise ValueError(
                f"device_put: a PartitionSpec {device!r} needs a context mesh: set one with plait.set_mesh(mesh)"
            )
        device = NamedSharding(mesh, device)
    if isinstance(device, Sharding):
        sharding = check_sharding(device, "device_put")
        return tree_util.tree_map(
            lambda leaf: leaf if isinstance(leaf, Tracer) else put_sharded(leaf, sharding, bool(donate)), x
        )
    target = None if device is None else _check_device(device)
    return tree_util.tree_map(lambda leaf: _put_leaf(leaf, target, bool(donate), bool(may_alias)), x)


def _put_leaf(x: Any, device: Device | None, donate: bool, may_alias: bool) -> Any:
    if type(x) is Array:
        return _put_array(x, device, donate, may_alias)
    if isinstance(x, Tracer):
        return x
    aval = get_aval(x, "argument of device_put")
    if aval.dtype == dtypes.float0:
        raise TypeError("device_put: float0 arrays (tangents of integers) cannot be placed on a device")
    value = to_numpy(x, aval.dtype)
    target = _jaxlib.default_device() if device is None else device
    committed = device is not None
    return Array(_jaxlib.device_put(value, aval, target, committed), aval, target, committed)


def _put_array(x: Array, device: Device | None, donate: bool, may_alias: bool) -> Array:
    buf = x._live_buffer("device_put")
    if x._device is None:  # a multi-device array: to one device through the host
        if device is None:
            return x._move(True) if donate else (x if may_alias else x.copy())
        value = x._value("device_put")
        if donate:
            x._donate()
        return Array(_jaxlib.device_put(value, x.aval, device, True), x.aval, device, True)
    target = x.device if device is None else device
    committed = device is not None or x.committed
    if target is not x.device:
        out = Array(_jaxlib.copy_buffer(buf, target), x.aval, target, committed)
        if donate:
            x._donate()
        return out
    if donate:
        return x._move(committed)
    if not may_alias:
        return Array(_jaxlib.copy_buffer(buf, target), x.aval, target, committed)
    if committed == x.committed:
        return x
    return Array(buf, x.aval, target, committed)


def device_get(x: Any) -> Any:
    """Copy every Array leaf of the pytree ``x`` to the host as a NumPy array;
    other leaves are returned unchanged."""
    return tree_util.tree_map(lambda leaf: leaf._value("device_get") if type(leaf) is Array else leaf, x)


def block_until_ready(x: Any) -> Any:
    """Wait until every Array leaf of the pytree ``x`` is computed; returns ``x``.

    Other leaves are ignored; a deleted or donated Array raises
    :class:`~plait_core.DeletedArrayError`."""
    bufs = [leaf._live_buffer("block_until_ready") for leaf in tree_util.tree_leaves(x) if type(leaf) is Array]
    _jaxlib.block_until_ready(bufs)
    return x
