"""One measurement of :mod:`benchmarks.data_parallel`: a data-parallel MLP
SGD step over this process's devices (or, under the launcher, over every
process's), with plait or with JAX, or with both taking turns in one process.

``python -m benchmarks.data_parallel_worker plait|jax|both`` (``both``: one
process, plait and JAX taking turns, see :func:`main_both`); the device count
comes from ``$PLAIT_NUM_CPU_DEVICES`` and, with several processes, the run
from ``$PLAIT_COORDINATOR_ADDRESS``/``$PLAIT_NUM_PROCESSES``/``$PLAIT_PROCESS_ID``
(JAX is given the same numbers).  Prints ``RESULT <median seconds> <loss>``
from process 0: the fastest step (on a shared machine the least disturbed one).
"""

from __future__ import annotations

import itertools
import os
import resource
import statistics
import sys
import time
from typing import Any

import numpy as np

BATCH = 512
SIZES = (128, 256, 256, 10)
REPEATS = 40
WARMUP = 5
BLOCKS = 30  # plait and JAX in one process: blocks of steps, taking turns
BLOCK = 5
JAX_COORDINATOR_ENV = "DATA_PARALLEL_JAX_COORDINATOR"
JAX_FIRST_ENV = "DATA_PARALLEL_JAX_FIRST"
"""Set to 1: with ``both``, JAX's trainer (and so its CPU client and worker threads) is made before plait's."""
EXPLICIT_ENV = "DATA_PARALLEL_EXPLICIT"
"""Set to 1: the mesh's axis is Explicit (JAX's explicit-sharding mode) and the step is a
plain ``jit`` run under ``set_mesh``: the shardings come from the arguments' types."""
"""With ``both`` under the launcher: the address of JAX's coordinator (plait's is the launcher's)."""


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
            # Beside plait in one process, JAX's coordinator has its own address.
            address = os.environ.get(JAX_COORDINATOR_ENV) or os.environ["PLAIT_COORDINATOR_ADDRESS"]
            jax.distributed.initialize(address, procs, int(os.environ["PLAIT_PROCESS_ID"]))
        import jax.numpy as jnp
        import jax.sharding as jsh

        return jax, jnp, jsh
    import plait
    import plait.numpy as pnp

    if procs > 1:
        plait.distributed.initialize()
    return plait, pnp, plait.sharding


class Trainer:
    """One framework's data-parallel step over its devices, ready to run."""

    def __init__(self, framework: str) -> None:
        top, np_mod, sh = setup(framework)
        self.top = top
        self.nproc, self.me = top.process_count(), top.process_index()
        self.explicit = os.environ.get(EXPLICIT_ENV) == "1"
        if self.explicit:
            mesh = sh.Mesh(np.array(top.devices()), ("data",), axis_types=(sh.AxisType.Explicit,))
        else:
            mesh = sh.Mesh(np.array(top.devices()), ("data",))
        self.mesh, self.sh = mesh, sh
        batch, repl = sh.NamedSharding(mesh, sh.PartitionSpec("data")), sh.NamedSharding(mesh, sh.PartitionSpec())
        rng = np.random.default_rng(0)
        params = [
            {"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32), "b": np.zeros(b, np.float32)}
            for a, b in itertools.pairwise(SIZES)
        ]
        x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
        y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
        rows = slice(self.me * BATCH // self.nproc, (self.me + 1) * BATCH // self.nproc)

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

        if self.explicit:
            self.jstep = top.jit(step)  # the layouts are the arguments' types
        else:
            self.jstep = top.jit(step, in_shardings=(repl, batch, batch), out_shardings=(repl, repl))
        self.xb = top.make_array_from_process_local_data(batch, x[rows])
        self.yb = top.make_array_from_process_local_data(batch, y[rows])
        self.ps = top.device_put(params, repl)
        self.value: Any = None
        with sh.set_mesh(mesh):
            for _ in range(WARMUP):
                self.ps, self.value = self.jstep(self.ps, self.xb, self.yb)
        top.block_until_ready(self.ps)

    def steps(self, n: int) -> list[float]:
        """Run ``n`` steps, each waited for; their times."""
        times = []
        with self.sh.set_mesh(self.mesh):
            for _ in range(n):
                t = time.perf_counter()
                self.ps, self.value = self.jstep(self.ps, self.xb, self.yb)
                self.top.block_until_ready(self.value)
                times.append(time.perf_counter() - t)
        return times

    def loss(self) -> float:
        return float(np.asarray(self.value))


def main(framework: str) -> None:
    trainer = Trainer(framework)
    times = trainer.steps(REPEATS)
    if trainer.me == 0:
        print(f"RESULT {min(times):.9f} {trainer.loss():.6f} median {statistics.median(times):.9f}", flush=True)
    if trainer.nproc > 1:
        trainer.top.distributed.shutdown()


def main_both() -> None:
    """plait and JAX in this one process (same devices; under the launcher,
    every process runs both, JAX with its own coordinator), taking turns
    block by block: ``BLOCKS`` blocks of ``BLOCK`` steps each;
    a block's figure is its fastest step.  Prints ``RESULT_BOTH <plait>
    <JAX> <median of neighbour ratios> <plait loss> <JAX loss>``: the
    medians over blocks of the block figures, and of each plait block's
    figure over its neighbouring JAX block's (right after it or, every
    other time, right before).

    The trainer made first is plait's, or JAX's with ``$DATA_PARALLEL_JAX_FIRST=1``
    (:mod:`benchmarks.data_parallel` alternates).  It matters with glibc's default
    allocator settings: the first client's worker threads get malloc arenas of
    their own, which glibc trims after each step frees its buffers, so the next
    step's output buffers fault their pages in again (40-125 minor faults a step
    on 2 devices, none for the client made second).  Also prints
    ``MINOR_FAULTS_PER_STEP <plait> <JAX>`` (medians over blocks) to show it."""
    if os.environ.get(JAX_FIRST_ENV) == "1":
        jax_run = Trainer("jax")
        plait_run = Trainer("plait")
    else:
        plait_run = Trainer("plait")
        jax_run = Trainer("jax")
    p_fig: list[float] = []
    j_fig: list[float] = []
    p_faults: list[float] = []
    j_faults: list[float] = []

    def block(trainer: Trainer, figures: list[float], faults: list[float]) -> None:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        figures.append(min(trainer.steps(BLOCK)))
        faults.append((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / BLOCK)

    for k in range(BLOCKS):
        # Who goes first alternates, so that neither always follows the other.
        if k % 2 == 0:
            block(plait_run, p_fig, p_faults)
            block(jax_run, j_fig, j_faults)
        else:
            block(jax_run, j_fig, j_faults)
            block(plait_run, p_fig, p_faults)
    ratios = [p / j for p, j in zip(p_fig, j_fig)]
    if plait_run.me == 0:
        print(
            f"RESULT_BOTH {statistics.median(p_fig):.9f} {statistics.median(j_fig):.9f} "
            f"{statistics.median(ratios):.6f} {plait_run.loss():.6f} {jax_run.loss():.6f}",
            flush=True,
        )
        print(f"MINOR_FAULTS_PER_STEP {statistics.median(p_faults):.1f} {statistics.median(j_faults):.1f}", flush=True)
    if plait_run.nproc > 1:
        plait_run.top.distributed.shutdown()
        jax_run.top.distributed.shutdown()


if __name__ == "__main__":
    if sys.argv[1] == "both":
        main_both()
    else:
        main(sys.argv[1])
