"""plait-dispatch: plait programs on XLA through jaxlib: device arrays, jit, device_put, donation and eager execution.

This package depends on plait-core alone (and jaxlib).  Its rules for core's
primitives live in the registries below, keyed by primitive; the coverage
test walks core's catalog and names every primitive without a rule.  The
rules live in :mod:`plait_dispatch.lowering`.
"""

__version__ = "0.1.0"

# The lowering rules register themselves in ``lowering_rules`` on import.
from plait_dispatch import lowering
from plait_dispatch.api import (
    Compiled,
    DeletedArrayError,
    JitWrapped,
    Lowered,
    MemoryAnalysis,
    Traced,
    clear_caches,
    jit,
    stats,
)
from plait_dispatch.array import Array
from plait_dispatch.eager import install as _install_eager_backend
from plait_dispatch.lowering import lowering_rules
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
    set_num_cpu_devices,
)

_install_eager_backend()

__all__ = [
    "Array",
    "Compiled",
    "DeletedArrayError",
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
    "jit",
    "local_device_count",
    "local_devices",
    "lowering_rules",
    "set_num_cpu_devices",
    "stats",
]
