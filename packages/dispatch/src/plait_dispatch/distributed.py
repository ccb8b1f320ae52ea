"""Several processes as one plait program: ``initialize`` and ``shutdown``.

Every process calls :func:`initialize` before using any device.  Process 0
starts jaxlib's coordination service at ``coordinator_address``; every
process connects to it, and its CPU client is then made as one node of the
run, with gloo's TCP collectives: ``devices()`` lists the devices of every
process (``local_devices()`` this one's), meshes may span processes, and
``jit``/``shard_map``/``pmap`` programs run SPMD across them, each process
feeding its own pieces (``make_array_from_process_local_data``).  All data
between processes moves through jaxlib's runtime and XLA's collectives.

The arguments default to ``$PLAIT_COORDINATOR_ADDRESS`` (``host:port``),
``$PLAIT_NUM_PROCESSES`` and ``$PLAIT_PROCESS_ID``; the number of CPU devices
of each process is ``$PLAIT_NUM_CPU_DEVICES`` (or ``len(local_device_ids)``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any, Final

from plait_dispatch import _jaxlib

__all__ = ["initialize", "is_initialized", "shutdown"]

COORDINATOR_ENV: Final = "PLAIT_COORDINATOR_ADDRESS"
NUM_PROCESSES_ENV: Final = "PLAIT_NUM_PROCESSES"
PROCESS_ID_ENV: Final = "PLAIT_PROCESS_ID"


class _State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.service: Any = None
        self.client: Any = None
        self.process_id: int | None = None
        self.was_shut_down = False


_state = _State()


def _from_env(value: Any, env: str, what: str, kind: type) -> Any:
    if value is not None:
        return value
    raw = os.environ.get(env)
    if raw is None or raw.strip() == "":
        raise ValueError(f"distributed.initialize: {what} was not given and ${env} is not set")
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"distributed.initialize: ${env} must be an integer, got {raw!r}") from None
    return raw.strip()


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: Sequence[int] | None = None,
    *,
    initialization_timeout: int = 300,
) -> None:
    """Join a run of ``num_processes`` processes as process ``process_id``.

    Must be called once, before the first use of a device; calling it twice,
    or after devices were used, is a ``RuntimeError``.  A coordinator that
    cannot be reached within ``initialization_timeout`` seconds is a
    ``RuntimeError`` naming the address; a ``process_id`` outside
    ``[0, num_processes)`` a ``ValueError``.  ``local_device_ids`` (on CPU:
    ``range(n)``) sets how many CPU devices this process has.
    """
    with _state.lock:
        if _state.client is not None or _state.was_shut_down:
            raise RuntimeError(
                "distributed.initialize was already called in this process"
                + (" (and shut down; a process joins one run only)" if _state.was_shut_down else "")
            )
        if _jaxlib.client_started():
            raise RuntimeError(
                "distributed.initialize must be called before any device is used (a device, an array or a "
                "computation made the single-process backend already); call it first thing"
            )
        address = str(_from_env(coordinator_address, COORDINATOR_ENV, "coordinator_address", str))
        n = _from_env(num_processes, NUM_PROCESSES_ENV, "num_processes", int)
        pid = _from_env(process_id, PROCESS_ID_ENV, "process_id", int)
        if type(n) is not int or n < 1:
            raise ValueError(f"distributed.initialize: num_processes must be a positive int, got {n!r}")
        if type(pid) is not int or not 0 <= pid < n:
            raise ValueError(f"distributed.initialize: process_id {pid!r} is out of range for {n} processes (0 to {n - 1})")
        if ":" not in address:
            raise ValueError(f"distributed.initialize: coordinator_address must be 'host:port', got {address!r}")
        if local_device_ids is not None:
            ids = list(local_device_ids)
            if ids != list(range(len(ids))) or not ids:
                raise ValueError(f"distributed.initialize: on CPU local_device_ids must be range(n), got {ids}")
            _jaxlib.set_num_cpu_devices(len(ids))
        service = _jaxlib.start_coordinator(address, n) if pid == 0 else None
        try:
            client = _jaxlib.connect(address, pid, initialization_timeout)
        except RuntimeError:  # jaxlib's error says nothing useful ("std::bad_cast")
            if service is not None:
                service.shutdown()
            raise RuntimeError(
                f"distributed.initialize: could not reach the coordinator at {address} within "
                f"{initialization_timeout} s as process {pid} of {n} (is process 0 running, with the same "
                "number of processes, and the address reachable from here?)"
            ) from None
        _jaxlib.use_distributed(client, pid, n)
        _state.service, _state.client, _state.process_id = service, client, pid


def is_initialized() -> bool:
    """Whether :func:`initialize` ran (and :func:`shutdown` did not)."""
    return _state.client is not None


def shutdown() -> None:
    """Leave the run: disconnect from the coordinator (process 0 stops it
    once every process has left).  A no-op when not initialized."""
    with _state.lock:
        client, service = _state.client, _state.service
        if client is None:
            return
        client.shutdown()
        if service is not None:
            service.shutdown()
        _state.client = _state.service = None
        _state.was_shut_down = True
        _jaxlib.forget_distributed()
