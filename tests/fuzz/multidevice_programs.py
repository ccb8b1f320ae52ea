"""Random data-parallel programs for the multi-device differential check.

A program is JAX-style source text of two functions of replicated
parameters ``p0``, ``p1`` (``F x F``), ``p2`` (``F``) and a batch ``x``
(``rows x F``): ``step`` returns a row-wise value (one row per example) and
a batch-wide value, ``loss`` a scalar of both.  Rows never mix except
through ``bsum`` and ``bmax`` (a sum / maximum over the batch axis), which
the caller passes: ``jnp.sum(v, 0)`` on one device, ``lax.psum(jnp.sum(v,
0), axis)`` inside ``shard_map`` and ``pmap``.  So the same text is the
one-device program and each device's piece of the distributed one; ``B`` is
the global batch size.  Statements are elementwise ops, ``dot`` with a
parameter, reductions over a row (recombined with it), a ``lax.scan`` along
the features, batch reductions and row-global combinations.  The source
names only ``jnp``, ``lax`` and ``nn``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Features per row, rows per device, devices.
F = 4
ROWS = 2
DEVICES = 8
BATCH = ROWS * DEVICES

_UNARY = (
    "jnp.sin({0})", "jnp.tanh({0})", "{0} * {0}", "jnp.exp(-{0} * {0})", "nn.relu({0})",
    "jnp.abs({0}) + 0.5", "0.5 * jnp.cos({0})", "nn.sigmoid({0})",
)
_BINARY = ("{0} + {1}", "{0} * {1}", "jnp.maximum({0}, {1})", "jnp.where({0} > {1}, {0}, 0.5 * {1})", "{0} - 0.5 * {1}")
_ROW_REDUCE = (
    "{0} - jnp.sum({0}, axis=1, keepdims=True)", "{0} - jnp.max({0}, axis=1, keepdims=True)",
    "{0} - nn.logsumexp({0}, axis=1, keepdims=True)", "{0} * jnp.mean({0}, axis=1, keepdims=True)",
)
_DOT = ("jnp.dot({0}, p0)", "jnp.dot({0}, p1)", "jnp.tanh(jnp.dot({0}, p0) + p2)")
#: ``lax.scan`` along the features of each row (``h`` starts as ``0 * x[:, 0]``, so it varies like ``x``).
_SCAN = "lax.scan(lambda h, c: (jnp.tanh(0.5 * h + c), h * c + c), 0.0 * {0}[:, 0], {0}.T)[1].T"
_BATCH = ("bsum({0})", "bmax({0})", "bsum({0}) / B", "bsum({0} * {0}) / B")
_GLOBAL = ("jnp.tanh({0})", "{0} * {0}", "jnp.sin({0}) + {0}")
_MIX = ("{0} * {1}", "{0} + {1}", "{0} - {1}")  # a row value with a batch-wide one (broadcast over rows)

KINDS = ("unary", "binary", "row_reduce", "dot", "scan", "batch", "global", "mix")
_WEIGHTS = np.array([3, 2, 2, 2, 1, 2, 1, 2], dtype=float)


@dataclass(frozen=True)
class MultiProgram:
    """One generated program: its seed, source text and the kinds of its statements."""

    seed: int
    source: str
    kinds: tuple[str, ...]

    @property
    def differentiable(self) -> bool:
        """Whether the gradient modes apply: JAX has no derivative of ``pmax`` (``bmax``)."""
        return "bmax(" not in self.source.split("def loss")[0]


def generate(seed: int) -> MultiProgram:
    """The program of ``seed`` (deterministic)."""
    rng = np.random.default_rng(seed)
    rows, glob = ["x"], ["p2"]
    lines: list[str] = []
    kinds: list[str] = []
    for k in range(int(rng.integers(3, 9))):
        kind = str(rng.choice(KINDS, p=_WEIGHTS / _WEIGHTS.sum()))
        name = f"v{k}"
        r = rows[int(rng.integers(len(rows)))]
        r2 = rows[int(rng.integers(len(rows)))]
        g = glob[int(rng.integers(len(glob)))]
        table = {
            "unary": (_UNARY, (r,)), "binary": (_BINARY, (r, r2)), "row_reduce": (_ROW_REDUCE, (r,)),
            "dot": (_DOT, (r,)), "batch": (_BATCH, (r,)), "global": (_GLOBAL, (g,)), "mix": (_MIX, (r, g)),
        }
        if kind == "scan":
            expr = _SCAN.format(r)
        else:
            choices, args = table[kind]
            expr = str(rng.choice(choices)).format(*args)
        (glob if kind in ("batch", "global") else rows).append(name)
        lines.append(f"    {name} = {expr}")
        kinds.append(kind)
    last_row, last_glob = rows[-1], glob[-1]
    lines.append(f"    g = bsum(jnp.tanh({last_row})) / B + {last_glob}")
    source = "\n".join([
        "def step(p0, p1, p2, x, bsum, bmax, B):",
        *lines,
        f"    return {last_row} * g, g",
        "",
        "def loss(p0, p1, p2, x, bsum, bmax, B):",
        "    r, g = step(p0, p1, p2, x, bsum, bmax, B)",
        "    return jnp.sum(g * jnp.arange(1.0, 1.0 + g.shape[0])) / 4.0 + jnp.sum(bsum(jnp.sin(r))) / B",
        "",
    ])
    return MultiProgram(seed, source, tuple(kinds))


def make_inputs(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(p0, p1, p2, x)`` of the program of ``seed``, float32 (``x`` has the global batch)."""
    rng = np.random.default_rng(seed + 1)
    p0 = rng.uniform(-0.7, 0.7, (F, F)).astype(np.float32)
    p1 = rng.uniform(-0.7, 0.7, (F, F)).astype(np.float32)
    p2 = rng.uniform(-1.0, 1.0, (F,)).astype(np.float32)
    x = rng.uniform(-1.5, 1.5, (BATCH, F)).astype(np.float32)
    return p0, p1, p2, x


def vmap_batch(x: np.ndarray) -> np.ndarray:
    """Two batches of the program's ``x`` for the ``vmap`` modes: ``x`` and its features reversed, scaled."""
    return np.stack([x, np.flip(x, 1) * np.float32(0.75)])
