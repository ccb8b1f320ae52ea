"""``plait.distributed``: several processes as one program (``jax.distributed``).

``initialize(coordinator_address, num_processes, process_id,
local_device_ids=None)`` joins a run (arguments default to
``$PLAIT_COORDINATOR_ADDRESS``, ``$PLAIT_NUM_PROCESSES``, ``$PLAIT_PROCESS_ID``),
``shutdown()`` leaves it, ``is_initialized()`` says whether it ran.  To try
it on one machine, ``python -m plait.distributed.launch --nproc 2 script.py``
starts the processes with that environment (see :mod:`plait.distributed.launch`).
"""

from plait_dispatch.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
