"""Compile time: the first call of ``jit`` on mid-size programs.

The first call of a jitted function pays for everything a cached call skips:
tracing the Python function to a program, lowering it to StableHLO, XLA's
compilation, then the run itself.  Two mid-size programs, each a training
step (``grad`` of the loss plus the SGD update, parameters donated):

* a 784-512-512-10 tanh MLP with softmax cross-entropy, batch 128;
* the CNN of :mod:`benchmarks.training` (three ``conv_general_dilated``
  layers and a dense layer), batch 32.

Each repetition builds a fresh step function with its own learning rate, so
no cache (tracing, lowering or compilation; plait's or JAX's) can answer: the
programs differ by one constant.  Besides the first call, XLA's compilation is
timed on its own (``lowered.compile()`` with the tracing and lowering done
before the clock starts): both frameworks use the same compiler, so that row
differs only where the StableHLO they hand it differs, and the rest of the
first call (tracing, lowering, the run) is the framework's own cost.  The
four measurements (first call and compile, plait and JAX) take turns within
each round.

Issue 26's repro (:mod:`benchmarks.compile_programs.sample_grid`: Threefry
Bernoulli samples tiled into a grid with vstack/hstack/transpose) has a row of
its own: the first call, a new seed (a new program) per repetition.

The compile-time corpus (:func:`corpus_section`) runs every program of
``tests/programs/`` and ``benchmarks/compile_programs/`` (JAX programs; on
plait through ``plait.compat``) in a fresh process per framework and round,
the frameworks taking turns, and sums per program the seconds of every
compilation (jitted functions and eager operations alike): tracing plus
lowering (each framework's own work) and XLA's compile, from plait-dispatch's
counters and JAX's duration events (:mod:`benchmarks.compile_driver`).  A
program's ratio is the median over rounds of plait's total over JAX's total
in the same round; the geometric mean summarises the corpus.  The examples
of ``examples/`` are plait programs of features JAX lacks (piles, masks,
invertible networks) or plait's own API, so they have no JAX side to compare
and are not in the corpus.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.compile_programs.sample_grid import DATA, W1, W2, make_sample
from benchmarks.harness import Result, fmt_seconds, interleaved_ratio
from benchmarks.training import LEARNING_RATE, cnn_batch, cnn_loss, cnn_params, mlp_params, sgd_step

MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128


def _mlp_loss(np_mod: Any, nn_mod: Any) -> Callable[[Any, Any, Any], Any]:
    """Mean softmax cross-entropy of a tanh MLP on a batch."""

    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for layer in params[:-1]:
            h = np_mod.tanh(h @ layer["w"] + layer["b"])
        logits = h @ params[-1]["w"] + params[-1]["b"]
        return -np_mod.mean(np_mod.sum(y * nn_mod.log_softmax(logits), axis=-1))

    return loss


def _mlp_batch() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(5)
    x = rng.standard_normal((MLP_BATCH, MLP_SIZES[0])).astype(np.float32)
    y = np.eye(MLP_SIZES[-1], dtype=np.float32)[rng.integers(0, MLP_SIZES[-1], MLP_BATCH)]
    return x, y


class _FreshSteps:
    """Each call jits a new step function (new learning rate) of one framework
    and returns the seconds taken by either its first call (``aot=False``:
    trace, lower, compile, run) or XLA's compilation alone (``aot=True``: the
    step is traced and lowered before the clock starts, then
    ``lowered.compile()`` is timed)."""

    def __init__(
        self,
        lib: Any,
        make_loss: Callable[[Any], Callable[..., Any]],
        args: tuple[Any, ...],
        aot: bool,
        calls: int,
    ):
        self.lib, self.loss, self.aot = lib, make_loss(lib), aot
        self.x, self.y = lib.device_put(args[1]), lib.device_put(args[2])
        # Donation consumes the parameters: one device copy per call, made
        # before any clock starts.
        self.params = [lib.device_put(args[0]) for _ in range(calls)]
        self.counter = itertools.count(1)

    def __call__(self) -> float:
        lr = LEARNING_RATE * (1 + next(self.counter) * 1e-6)  # a new constant: a new program
        step = self.lib.jit(sgd_step(self.loss, self.lib.grad, lr), donate_argnums=0)
        params = self.params.pop()
        if self.aot:
            lowered = step.lower(params, self.x, self.y)
            t = time.perf_counter()
            lowered.compile()
            return time.perf_counter() - t
        t = time.perf_counter()
        self.lib.block_until_ready(step(params, self.x, self.y))
        return time.perf_counter() - t


def _interleaved_medians(fns: list[Callable[[], float]], repeats: int) -> list[float]:
    """Median of each function's self-reported seconds over ``repeats`` rounds,
    the functions taking turns within each round (as in :mod:`benchmarks.harness`)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for f, ts in zip(fns, times):
            ts.append(f())
    return [statistics.median(ts) for ts in times]


