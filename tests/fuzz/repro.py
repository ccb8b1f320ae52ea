"""Standalone repro scripts: the program, its arrays and its mode, as plain Python.

``python repro.py`` runs it with plait; ``python repro.py jax`` runs the very
same text with JAX (for the modes JAX has), so the two printouts compare.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .data import Data
from .modes import shape_spec, static_lengths_of
from .program import LOGICAL_N, N, Program

_HEADER = '''"""plait fuzz failure (seed {seed}, mode {mode}).

{message}

Run with plait: python {name}      with JAX: python {name} jax
"""

import sys

import numpy as np

if sys.argv[1:] == ["jax"]:
    import jax
    import jax.numpy as jnp
    from jax import lax, nn
else:
    import plait as jax
    import plait.numpy as jnp
    from plait import lax, nn

'''

_MODES = {
    "eager": "out = f(*args)",
    "jit": "out = jax.jit(f)(*args)",
    "grad": "out = jax.grad(lambda *a: jnp.sum(f(*a) * weights), argnums=floats)(*args)",
    "checkpoint": "out = jax.grad(lambda *a: jnp.sum(jax.checkpoint(f)(*a) * weights), argnums=floats)(*args)",
    "jvp": (
        "def g(*fa):\n    full = list(args)\n    for i, x in zip(floats, fa):\n        full[i] = x\n    return f(*full)\n\n"
        "out = jax.jvp(g, tuple(args[i] for i in floats), tuple(tangents))"
    ),
    "vjp": (
        "def g(*fa):\n    full = list(args)\n    for i, x in zip(floats, fa):\n        full[i] = x\n    return f(*full)\n\n"
        "primal, pull = jax.vjp(g, *[args[i] for i in floats])\n"
        "out = (primal, pull(np.asarray(weights, dtype=np.dtype(primal.dtype))))"
    ),
    "vmap": "out = jax.vmap(f)(*batched)",
    "jit_vmap_grad": (
        "out = jax.jit(jax.vmap(jax.grad(lambda *a: jnp.sum(f(*a) * weights), argnums=floats)))(*batched)"
    ),
    "grad_grad": (
        "first = jax.grad(lambda *a: jnp.sum(f(*a) * weights), argnums=floats)\n"
        "second = lambda *a: sum(jnp.sum(g * v) for g, v in zip(first(*a), second_weights))\n"
        "out = jax.grad(second, argnums=floats)(*args)"
    ),
    "mask": (
        "# plait only: the padded result's logical part against f on the logical slices\n"
        "out = jax.mask(f, mask_specs, mask_out)(list(args), {'n': logical_n})\n"
        "print('logical reference:', f(*[jnp.asarray(a) for a in sliced]))"
    ),
    "pile": (
        "# plait only: vmap over piles against a loop over the elements\n"
        "out = jax.vmap(f, in_axes=pile_in_axes, out_axes=jax.pile_axis)(*pile_args).unpack()\n"
        "print('loop reference:', [f(*[jnp.asarray(a) for a in element]) for element in pile])"
    ),
}

_FOOTER = '''

def leaves(tree):
    return [x for t in tree for x in leaves(t)] if isinstance(tree, (tuple, list)) else [tree]


for leaf in leaves(out):
    print(leaf.dtype, "weak" if getattr(leaf, "weak_type", False) else "strong", np.asarray(leaf).tolist())
'''


def _literal(x: np.ndarray) -> str:
    return f"np.array({np.asarray(x).tolist()!r}, dtype={str(x.dtype)!r})"


def _list(xs: list[np.ndarray]) -> str:
    return "[" + ", ".join(_literal(x) for x in xs) + "]"


def repro_source(program: Program, data: Data, mode: str, message: str, name: str = "repro.py") -> str:
    floats = tuple(program.float_inputs())
    lines = [
        _HEADER.format(seed=program.seed, mode=mode, message=message.replace('"""', "'''"), name=name),
        program.source(),
        "",
        f"args = [jnp.asarray(a) for a in {_list(data.args)}]",
        f"floats = {floats!r}",
        f"weights = {_literal(data.weights)}",
    ]
    if mode == "jvp":
        lines.append(f"tangents = {_list(data.tangents)}")
    if mode == "grad_grad":
        lines.append(f"second_weights = {_list(data.second)}")
    if mode in ("vmap", "jit_vmap_grad"):
        lines.append(f"batched = [jnp.asarray(a) for a in {_list(data.batched)}]")
    if mode == "mask":
        specs = [shape_spec(v.shape, lambda d: "n" if d == N else str(d)) for v in program.inputs]
        lines += [
            f"mask_specs = {specs!r}",
            f"mask_out = {shape_spec(program.out_var.shape, lambda d: '_')!r}",
            f"logical_n = {LOGICAL_N}",
            f"sliced = [a[tuple(slice(0, logical_n) if d == {N} else slice(None) for d in a.shape)] for a in args]",
        ]
    if mode == "pile":
        lines += [
            "pile = [" + ", ".join(_list(e) for e in data.pile) + "]",
            f"ragged = {[any(d == N for d in v.shape) for v in program.inputs]!r}",
            f"static_lengths = {static_lengths_of(program.seed)!r}  # None: the default, a plan of buckets",
            "pile_args = [jax.Pile.from_arrays([e[i] for e in pile], static_lengths=static_lengths) if r",
            "             else np.stack([e[i] for e in pile])",
            "             for i, r in enumerate(ragged)]",
            "pile_in_axes = tuple(jax.pile_axis if r else 0 for r in ragged)",
        ]
    lines += ["", _MODES[mode], _FOOTER]
    return "\n".join(lines)


def write_repro(directory: Path, program: Program, data: Data, mode: str, message: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    name = f"repro_{program.seed}_{mode}.py"
    path = directory / name
    path.write_text(repro_source(program, data, mode, message, name))
    return path
