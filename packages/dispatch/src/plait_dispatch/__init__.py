"""plait-dispatch: plait programs on XLA through jaxlib: device arrays, jit, device_put, donation and eager execution.

This package depends on plait-core alone (and jaxlib).  Its rules for core's
primitives live in the registries below, keyed by primitive; the coverage
test walks core's catalog and names every primitive without a rule.  The
rules themselves land with issue #3.
"""

from collections.abc import Callable
from typing import Any

from plait_core import RuleRegistry

lowering_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("dispatch (StableHLO lowering)")

__version__ = "0.1.0"

from plait_dispatch.array import Array  # noqa: E402
from plait_dispatch.placement import (  # noqa: E402
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