def _plait() -> Any | None:
    try:
        plait = importlib.import_module("plait")
    except ImportError:
        return None
    return plait if hasattr(plait, "jit") and hasattr(plait, "grad") else None


def _programs() -> list[tuple[str, Callable[[Any], Callable[..., Any]], tuple[Any, ...]]]:
    mlp = "-".join(map(str, MLP_SIZES))
    return [
        (
            f"MLP {mlp} training step (batch {MLP_BATCH})",
            lambda lib: _mlp_loss(lib.numpy, lib.nn),
            (mlp_params(MLP_SIZES), *_mlp_batch()),
        ),
        (
            "CNN training step (3 convs + dense, batch 32)",
            lambda lib: cnn_loss(lib.numpy, lib.lax, lib.nn),
            (cnn_params(), *cnn_batch()),
        ),
    ]


def compile_results(jax: Any | None, repeats: int = 9) -> list[Result]:
    """First call and XLA compile of each program (empty without plait's jit/grad)."""
    plait = _plait()
    if plait is None:
        return []
    libs = [plait] if jax is None else [plait, jax]
    out = []
    for name, make_loss, args in _programs():
        # plait first call, JAX first call, plait compile, JAX compile: one round.
        fns = [_FreshSteps(lib, make_loss, args, aot, repeats + 1) for aot in (False, True) for lib in libs]
        for f in fns:  # the first compile of a process also loads and initialises things
            f()
        medians = _interleaved_medians(list(fns), repeats)
        per_kind = len(libs)
        for k, what in enumerate(
            [
                "first call of `jit(step)` (trace + lower + compile + run)",
                "of which XLA compile (`lowered.compile()`)",
            ]
        ):
            p = medians[k * per_kind]
            j = medians[k * per_kind + 1] if jax is not None else None
            out.append(Result(f"compile time, {name}: {what}", p, j, "none set (for information)"))
    return out


class _FreshSamples:
    """Each call builds issue 26's sampler with a new seed (a new program) and
    returns nothing; timing it times the first call."""

    def __init__(self, lib: Any) -> None:
        self.lib, self.seeds = lib, itertools.count(100)

    def __call__(self) -> None:
        mean, image = make_sample(self.lib, next(self.seeds))(W1, W2, DATA)
        self.lib.block_until_ready((mean, image))


def sample_grid_results(jax: Any | None, repeats: int = 5) -> list[Result]:
    """The first call of issue 26's repro (Threefry Bernoulli samples tiled into
    a grid), plait against JAX; the target is the issue's."""
    plait = _plait()
    if plait is None:
        return []
    p_fn, j_fn = _FreshSamples(plait), (None if jax is None else _FreshSamples(jax))
    p_fn()  # the first compile of a process also loads and initialises things
    if j_fn is not None:
        j_fn()
    p, j, ratio = interleaved_ratio(p_fn, j_fn, repeats)
    name = "compile time, issue 26 repro (`bernoulli` samples tiled by vstack/hstack/transpose): first call"
    return [Result(name, p, j, "≤ 1.2× JAX", ratio)]


