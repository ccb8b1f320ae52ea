"""Invertible reverse mode: memory of ``jit(grad(loss))`` for a RevNet.

A reversible residual stack (``y1 = x1 + F(x2); y2 = x2 + G(y1)`` with
``F``, ``G`` a dense layer and ``tanh``) of depth 4, 16 and 64, differentiated
with respect to its weights only (the training case; the stack's inputs are
arguments that are not differentiated).  Each program is compiled and its
memory read from XLA's compiled memory analysis; nothing is run, so this is
a memory table, not a timing.

The figure is ``temp_size_in_bytes``, XLA's temporary buffers (the saved
intermediates and the backward pass's working values): on CPU XLA's
``peak_memory_in_bytes`` counts only the arguments and outputs, which grow
with the depth's weights alike for every method.  Reported side by side:

* plait, ordinary reverse mode (every intermediate saved: grows with depth);
* plait, ``invertible`` (intermediates rebuilt from the outputs: flat;
  target depth 64 / depth 4 ≤ 1.2);
* JAX 0.10.2, ordinary ``jax.grad``; with ``jax.checkpoint`` around each
  block (each block's inputs saved, its inside recomputed: still linear in
  depth); and around runs of √depth blocks (the classic schedule: grows like
  √depth).
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DEPTHS = (4, 16, 64)
BATCH = 64
HALF = 128  # features per half of the reversible pair
TARGET = 1.2  # invertible: depth 64 / depth 4

Params = list[dict[str, np.ndarray]]


@dataclass
class MemoryRow:
    """Temporary bytes of one depth's ``jit(grad(loss))`` (None: not measured)."""

    depth: int
    arguments: int
    plait_ordinary: int
    plait_invertible: int
    jax_ordinary: int | None
    jax_checkpoint_block: int | None
    jax_checkpoint_sqrt: int | None


def _params(depth: int, rng: np.random.Generator) -> Params:
    scale = 1 / np.sqrt(HALF)
    return [
        {
            k: (rng.standard_normal((HALF, HALF)) * scale if k in ("f", "g") else rng.standard_normal(HALF) * 0.1).astype(
                np.float32
            )
            for k in ("f", "bf", "g", "bg")
        }
        for _ in range(depth)
    ]


def _block(np_mod: Any, p: dict[str, Any], x1: Any, x2: Any) -> tuple[Any, Any]:
    x1 = x1 + np_mod.tanh(x2 @ p["f"] + p["bf"])
    x2 = x2 + np_mod.tanh(x1 @ p["g"] + p["bg"])
    return x1, x2


def _make_loss(
    np_mod: Any,
    wrap_stack: Callable[[Any], Any] | None = None,
    wrap_segment: Callable[[Any], Any] | None = None,
    segment: Callable[[int], int] = lambda depth: depth,
) -> Callable[[Params, Any, Any], Any]:
    """``loss(params, x1, x2)``: the stack, then a scalar.  The stack is wrapped
    whole by ``wrap_stack``, or in runs of ``segment(depth)`` blocks each
    wrapped by ``wrap_segment``."""

    def loss(params: Params, x1: Any, x2: Any) -> Any:
        def run(ps: Params, a: Any, b: Any) -> tuple[Any, Any]:
            for p in ps:
                a, b = _block(np_mod, p, a, b)
            return a, b

        step = run if wrap_segment is None else wrap_segment(run)
        n = segment(len(params))

        def stack(a: Any, b: Any) -> tuple[Any, Any]:
            for i in range(0, len(params), n):
                a, b = step(params[i : i + n], a, b)
            return a, b

        y1, y2 = (stack if wrap_stack is None else wrap_stack(stack))(x1, x2)
        return np_mod.sum(y1 * y2) + np_mod.sum(np_mod.tanh(y1))

    return loss


def _temp_bytes(jit: Any, grad: Any, loss: Callable[..., Any], args: Sequence[Any]) -> tuple[int, int]:
    stats = jit(grad(loss)).lower(*args).compile().memory_analysis()
    return int(stats.temp_size_in_bytes), int(stats.argument_size_in_bytes)


