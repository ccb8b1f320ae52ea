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
"""

from __future__ import annotations

import importlib
import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result
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


if __name__ == "__main__":
    from benchmarks.harness import markdown_table

    try:
        _jax: Any | None = importlib.import_module("jax")
    except ImportError:
        _jax = None
    print(markdown_table(compile_results(_jax)))
