"""One measurement of :mod:`benchmarks.data_parallel`: a data-parallel MLP
SGD step over this process's devices (or, under the launcher, over every
process's), with plait or with JAX, never both in one process.

``python -m benchmarks.data_parallel_worker plait|jax``; the device count
comes from ``$PLAIT_NUM_CPU_DEVICES`` and, with several processes, the run
from ``$PLAIT_COORDINATOR_ADDRESS``/``$PLAIT_NUM_PROCESSES``/``$PLAIT_PROCESS_ID``
(JAX is given the same numbers).  Prints ``RESULT <median seconds> <loss>``
from process 0: the fastest step (on a shared machine the least disturbed one).
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import time
from typing import Any

import numpy as np

BATCH = 512
SIZES = (128, 256, 256, 10)
REPEATS = 40
WARMUP = 5


def setup(framework: str) -> tuple[Any, Any, Any]:
    """``(top-level module, numpy module, sharding module)`` of the framework."""
    n = int(os.environ.get("PLAIT_NUM_CPU_DEVICES", "1"))
    procs = int(os.environ.get("PLAIT_NUM_PROCESSES", "1"))
    if framework == "jax":
        import jax

        jax.config.update("jax_num_cpu_devices", n)
        jax.config.update("jax_platforms", "cpu")
        if procs > 1:
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
            jax.distributed.initialize(
                os.environ["PLAIT_COORDINATOR_ADDRESS"], procs, int(os.environ["PLAIT_PROCESS_ID"])
            )
        import jax.numpy as jnp
        import jax.sharding as jsh

        return jax, jnp, jsh
    import plait
    import plait.numpy as pnp

    if procs > 1:
        plait.distributed.initialize()
    return plait, pnp, plait.sharding


def main(framework: str) -> None:
    top, np_mod, sh = setup(framework)
    nproc, me = top.process_count(), top.process_index()
    mesh = sh.Mesh(np.array(top.devices()), ("data",))
    batch, repl = sh.NamedSharding(mesh, sh.PartitionSpec("data")), sh.NamedSharding(mesh, sh.PartitionSpec())
    rng = np.random.default_rng(0)
    params = [
        {"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), "b": np.zeros(b, np.float32)}
        for a, b in itertools.pairwise(SIZES)
    ]
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    rows = slice(me * BATCH // nproc, (me + 1) * BATCH // nproc)

    def loss(ps: Any, x: Any, y: Any) -> Any:
        h = x
        for k, p in enumerate(ps):
            h = h @ p["w"] + p["b"]
            if k < len(ps) - 1:
                h = np_mod.tanh(h)
        logp = h - np_mod.log(np_mod.sum(np_mod.exp(h), axis=1, keepdims=True))
        return -np_mod.mean(np_mod.sum(y * logp, axis=1))

    def step(ps: Any, x: Any, y: Any) -> Any:
        value, grads = top.value_and_grad(loss)(ps, x, y)
        return top.tree_util.tree_map(lambda p, g: p - 0.1 * g, ps, grads), value

    jstep = top.jit(step, in_shardings=(repl, batch, batch), out_shardings=(repl, repl))
    xb = top.make_array_from_process_local_data(batch, x[rows])
    yb = top.make_array_from_process_local_data(batch, y[rows])
    ps = top.device_put(params, repl)
    for _ in range(WARMUP):
        ps, value = jstep(ps, xb, yb)
    top.block_until_ready(ps)
    times = []
    for _ in range(REPEATS):
        t = time.perf_counter()
        ps, value = jstep(ps, xb, yb)
        top.block_until_ready(value)
        times.append(time.perf_counter() - t)
    if me == 0:
        print(f"RESULT {min(times):.9f} {float(np.asarray(value)):.6f} median {statistics.median(times):.9f}", flush=True)
    if nproc > 1:
        top.distributed.shutdown()


if __name__ == "__main__":
    main(sys.argv[1])
