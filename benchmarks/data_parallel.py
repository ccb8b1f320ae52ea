"""Data-parallel SGD step on 1, 2, 4, 8 CPU devices and on 2 processes x 4,
plait vs JAX 0.10.2 (same program, same device counts).

Each measurement is a fresh process (a process's device count is fixed when
its backend starts), running :mod:`benchmarks.data_parallel_worker`: plait
and JAX side by side in it (the interpreter named by ``$JAX_PYTHON``, default
``/work/jaxenv/bin/python``, with this tree's plait sources put on its path; with
two processes, each of the launcher's processes runs both, JAX with its own
coordinator), taking turns block by block, so that a burst of load on the
shared machine hits both; a block's figure is its fastest step, a run's the
median over its blocks, and the run's ratio the median of neighbouring
blocks' ratios.  ``--rounds`` runs per row; the row reports the medians over
them.  Without ``$JAX_PYTHON`` plait runs alone (the JAX column reads "—").
The step: a 128-256-256-10 MLP, softmax cross-entropy on a
global batch of 512 split over the devices, parameters replicated, one
``jit(step, in_shardings=, out_shardings=)``; XLA adds the gradient all-reduce.

``python -m benchmarks.data_parallel [--rounds 3]`` prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks.data_parallel_worker import EXPLICIT_ENV, JAX_COORDINATOR_ENV, JAX_FIRST_ENV
from benchmarks.harness import Result, markdown_table

ROOT = Path(__file__).resolve().parents[1]
JAX_PYTHON = os.environ.get("JAX_PYTHON", "/work/jaxenv/bin/python")
SOURCES = [ROOT / "packages" / p / "src" for p in ("core", "autodiff", "batching", "masking", "dispatch")] + [ROOT / "src"]
MALLOC_TUNABLES = "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432"
"""glibc's allocator with fixed thresholds in the workers: freed memory at the top of a
malloc arena is kept (not trimmed) and buffers under 32 MiB come from the arenas.  With
the default (dynamic) thresholds, in a process running both frameworks, the worker
threads of the client made first get arenas of their own, which glibc trims after every
step, so that client's next step faults its output buffers' pages in again: 40-125 minor
faults a step on 2 devices (about 0.3 ms of CPU time a step of 2.2 ms), none for the
client made second, whichever framework it is.  The row would measure which framework
came first; with these thresholds neither client faults (checked: 0-3 a step)."""


def _env(devices: int, explicit: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "XLA_FLAGS"))}
    env["PLAIT_NUM_CPU_DEVICES"] = str(devices)
    env[EXPLICIT_ENV] = "1" if explicit else "0"
    # plait's sources first (the JAX interpreter runs plait from this tree), then the caller's path.
    paths = [str(ROOT), *(str(d) for d in SOURCES if d.is_dir()), os.environ.get("PYTHONPATH", "")]
    env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    env.setdefault("GLIBC_TUNABLES", MALLOC_TUNABLES)
    return env


def measure(framework: str, devices: int, processes: int, explicit: bool = False) -> tuple[float, float] | None:
    """``(median step seconds, final loss)`` of one run, or None without JAX."""
    python = sys.executable if framework == "plait" else JAX_PYTHON
    if not Path(python).exists():
        return None
    worker = [python, "-m", "benchmarks.data_parallel_worker", framework]
    if processes == 1:
        cmd = worker
    else:
        # plait's launcher only sets environment variables; it runs JAX's processes just as well.
        cmd = [sys.executable, "-m", "plait.distributed.launch", "--nproc", str(processes),
               "--devices-per-process", str(devices), "--timeout", "300", "--python", python,
               "-m", "benchmarks.data_parallel_worker", framework]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=_env(devices, explicit), cwd=ROOT, timeout=600)
    found = re.search(r"RESULT ([\d.e-]+) ([\d.e-]+)", proc.stdout)
    if proc.returncode != 0 or found is None:
        raise RuntimeError(f"{framework} on {processes}x{devices} failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return float(found.group(1)), float(found.group(2))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def measure_both(
    devices: int, processes: int, explicit: bool = False, jax_first: bool = False
) -> tuple[float, float, float, float, float] | None:
    """One run of plait and JAX taking turns in each process (see
    :func:`benchmarks.data_parallel_worker.main_both`): ``(plait seconds, JAX
    seconds, median neighbour ratio, plait loss, JAX loss)``; None without JAX.
    ``jax_first``: JAX's trainer is made before plait's."""
    if not Path(JAX_PYTHON).exists():
        return None
    worker = [JAX_PYTHON, "-m", "benchmarks.data_parallel_worker", "both"]
    env = _env(devices, explicit)
    env[JAX_FIRST_ENV] = "1" if jax_first else "0"
    if processes == 1:
        cmd = worker
    else:
        env[JAX_COORDINATOR_ENV] = f"127.0.0.1:{_free_port()}"
        cmd = [sys.executable, "-m", "plait.distributed.launch", "--nproc", str(processes),
               "--devices-per-process", str(devices), "--timeout", "500", "--python", JAX_PYTHON,
               "-m", "benchmarks.data_parallel_worker", "both"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    found = re.search(r"RESULT_BOTH ([\d.e-]+) ([\d.e-]+) ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)", proc.stdout)
    if proc.returncode != 0 or found is None:
        raise RuntimeError(
            f"plait and JAX on {processes}x{devices} device(s) side by side in {JAX_PYTHON} failed:\n"
            f"{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
        )
    p, j, r, lp, lj = (float(found.group(k)) for k in range(1, 6))
    return p, j, r, lp, lj


def data_parallel_section(rounds: int = 3) -> list[Result]:
    """One row per layout: 1, 2, 4, 8 devices in one process, 2 processes x 4,
    and the same step in JAX's explicit-sharding mode on 8 devices (an Explicit
    mesh axis, a plain ``jit`` under ``set_mesh``); each round one run of both
    frameworks side by side (the figures: medians over rounds; the ratio: the
    median of the rounds' neighbour ratios), the framework whose trainer is made
    first alternating from round to round (see :data:`MALLOC_TUNABLES`)."""
    rows = []
    for processes, devices, explicit in ((1, 1, False), (1, 2, False), (1, 4, False), (1, 8, False),
                                         (2, 4, False), (1, 8, True)):
        p_times: list[float] = []
        j_times: list[float] = []
        ratios: list[float] = []
        losses: set[str] = set()
        for r in range(rounds):
            both = measure_both(devices, processes, explicit, jax_first=r % 2 == 1)
            if both is not None:
                p_times.append(both[0])
                j_times.append(both[1])
                ratios.append(both[2])
                losses.update((f"{both[3]:.4f}", f"{both[4]:.4f}"))
                continue
            p = measure("plait", devices, processes, explicit)
            assert p is not None
            p_times.append(p[0])
            losses.add(f"{p[1]:.4f}")
            j = measure("jax", devices, processes, explicit)
            if j is not None:
                j_times.append(j[0])
                losses.add(f"{j[1]:.4f}")
        if len(losses) != 1:
            raise AssertionError(f"plait and JAX disagree on the loss: {sorted(losses)}")
        name = f"data-parallel MLP step, {processes * devices} device(s)" + (
            f" ({processes} processes x {devices})" if processes > 1 else ""
        ) + (" (explicit sharding)" if explicit else "")
        rows.append(
            Result(
                name,
                statistics.median(p_times),
                statistics.median(j_times) if j_times else None,
                "≤ 1.02×",
                statistics.median(ratios) if ratios else None,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    ns = parser.parse_args(argv)
    print(markdown_table(data_parallel_section(ns.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