# ---------------------------------------------------------------------------
# The persistent compilation cache: a second process.

_CACHED_RUN = """
import sys, time
import plait
from benchmarks.compile_programs.sample_grid import DATA, W1, W2, make_sample
plait.config.update("jax_compilation_cache_dir", sys.argv[1])
plait.config.update("jax_persistent_cache_min_compile_time_secs", 0)
t = time.perf_counter()
plait.block_until_ready(make_sample(plait, 7)(W1, W2, DATA))
s = __import__("plait_dispatch").stats.snapshot()
print("@@", time.perf_counter() - t, s["xla_compiles"], s["persistent_cache_hits"])
"""


def persistent_cache_results(jax: Any | None, repeats: int = 3) -> list[Result]:
    """Issue 26's repro run by two processes sharing a fresh cache directory:
    the second one's first call against the first one's (target: at most 0.2 of it)."""
    if _plait() is None:
        return []
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / s) for s in (*_SOURCES, ".")] + [env.get("PYTHONPATH", "")])
    firsts, seconds = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory() as cache_dir:
            for out in (firsts, seconds):
                done = subprocess.run(
                    [sys.executable, "-c", _CACHED_RUN, cache_dir], capture_output=True, text=True,
                    timeout=600, env=env, cwd=ROOT,
                )
                line = [ln for ln in done.stdout.splitlines() if ln.startswith("@@ ")]
                if done.returncode != 0 or not line:
                    raise RuntimeError(f"the persistent-cache run failed: {done.stderr[-2000:]}")
                t, compiles, hits = line[0].split()[1:]
                out.append((float(t), int(compiles), int(hits)))
    if any(c != 0 or h == 0 for _, c, h in seconds):
        raise RuntimeError(f"the second process compiled: {seconds}")
    first, second = statistics.median(t for t, _, _ in firsts), statistics.median(t for t, _, _ in seconds)
    ratio = second / first
    verdict = "met" if ratio <= 0.2 else "NOT met"
    return [
        Result(
            "persistent compilation cache, issue 26 repro: first call in a second process (0 XLA compiles) "
            "against the first process's",
            second,
            None,
            f"= {ratio:.2f}× of {fmt_seconds(first)} (target ≤ 0.2×), {verdict}",
        )
    ]


# ---------------------------------------------------------------------------
# The compile-time corpus.

ROOT = Path(__file__).resolve().parent.parent
DRIVER = Path(__file__).with_name("compile_driver.py")
_SOURCES = ("packages/core/src", "packages/autodiff/src", "packages/batching/src", "packages/masking/src",
            "packages/dispatch/src", "src")


def corpus_programs() -> list[Path]:
    """The corpus: the JAX programs of ``tests/programs/`` and
    ``benchmarks/compile_programs/`` (helpers, named with a leading ``_``, left out)."""
    dirs = (ROOT / "tests" / "programs", Path(__file__).with_name("compile_programs"))
    return [p for d in dirs for p in sorted(d.glob("*.py")) if not p.name.startswith("_")]


