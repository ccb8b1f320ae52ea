"""Invertible reverse mode: memory of ``jit(grad(loss))`` for a RevNet.

A reversible residual stack (``y1 = x1 + F(x2); y2 = x2 + G(y1)`` with
``F``, ``G`` tanh MLPs 128-256-128) of depth 4, 16 and 64, its weights passed
as an argument (a list of dicts, as JAX users write it) and differentiated
(the training case; the stack's inputs are arguments that are not
differentiated).  Each program is compiled and its
memory read from XLA's compiled memory analysis; nothing is run, so this is
a memory table, not a timing.

The figure is ``temp_size_in_bytes``, XLA's temporary buffers (the saved
intermediates and the backward pass's working values): on CPU XLA's
``peak_memory_in_bytes`` counts only the arguments and outputs, which grow
with the depth's weights alike for every method.  Reported side by side:

* plait, ordinary reverse mode (every intermediate saved: grows with depth);
* plait, ``checkpoint`` around each block (each block's inputs saved, its
  inside recomputed);
* plait, ``invertible(stack)(params, x1, x2)`` (the weights kept, every
  intermediate rebuilt from the outputs: flat; target depth 64 / depth 4 ≤
  1.2);
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
BATCH = 256
HALF = 128  # features per half of the reversible pair
HIDDEN = 256  # width of the MLPs' hidden layer
TARGET = 1.2  # invertible: depth 64 / depth 4

Params = list[dict[str, np.ndarray]]


@dataclass
class MemoryRow:
    """Temporary bytes of one depth's ``jit(grad(loss))`` (None: not measured)."""

    depth: int
    arguments: int
    plait_ordinary: int
    plait_checkpoint_block: int
    plait_invertible: int
    jax_ordinary: int | None
    jax_checkpoint_block: int | None
    jax_checkpoint_sqrt: int | None


def _params(depth: int, rng: np.random.Generator) -> Params:
    def dense(n_in: int, n_out: int) -> np.ndarray:
        return (rng.standard_normal((n_in, n_out)) / np.float32(np.sqrt(n_in))).astype(np.float32)

    def bias(n: int) -> np.ndarray:
        return (rng.standard_normal(n) * 0.1).astype(np.float32)

    def block() -> dict[str, np.ndarray]:
        p = {}
        for h in "fg":
            p[f"w1{h}"], p[f"b1{h}"] = dense(HALF, HIDDEN), bias(HIDDEN)
            p[f"w2{h}"], p[f"b2{h}"] = dense(HIDDEN, HALF), bias(HALF)
        return p

    return [block() for _ in range(depth)]


def _mlp(np_mod: Any, p: dict[str, Any], h: str, z: Any) -> Any:
    return np_mod.tanh(z @ p[f"w1{h}"] + p[f"b1{h}"]) @ p[f"w2{h}"] + p[f"b2{h}"]


def _block(np_mod: Any, p: dict[str, Any], x1: Any, x2: Any) -> tuple[Any, Any]:
    x1 = x1 + _mlp(np_mod, p, "f", x2)
    x2 = x2 + _mlp(np_mod, p, "g", x1)
    return x1, x2


def _make_loss(
    np_mod: Any,
    wrap_stack: Callable[[Any], Any] | None = None,
    wrap_segment: Callable[[Any], Any] | None = None,
    segment: Callable[[int], int] = lambda depth: depth,
) -> Callable[[Params, Any, Any], Any]:
    """``loss(params, x1, x2)``: the stack, then a scalar.  The stack (a
    function of the weights and both halves) is wrapped whole by
    ``wrap_stack``, or in runs of ``segment(depth)`` blocks each wrapped by
    ``wrap_segment``."""

    def run(ps: Params, a: Any, b: Any) -> tuple[Any, Any]:
        for p in ps:
            a, b = _block(np_mod, p, a, b)
        return a, b

    step = run if wrap_segment is None else wrap_segment(run)

    def stack(params: Params, a: Any, b: Any) -> tuple[Any, Any]:
        n = segment(len(params))
        for i in range(0, len(params), n):
            a, b = step(params[i : i + n], a, b)
        return a, b

    whole = stack if wrap_stack is None else wrap_stack(stack)

    def loss(params: Params, x1: Any, x2: Any) -> Any:
        y1, y2 = whole(params, x1, x2)
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
    from plait_core import checkpoint, invertible

    rng = np.random.default_rng(0)
    x1, x2 = (rng.standard_normal((BATCH, HALF)).astype(np.float32) for _ in range(2))
    ordinary, inverted = _make_loss(pnp), _make_loss(pnp, wrap_stack=invertible)
    checkpointed = _make_loss(pnp, wrap_segment=checkpoint, segment=lambda d: 1)
    rows = []
    for depth in DEPTHS:
        args = (_params(depth, rng), x1, x2)
        if depth == DEPTHS[0]:  # same gradients before measuring
            for a, b in zip(jit(grad(inverted))(*args), jit(grad(ordinary))(*args)):
                for k in a:
                    np.testing.assert_allclose(np.asarray(a[k]), np.asarray(b[k]), rtol=1e-3, atol=1e-4)
        plain, arg_bytes = _temp_bytes(jit, grad, ordinary, args)
        ckpt, _ = _temp_bytes(jit, grad, checkpointed, args)
        inv, _ = _temp_bytes(jit, grad, inverted, args)
        jax_figures: list[int | None] = [None, None, None]
        if jax is not None:
            losses = [
                _make_loss(jax.numpy),
                _make_loss(jax.numpy, wrap_segment=jax.checkpoint, segment=lambda d: 1),
                _make_loss(jax.numpy, wrap_segment=jax.checkpoint, segment=math.isqrt),
            ]
            jax_figures = [_temp_bytes(jax.jit, jax.grad, f, args)[0] for f in losses]
        rows.append(MemoryRow(depth, arg_bytes, plain, ckpt, inv, *jax_figures))
    return rows