def invertible_memory_rows(jax: Any | None) -> list[MemoryRow] | None:
    """One row per depth; ``None`` when plait-dispatch (``jit``) is not installed."""
    try:
        jit = importlib.import_module("plait_dispatch").jit
    except (ImportError, AttributeError):
        return None
    import plait_core.numpy as pnp
    from plait_autodiff import grad
    from plait_core import invertible

    rng = np.random.default_rng(0)
    x1, x2 = (rng.standard_normal((BATCH, HALF)).astype(np.float32) for _ in range(2))
    ordinary, inverted = _make_loss(pnp), _make_loss(pnp, wrap_stack=invertible)
    rows = []
    for depth in DEPTHS:
        args = (_params(depth, rng), x1, x2)
        if depth == DEPTHS[0]:  # same gradients before measuring
            for a, b in zip(jit(grad(inverted))(*args), jit(grad(ordinary))(*args)):
                for k in a:
                    np.testing.assert_allclose(np.asarray(a[k]), np.asarray(b[k]), rtol=1e-3, atol=1e-4)
        plain, arg_bytes = _temp_bytes(jit, grad, ordinary, args)
        inv, _ = _temp_bytes(jit, grad, inverted, args)
        jax_figures: list[int | None] = [None, None, None]
        if jax is not None:
            losses = [
                _make_loss(jax.numpy),
                _make_loss(jax.numpy, wrap_segment=jax.checkpoint, segment=lambda d: 1),
                _make_loss(jax.numpy, wrap_segment=jax.checkpoint, segment=math.isqrt),
            ]
            jax_figures = [_temp_bytes(jax.jit, jax.grad, f, args)[0] for f in losses]
        rows.append(MemoryRow(depth, arg_bytes, plain, inv, *jax_figures))
    return rows


def _kib(n: int | None) -> str:
    return "—" if n is None else f"{n / 1024:,.0f} KiB"


def _growth(rows: list[MemoryRow], field: str) -> str:
    first, last = getattr(rows[0], field), getattr(rows[-1], field)
    return "—" if first is None or last is None else f"{last / first:.2f}×"


def memory_markdown_table(rows: list[MemoryRow]) -> str:
    """The memory rows as a markdown table, with a last row of growth (deepest / shallowest)."""
    fields = ("plait_ordinary", "plait_invertible", "jax_ordinary", "jax_checkpoint_block", "jax_checkpoint_sqrt")
    lines = [
        "| RevNet depth | arguments | plait ordinary | plait `invertible` | JAX 0.10.2 ordinary | "
        "JAX 0.10.2 `checkpoint` per block | JAX 0.10.2 `checkpoint` per √depth blocks |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.depth} | {_kib(r.arguments)} | " + " | ".join(_kib(getattr(r, f)) for f in fields) + " |")
    growth = " | ".join(_growth(rows, f) for f in fields)
    lines.append(f"| depth {rows[-1].depth} / depth {rows[0].depth} | {_growth(rows, 'arguments')} | {growth} |")
    return "\n".join(lines)


def invertible_memory_section(jax: Any | None) -> str:
    """The markdown section ``benchmarks/run.py`` appends to the results."""
    rows = invertible_memory_rows(jax)
    title = "## Memory: invertible reverse mode (RevNet, gradient with respect to the weights)\n\n"
    if rows is None:
        return title + "Not measured: plait-dispatch (jit) is not installed.\n"
    ratio = rows[-1].plait_invertible / rows[0].plait_invertible
    verdict = "met" if ratio <= TARGET else "NOT met"
    return (
        title
        + f"Temporary memory (XLA `temp_size_in_bytes`) of the compiled `jit(grad(loss))`, batch {BATCH}, "
        f"two halves of {HALF} features. On CPU XLA's `peak_memory_in_bytes` counts only arguments and outputs, "
        "so the temporaries (saved intermediates and backward working values) are what is reported; the arguments "
        "(the weights) grow with depth alike for every method.\n\n"
        + memory_markdown_table(rows)
        + f"\n\nTarget: plait `invertible` depth {rows[-1].depth} / depth {rows[0].depth} ≤ {TARGET}: "
        f"{ratio:.2f}, {verdict}. On XLA:CPU the `checkpoint` programs' temporaries grow like the ordinary "
        "program's: ordinary reverse mode already keeps about two arrays per block (as many as checkpointing each "
        "block's inputs), and with √depth segments the schedule apparently does not keep the recomputation late.\n"
    )


if __name__ == "__main__":
    try:
        _jax: Any | None = importlib.import_module("jax")
    except ImportError:
        _jax = None
    print(invertible_memory_section(_jax))