def _run_corpus(framework: str, programs: list[Path]) -> dict[str, dict[str, Any]]:
    """One process of ``framework`` running every program; its reports by name."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / s) for s in _SOURCES] + [env.get("PYTHONPATH", "")])
    env.pop("PLAIT_COMPILATION_CACHE_DIR", None)
    hook = ["-m", "plait.compat"] if framework == "plait" else []
    cmd = [sys.executable, *hook, str(DRIVER), framework, *map(str, programs)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env, cwd=ROOT)
    reports = [json.loads(line[3:]) for line in done.stdout.splitlines() if line.startswith("@@ ")]
    if done.returncode != 0 or len(reports) != len(programs):
        raise RuntimeError(f"the {framework} corpus run failed (exit {done.returncode}): {done.stderr[-2000:]}")
    return {r["name"]: r for r in reports}


def _geomean(xs: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(x) for x in xs))


def corpus_section(jax: Any | None, rounds: int = 3) -> str:
    """The corpus table (markdown): per program, plait's and JAX's seconds of
    tracing + lowering and of XLA compile (medians over ``rounds``), the
    number of XLA compilations, and plait / JAX of the totals and of XLA
    alone (medians of the rounds' ratios); then their geometric means."""
    if _plait() is None:
        return "plait is not importable: the corpus was not run."
    programs = corpus_programs()
    frameworks = ["plait"] if jax is None else ["plait", "jax"]
    runs: dict[str, list[dict[str, dict[str, Any]]]] = {f: [] for f in frameworks}
    for k in range(rounds):
        for f in frameworks if k % 2 == 0 else frameworks[::-1]:
            runs[f].append(_run_corpus(f, programs))
    lines = [
        "| program | plait trace + lower | plait XLA | JAX trace + lower | JAX XLA | XLA compiles (plait / JAX) "
        "| plait / JAX, total | plait / JAX, XLA |",
        "|---|---|---|---|---|---|---|---|",
    ]
    totals: list[float] = []
    xlas: list[float] = []
    measured: list[str] = []
    failed: list[str] = []

    def med(f: str, name: str, key: str) -> float:
        return statistics.median(
            sum(r[name][k] for k in key.split("+")) for r in runs[f]
        )

    for prog in programs:
        name = prog.stem
        if not all(r[name]["ok"] for f in frameworks for r in runs[f]):
            failed.append(name)
            continue
        p_tl, p_x = med("plait", name, "trace+lower"), med("plait", name, "xla")
        p_n = int(med("plait", name, "compiles"))
        if jax is None:
            lines.append(f"| {name} | {fmt_seconds(p_tl)} | {fmt_seconds(p_x)} | — | — | {p_n} / — | — | — |")
            continue
        j_tl, j_x = med("jax", name, "trace+lower"), med("jax", name, "xla")
        j_n = int(med("jax", name, "compiles"))
        pairs = list(zip(runs["plait"], runs["jax"]))
        total = statistics.median(
            (p[name]["trace"] + p[name]["lower"] + p[name]["xla"]) / (j[name]["trace"] + j[name]["lower"] + j[name]["xla"])
            for p, j in pairs
        )
        xla = statistics.median(p[name]["xla"] / j[name]["xla"] for p, j in pairs)
        totals.append(total)
        xlas.append(xla)
        measured.append(name)
        lines.append(
            f"| {name} | {fmt_seconds(p_tl)} | {fmt_seconds(p_x)} | {fmt_seconds(j_tl)} | {fmt_seconds(j_x)} "
            f"| {p_n} / {j_n} | {total:.2f}× | {xla:.2f}× |"
        )
    out = [
        "## Compile-time corpus: every program's compilations, plait against JAX",
        "",
        f"{len(programs)} programs, {rounds} rounds (a fresh process per framework and round, the frameworks "
        "taking turns); seconds are sums over each program's compilations, medians over the rounds.",
        "",
        *lines,
        "",
    ]
    if totals:
        worst = max(zip(totals, measured))
        out.append(
            f"Geometric mean of plait / JAX over {len(totals)} programs: total (trace + lower + XLA) "
            f"{_geomean(totals):.2f}× (target ≤ 0.9×), XLA alone {_geomean(xlas):.2f}×; "
            f"the highest total: {worst[1]} at {worst[0]:.2f}× (target: none above 1.2×)."
        )
    if failed:
        out.append(f"Not measured (a run failed): {', '.join(failed)}.")
    return "\n".join(out)


if __name__ == "__main__":
    from benchmarks.harness import markdown_table

    try:
        _jax: Any | None = importlib.import_module("jax")
    except ImportError:
        _jax = None
    print(markdown_table(compile_results(_jax) + sample_grid_results(_jax)))
    print()
    print(corpus_section(_jax))
