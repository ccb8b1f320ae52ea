"""The transformation modes, written once for any JAX-like backend.

A :class:`Backend` bundles the four namespaces the generated source and the
modes use (``jax``-like top level, ``jnp``, ``lax``, ``nn``): JAX's modules in
the JAX worker, plait's in the fuzzer's own process.  Nothing here imports
either library.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .data import Data, pile_axes
from .program import LOGICAL_N, N, Program

#: Modes whose results are compared with the oracle (JAX or NumPy).
ORACLE_MODES = ("eager", "jit", "grad", "jvp", "vjp", "vmap", "jit_vmap_grad", "grad_grad", "checkpoint")
#: Modes checked against plait itself: logical slices (mask), a loop over elements (piles).
SELF_MODES = ("mask", "pile")
DIFF_MODES = frozenset({"grad", "jvp", "vjp", "jit_vmap_grad", "grad_grad", "checkpoint", "jit_checkpoint"})
#: Asked of JAX only as a second opinion on a ``checkpoint`` failure (plait's checkpoint body runs compiled).
SECOND_OPINION_MODES = ("jit_checkpoint",)


@dataclass(frozen=True)
class Backend:
    jax: Any
    jnp: Any
    lax: Any
    nn: Any


@dataclass
class Outcome:
    """What one mode produced: arrays with dtype and weak type, an error, or a skip."""

    status: str  # "ok", "error" or "skip"
    values: list[np.ndarray] = field(default_factory=list)
    dtypes: list[str] = field(default_factory=list)
    weak: list[bool | None] = field(default_factory=list)
    error: str = ""
    error_classes: list[str] = field(default_factory=list)  # the exception's class and its bases, by name
    error_base: str = ""  # its first builtin class (what ``except`` clauses written for JAX name)


def applicable(program: Program, mode: str) -> bool:
    if mode in DIFF_MODES:
        # reverse mode of a while_loop is refused by JAX and plait alike (its trip count is not static)
        reverse = mode != "jvp" and any(s.op == "while_loop" for s in program.stmts)
        return program.differentiable() and not reverse
    if mode == "mask":
        return any(pile_axes(v) for v in program.inputs)
    if mode == "pile":
        axes = [pile_axes(v) for v in program.inputs]
        return any(axes) and all(len(a) <= 1 for a in axes) and len(program.out_var.shape) >= 1
    return True


def compile_program(backend: Backend, program: Program) -> Callable[..., Any]:
    namespace: dict[str, Any] = {"jnp": backend.jnp, "lax": backend.lax, "nn": backend.nn}
    exec(compile(program.source(), f"<fuzz program {program.seed}>", "exec"), namespace)
    fn: Callable[..., Any] = namespace["f"]
    return fn


def leaves(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for t in tree for leaf in leaves(t)]
    return [tree]


def record(tree: Any) -> Outcome:
    out = Outcome("ok")
    for leaf in leaves(tree):
        out.values.append(np.array(leaf))
        out.dtypes.append(str(leaf.dtype) if hasattr(leaf, "dtype") else type(leaf).__name__)
        weak = getattr(leaf, "weak_type", None)
        out.weak.append(None if weak is None else bool(weak))
    return out


def _error(e: BaseException) -> Outcome:
    mro = type(e).__mro__
    return Outcome(
        "error",
        error=f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:400],
        error_classes=[c.__name__ for c in mro],
        error_base=next(c.__name__ for c in mro if c.__module__ == "builtins"),
    )


def _compute(backend: Backend, program: Program, data: Data, mode: str) -> Any:
    jax, jnp = backend.jax, backend.jnp
    f = compile_program(backend, program)
    args = [jnp.asarray(a) for a in data.args]
    batched = [jnp.asarray(a) for a in data.batched]
    floats = tuple(program.float_inputs())
    weights = data.weights

    def loss(*a: Any) -> Any:
        return jnp.sum(f(*a) * weights)

    def full(fargs: Sequence[Any]) -> list[Any]:
        out = list(args)
        for i, x in zip(floats, fargs):
            out[i] = x
        return out

    if mode == "eager":
        return f(*args)
    if mode == "jit":
        return jax.jit(f)(*args)
    if mode == "grad":
        return jax.grad(loss, argnums=floats)(*args)
    if mode in ("checkpoint", "jit_checkpoint"):
        remat = jax.checkpoint(f)
        remat_grad = jax.grad(lambda *a: jnp.sum(remat(*a) * weights), argnums=floats)
        return (remat_grad if mode == "checkpoint" else jax.jit(remat_grad))(*args)
    if mode == "jvp":
        primals = [args[i] for i in floats]
        return jax.jvp(lambda *fa: f(*full(fa)), tuple(primals), tuple(data.tangents))
    if mode == "vjp":
        out, pull = jax.vjp(lambda *fa: f(*full(fa)), *[args[i] for i in floats])
        return out, pull(np.asarray(weights, dtype=np.dtype(out.dtype)))
    if mode == "vmap":
        return jax.vmap(f)(*batched)
    if mode == "jit_vmap_grad":
        return jax.jit(jax.vmap(jax.grad(loss, argnums=floats)))(*batched)
    if mode == "grad_grad":
        first = jax.grad(loss, argnums=floats)

        def second(*a: Any) -> Any:
            return sum(jnp.sum(g * v) for g, v in zip(first(*a), data.second))

        return jax.grad(second, argnums=floats)(*args)
    raise ValueError(f"unknown mode {mode!r}")


def run_mode(backend: Backend, program: Program, data: Data, mode: str) -> Outcome:
    """Run ``program`` under ``mode``; exceptions become an ``error`` outcome."""
    if not applicable(program, mode):
        return Outcome("skip", error="not applicable")
    try:
        return record(_compute(backend, program, data, mode))
    except Exception as e:  # the fuzzer records every failure, of any type
        return _error(e)


# --- plait-only modes: mask and piles -------------------------------------------------------------------


def shape_spec(shape: tuple[int, ...], names: Callable[[int], str]) -> str:
    dims = [names(d) for d in shape]
    return dims[0] if len(dims) == 1 else "(" + ", ".join(dims) + ")" if dims else ""


def _logical(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    return x[tuple(slice(0, d) for d in shape)]


#: Errors that mean "mask / piles do not support this program", not "wrong".
UNSUPPORTED = ("ShapeError", "NotImplementedError", "InconclusiveDimensionOperation")
#: A message about a symbolic size (``f32[n, 3]``, ``n - 2``) or a ragged axis.
_SYMBOLIC = re.compile(r"[\[(, *]n[\]),+\- ]|_pile\d+|symbolic|ragged|polymorphic")


def static_lengths_of(seed: int) -> bool | None:
    """What a program's piles make static: the default (a plan of buckets) for even seeds, nothing (whole piles,
    the lengths traced) for odd ones, so that the pile mode checks both ways ``vmap`` computes a pile."""
    return None if seed % 2 == 0 else False


def unsupported(error: str) -> bool:
    """Whether an error under ``mask`` / piles is a refusal of the program, not a wrong answer."""
    return error.split(":")[0] in UNSUPPORTED or _SYMBOLIC.search(error) is not None


def run_self_check(backend: Backend, program: Program, data: Data, mode: str) -> tuple[Outcome, Outcome]:
    """(plait's result under ``mask`` or piles, the reference built from eager runs)."""
    if not applicable(program, mode):
        return Outcome("skip", error="not applicable"), Outcome("skip")
    jax = backend.jax
    f = compile_program(backend, program)
    n_axes = [pile_axes(v) for v in program.inputs]
    try:
        if mode == "mask":
            sliced = [np.asarray(x)[tuple(slice(0, LOGICAL_N) if i in ax else slice(None) for i in range(x.ndim))]
                      for x, ax in zip(data.args, n_axes)]
            want = record(f(*[backend.jnp.asarray(x) for x in sliced]))
        else:
            want = record([f(*[backend.jnp.asarray(x) for x in element]) for element in data.pile])
    except Exception as e:
        return Outcome("skip", error="reference failed: " + _error(e).error), Outcome("skip")
    try:
        if mode == "mask":
            specs = [shape_spec(v.shape, lambda d: "n" if d == N else str(d)) for v in program.inputs]
            out_spec = shape_spec(program.out_var.shape, lambda d: "_")
            got_tree = jax.mask(f, specs, out_spec)(list(data.args), {"n": LOGICAL_N})
            got = record(got_tree)
            got.values = [_logical(g, w.shape) if g.ndim == w.ndim else g for g, w in zip(got.values, want.values)]
        else:
            in_axes = []
            args = []
            for i, ax in enumerate(n_axes):
                elements = [element[i] for element in data.pile]
                if ax:
                    args.append(jax.Pile.from_arrays(elements, static_lengths=static_lengths_of(program.seed)))
                    in_axes.append(jax.pile_axis)
                else:
                    args.append(np.stack(elements))
                    in_axes.append(0)
            out = jax.vmap(f, in_axes=tuple(in_axes), out_axes=jax.pile_axis)(*args)
            got = record(out.unpack())
    except Exception as e:
        err = _error(e)
        if unsupported(err.error):
            return Outcome("skip", error="unsupported: " + err.error), want
        return err, want
    return got, want
