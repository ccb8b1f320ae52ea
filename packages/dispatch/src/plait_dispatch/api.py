"""The public API of plait-dispatch (what ``plait`` re-exports)."""

from __future__ import annotations

from plait_core import DeletedArrayError
from plait_dispatch import _jaxlib
from plait_dispatch.aot import Compiled, Lowered, MemoryAnalysis, Traced
from plait_dispatch.array import Array, Shard
from plait_dispatch.cache import clear_caches, stats
from plait_dispatch.jit import JitWrapped, jit
from plait_dispatch.placement import (
    block_until_ready,
    default_backend,
    default_device,
    device_count,
    device_get,
    device_put,
    devices,
    effects_barrier,
    host_count,
    host_id,
    host_ids,
    live_arrays,
    local_device_count,
    local_devices,
    process_count,
    process_index,
    process_indices,
    set_num_cpu_devices,
)
from plait_dispatch.pmap import pmap
from plait_dispatch.sharded import (
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
)

Device: type = _jaxlib.DEVICE_CLASS
"""The class of plait's devices (``isinstance(plait.devices()[0], Device)``), jaxlib's as in JAX."""

__all__ = [
    "Array",
    "Compiled",
    "DeletedArrayError",
    "Device",
    "JitWrapped",
    "Lowered",
    "MemoryAnalysis",
    "Traced",
    "block_until_ready",
    "clear_caches",
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
    "jit",
    "live_arrays",
    "local_device_count",
    "local_devices",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_mesh",
    "pmap",
    "process_count",
    "process_index",
    "process_indices",
    "Shard",
    "set_num_cpu_devices",
    "stats",
]