def _kib(n: int | None) -> str:
    return "—" if n is None else f"{n / 1024:,.0f} KiB"


def _growth(rows: list[MemoryRow], field: str) -> str:
    first, last = getattr(rows[0], field), getattr(rows[-1], field)
    return "—" if first is None or last is None else f"{last / first:.2f}×"


def memory_markdown_table(rows: list[MemoryRow]) -> str:
    """The memory rows as a markdown table, with a last row of growth (deepest / shallowest)."""
    fields = (
        "plait_ordinary",
        "plait_checkpoint_block",
        "plait_invertible",
        "jax_ordinary",
        "jax_checkpoint_block",
        "jax_checkpoint_sqrt",
    )
    lines = [
        "| RevNet depth | arguments | plait ordinary | plait `checkpoint` per block | plait `invertible` | "
        "JAX 0.10.2 ordinary | JAX 0.10.2 `checkpoint` per block | JAX 0.10.2 `checkpoint` per √depth blocks |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.depth} | {_kib(r.arguments)} | " + " | ".join(_kib(getattr(r, f)) for f in fields) + " |")
    growth = " | ".join(_growth(rows, f) for f in fields)
    lines.append(f"| depth {rows[-1].depth} / depth {rows[0].depth} | {_growth(rows, 'arguments')} | {growth} |")
    return "\n".join(lines)


def invertible_memory_section(jax: Any | None) -> str:
    """The markdown section ``benchmarks/run.py`` appends to the results."""
    rows = invertible_memory_rows(jax)
    title = "## Memory: invertible reverse mode (RevNet, weights passed as an argument and differentiated)\n\n"
    if rows is None:
        return title + "Not measured: plait-dispatch (jit) is not installed.\n"
    ratio = rows[-1].plait_invertible / rows[0].plait_invertible
    verdict = "met" if ratio <= TARGET else "NOT met"
    return (
        title
        + f"Temporary memory (XLA `temp_size_in_bytes`) of the compiled `jit(grad(loss))`, batch {BATCH}, "
        f"two halves of {HALF} features, tanh MLPs {HALF}-{HIDDEN}-{HALF}, `loss(params, x1, x2)` with the weights "
        "an argument (`invertible(stack)(params, x1, x2)` keeps them and rebuilds every activation). On CPU XLA's `peak_memory_in_bytes` counts only arguments and outputs, "
        "so the temporaries (saved intermediates and backward working values) are what is reported; the arguments "
        "(the weights) grow with depth alike for every method. The batch is large enough that an activation does not "
        "fit in a weight gradient's output buffer, where XLA would otherwise hide it.\n\n"
        + memory_markdown_table(rows)
        + f"\n\nTarget: plait `invertible` depth {rows[-1].depth} / depth {rows[0].depth} ≤ {TARGET}: "
        f"{ratio:.2f}, {verdict} (ordinary reverse mode: {rows[-1].plait_ordinary / rows[0].plait_ordinary:.1f}×). "
        "On XLA:CPU the `checkpoint` programs' temporaries (plait's and JAX's) grow like the ordinary "
        "program's: ordinary reverse mode already keeps about two arrays per block (as many as checkpointing each "
        "block's inputs), and with √depth segments the schedule apparently does not keep the recomputation late.\n"
    )


if __name__ == "__main__":
    try:
        _jax: Any | None = importlib.import_module("jax")
    except ImportError:
        _jax = None
    print(invertible_memory_section(_jax))
