"""The concrete arrays a program runs on, derived from its seed and signature.

Everything here is plain NumPy, so both interpreters (plait's and JAX's) and
the NumPy oracle receive identical bits.  Values are small and well inside
every function's domain most of the time; a few exact zeros and integers
reach the kinks (``abs``, ``relu``, ``floor``) on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .program import BATCH, PILE_LENGTHS, N, Program, Var

_DTYPES = {"f": "float32", "i": "int32", "b": "bool"}


def random_array(rng: np.random.Generator, shape: tuple[int, ...], kind: str, dtype: str = "") -> np.ndarray:
    dtype = dtype or _DTYPES[kind]
    if kind == "b":
        return rng.random(shape) < 0.5
    if kind == "i":
        return rng.integers(-4, 5, size=shape).astype(dtype)
    x = rng.uniform(-2.0, 2.0, size=shape)
    special = rng.random(shape) < 0.05
    x = np.where(special, np.round(x), x)
    return np.asarray(x).astype(dtype)


@dataclass
class Data:
    """Inputs, batched inputs (``vmap`` modes), output weights and tangents."""

    args: list[np.ndarray]
    batched: list[np.ndarray]
    weights: np.ndarray  # the loss is sum(out * weights); also vjp's cotangent (cast to out's dtype)
    tangents: list[np.ndarray]  # one per float input, for jvp and directional checks
    second: list[np.ndarray]  # one per float input, grad(grad)'s loss weights
    pile: list[list[np.ndarray]]  # per element, per input


def pile_axes(var: Var) -> list[int]:
    return [i for i, d in enumerate(var.shape) if d == N]


def _uses_stable_max(program: Program) -> bool:
    return any(any(op in s.op or op in s.expr for op in ("logaddexp", "cumlogsumexp", "logsumexp", "softmax"))
               for s in program.stmts)


def with_ties(rng: np.random.Generator, x: np.ndarray) -> np.ndarray:
    """``x`` with about half its values snapped to a coarse grid (multiples of 0.5), so
    that several elements tie exactly: where a stable formula breaks ties of a
    maximum, its derivatives must still be those of the smooth function."""
    snap = rng.random(x.shape) < 0.5
    return np.where(snap, np.round(x * 2) / 2, x).astype(x.dtype)


def make_data(program: Program) -> Data:
    rng = np.random.default_rng(program.seed + 1)
    args = [random_array(rng, v.shape, v.kind, v.dtype) for v in program.inputs]
    if _uses_stable_max(program):
        # a generator of its own, so that the other programs' data stay as they were
        tie_rng = np.random.default_rng(program.seed + 2)
        args = [with_ties(tie_rng, a) if v.kind == "f" else a for a, v in zip(args, program.inputs)]
    batched = [random_array(rng, (BATCH, *v.shape), v.kind, v.dtype) for v in program.inputs]
    out = program.out_var
    weights = rng.uniform(-1.0, 1.0, size=out.shape).astype("float32")
    floats = [program.inputs[i] for i in program.float_inputs()]
    tangents = [rng.uniform(-1.0, 1.0, size=v.shape).astype(v.dtype) for v in floats]
    second = [rng.uniform(-1.0, 1.0, size=v.shape).astype(v.dtype) for v in floats]
    pile: list[list[np.ndarray]] = []
    for length in PILE_LENGTHS:
        element = []
        for v in program.inputs:
            full = random_array(rng, v.shape, v.kind, v.dtype)
            axes = pile_axes(v)
            if axes:
                full = np.take(full, np.arange(length), axis=axes[0])
            element.append(full)
        pile.append(element)
    return Data(args, batched, weights, tangents, second, pile)
