"""The composition matrix: every transformation composed with every other.

``PYTHONPATH=tests python -m composition_matrix`` runs every ordered pair (and a list of important
triples) of the transformations below on a few small programs, checks each
composition against a numerical oracle, and prints which compositions work:
a table of ✓ / ✗ where every ✗ carries its reason.  ``--markdown PATH``
writes it as markdown (``docs/composition_matrix.md``); ``--eager numpy``
evaluates eagerly with core's NumPy backend instead of op-by-op XLA (much
faster, same transformations); ``--only PATTERN`` and ``--program NAME``
select cases.

How it works.  A :class:`Program` is a plait function together with its
NumPy oracle (float64), the description of its arguments and outputs, and a
sampler of inputs.  Every transformation is a *wrapper* ``Program ->
Program`` that transforms the plait function and derives the oracle of the
result from the oracle of its argument:

* ``jit``: ``jit(f)``; the oracle is unchanged (so for ``checkpoint``).
* ``vmap``: ``vmap(f)`` over a leading axis of every argument; oracle: a
  Python loop over the batch.
* ``grad``: ``grad`` of ``sum(sin(out))`` with respect to every float
  argument; oracle: central finite differences of the oracle.
* ``jvp`` / ``linearize``: the tangents are extra arguments and the result
  is ``(out, tangent_out)``; oracle: a directional finite difference.
* ``mask``: ``mask(f)`` on arguments padded to a fixed size, with the logical
  size as an extra argument and the padding of the result zeroed; oracle:
  ``f`` on the logical slices, padded with zeros.
* ``invertible``: ``invertible`` of ``f`` as a function of its *state*
  arguments (the others are closed over, as a reversible network's
  parameters can be).
* ``invertible_args``: ``invertible(f)`` called with every argument, the
  parameters included (as JAX users pass them): the backward pass keeps the
  parameters and rebuilds the state.
* ``custom_jvp`` / ``custom_vjp`` / ``custom_vmap``: the custom function
  whose rule is the true one (``jvp`` of ``f``, ``vjp`` of ``f``,
  ``vmap(f)``); the check also asserts that the rule ran whenever a
  transformation outside it needs it.
* ``piles``: ``vmap(f, in_axes=pile_axis, out_axes=pile_axis)`` on piles of
  equal or unequal lengths built from the arguments' data and a ``lengths``
  argument, the padding of the result zeroed; oracle: a loop over the
  elements' true slices.
* ``donation``: ``jit(f, donate_argnums=0)``; when outermost, the first
  argument is a fresh device array that the call must delete.

Every program has one *marked* dimension (a sequence length) that ``mask``
makes logical and ``piles`` makes ragged, and is a reversible (additive
coupling) block, so that ``invertible`` can rebuild its inputs from its
outputs.

A composition that does not simply work is listed in :data:`TABLES`:
:data:`UNSUPPORTED` (not meaningful or not supported: the documented error
it raises and why), :data:`KNOWN_BUGS` (defects of the packages: their
current symptom) and :data:`BYPASSED` (right values, but a custom rule is
not used).  ``tests/test_composition_matrix.py`` checks every case against
these tables.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import re
import sys
import time
import warnings
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

import plait
import plait_core
from plait import lax
from plait import numpy as pnp
from plait_core.dims import definitely_equal

__all__ = [
    "BASE_PROGRAMS",
    "BYPASSED",
    "KNOWN_BUGS",
    "PAIRS",
    "TABLES",
    "TRANSFORMS",
    "TRIPLES",
    "UNSUPPORTED",
    "Expectation",
    "Outcome",
    "Program",
    "RuleBypassed",
    "Spec",
    "build",
    "cells",
    "check_case",
    "compile_pattern",
    "eager_backend",
    "expectation",
    "main",
    "render",
    "run_case",
    "run_matrix",
]

Array = Any
Tree = Any

#: The marked dimension in a :class:`Spec` (logical under ``mask``, ragged under ``piles``).
MARK = "N"
#: The padded size of the marked dimension.
PADDED = 4
#: The batch sizes of ``vmap`` and of ``piles``.
VMAP_SIZE, PILE_SIZE = 2, 3
#: The step of the central finite differences.
FD_STEP = 1e-3


# ---------------------------------------------------------------------------
# Programs


@dataclass(frozen=True)
class Spec:
    """The shape of one array: each dimension an ``int`` or :data:`MARK`."""

    dims: tuple[int | str, ...]

    def shape(self, n: int) -> tuple[int, ...]:
        """The shape with the marked dimension of size ``n``."""
        return tuple(n if d == MARK else int(d) for d in self.dims)

    @property
    def marked(self) -> list[int]:
        """The axes that are the marked dimension."""
        return [k for k, d in enumerate(self.dims) if d == MARK]

    def batched(self, size: int) -> Spec:
        """The spec with a leading batch axis."""
        return Spec((size, *self.dims))

    def mask_spec(self, name: str) -> str:
        """The ``mask`` shape spec, with the marked dimension called ``name``."""
        dims = [name if d == MARK else str(d) for d in self.dims]
        return dims[0] if len(dims) == 1 else f"({', '.join(dims)})" if dims else ""


@dataclass(frozen=True)
class Arg:
    """One positional argument: its spec, whether it is a float (differentiable)
    or an int32 size, and whether ``invertible`` treats it as state (an input
    it rebuilds) rather than a parameter (closed over)."""

    spec: Spec
    is_float: bool = True
    state: bool = False


@dataclass(frozen=True)
class RuleUse:
    """A custom rule of a program: its kind, how many wrappers were inside it,
    and how many times it ran (``calls[0]``)."""

    kind: str
    depth: int
    calls: list[int]


@dataclass
class Program:
    """A plait function, its NumPy oracle and how to call them.

    ``fn`` and ``oracle`` take the same positional arguments (``oracle``
    receives float64 NumPy arrays) and return the same tree of nested tuples
    of arrays, described by ``out`` (a tree of :class:`Spec`).  ``sample(rng,
    n)`` draws arguments whose marked dimension has size ``n``.  ``masks``
    counts the ``mask`` wrappers inside (each names its size afresh),
    ``derivative`` says the oracle uses finite differences (a looser
    tolerance), ``depth`` counts all wrappers inside and ``rules`` lists the
    custom rules inside.
    """

    name: str
    fn: Callable[..., Any]
    oracle: Callable[..., Any]
    args: tuple[Arg, ...]
    out: Tree
    sample: Callable[[np.random.Generator, int], tuple[np.ndarray, ...]]
    masks: int = 0
    derivative: bool = False
    depth: int = 0
    rules: tuple[RuleUse, ...] = field(default=())

    @property
    def float_args(self) -> list[int]:
        """Positions of the float (differentiable) arguments."""
        return [i for i, a in enumerate(self.args) if a.is_float]


def _spec(*dims: int | str) -> Spec:
    return Spec(tuple(dims))


def _sampler(
    *specs: Spec, scalars: Sequence[Callable[[np.random.Generator], float]] = ()
) -> Callable[[np.random.Generator, int], tuple[np.ndarray, ...]]:
    """Standard normal arrays (times 0.5) of the given specs, then scalars drawn by ``scalars``."""

    def sample(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        arrays = [(0.5 * rng.standard_normal(s.shape(n))).astype(np.float32) for s in specs]
        return (*arrays, *(np.asarray(draw(rng), np.float32) for draw in scalars))

    return sample


F = 3  # the feature size of every program
SEQ, VEC, MAT, SCALAR = _spec(MARK, F), _spec(F), _spec(F, F), _spec()


def _elementwise(x: Array, y: Array, w: Array) -> Any:
    m = pnp.mean(y * y)  # a reduction over the marked dimension too
    return x + pnp.sin(y) * w + m, y * 2.0 - 1.0


def _elementwise_np(x: Array, y: Array, w: Array) -> Any:
    return x + np.sin(y) * w + np.mean(y * y), y * 2.0 - 1.0


def _mlp(x: Array, h: Array, w: Array, b: Array) -> Any:
    y1 = x + pnp.tanh(h @ w + b)
    return y1, h - pnp.tanh(y1 @ w.T)


def _mlp_np(x: Array, h: Array, w: Array, b: Array) -> Any:
    y1 = x + np.tanh(h @ w + b)
    return y1, h - np.tanh(y1 @ w.T)


def _rnn(z: Array, xs: Array, h0: Array, w: Array) -> Any:
    def step(h: Array, x: Array) -> tuple[Array, Array]:
        h = pnp.tanh(h @ w + x)
        return h, h

    last, hs = lax.scan(step, h0, xs)
    return z + hs, xs * 1.5, last


def _rnn_np(z: Array, xs: Array, h0: Array, w: Array) -> Any:
    h, hs = h0, []
    for x in xs:
        h = np.tanh(h @ w + x)
        hs.append(h)
    stacked = np.stack(hs) if hs else np.zeros((0, F))
    return z + stacked, xs * 1.5, h


def _cond(x: Array, y: Array, s: Array) -> Any:
    b = lax.cond(s > 0, lambda v, t: pnp.sin(v) * t, lambda v, t: pnp.cos(v) - t, y, s)
    return x + b, y * 3.0


def _cond_np(x: Array, y: Array, s: Array) -> Any:
    b = np.sin(y) * s if s > 0 else np.cos(y) - s
    return x + b, y * 3.0


def _away_from_zero(rng: np.random.Generator) -> float:
    return float(rng.choice([-1.0, 1.0]) * rng.uniform(0.5, 1.5))


def _base_programs() -> dict[str, Program]:
    state, param = functools.partial(Arg, state=True), Arg
    programs = [
        Program(
            "elementwise",
            _elementwise,
            _elementwise_np,
            (state(SEQ), state(SEQ), param(VEC)),
            (SEQ, SEQ),
            _sampler(SEQ, SEQ, VEC),
        ),
        Program(
            "mlp",
            _mlp,
            _mlp_np,
            (state(SEQ), state(SEQ), param(MAT), param(VEC)),
            (SEQ, SEQ),
            _sampler(SEQ, SEQ, MAT, VEC),
        ),
        Program(
            "scan_rnn",
            _rnn,
            _rnn_np,
            (state(SEQ), state(SEQ), param(VEC), param(MAT)),
            (SEQ, SEQ, VEC),
            _sampler(SEQ, SEQ, VEC, MAT),
        ),
        Program(
            "cond",
            _cond,
            _cond_np,
            (state(SEQ), state(SEQ), param(SCALAR)),
            (SEQ, SEQ),
            _sampler(SEQ, SEQ, scalars=[_away_from_zero]),
        ),
    ]
    return {p.name: p for p in programs}


#: What each program computes.
PROGRAM_DOCS = {
    "elementwise": "elementwise operations and a mean over the sequence",
    "mlp": "a tanh layer `x @ w + b` (matmul) in a reversible pair",
    "scan_rnn": "an RNN step `tanh(h @ w + x)` scanned over the sequence",
    "cond": "`lax.cond` on the sign of a scalar parameter",
}

#: The programs every composition is checked on.
BASE_PROGRAMS: dict[str, Program] = _base_programs()


# ---------------------------------------------------------------------------
# Trees (nested tuples whose leaves match a tree of Specs)


def _is_node(t: Any) -> bool:
    return isinstance(t, (tuple, list))


def map_specs(f: Callable[..., Any], specs: Tree, *trees: Tree) -> Tree:
    """``f(spec, *leaves)`` over a tree of specs and trees of its structure (or deeper)."""
    if _is_node(specs):
        return tuple(map_specs(f, s, *(t[k] for t in trees)) for k, s in enumerate(specs))
    return f(specs, *trees)


def _stack(trees: Sequence[Tree], specs: Tree) -> Tree:
    return map_specs(lambda _, *xs: np.stack([np.asarray(x) for x in xs]), specs, *trees)


# ---------------------------------------------------------------------------
# NumPy helpers of the oracles


def _fit(
    x: np.ndarray, axes: Sequence[int], n: int, fill: str = "zeros", rng: np.random.Generator | None = None
) -> np.ndarray:
    """Slice or pad ``x`` to size ``n`` along ``axes`` (padding: zeros or random values)."""
    for ax in axes:
        have = x.shape[ax]
        if have >= n:
            x = np.take(x, np.arange(n), axis=ax)
            continue
        pad_shape = list(x.shape)
        pad_shape[ax] = n - have
        if fill == "random" and rng is not None and np.issubdtype(x.dtype, np.floating):
            pad = rng.standard_normal(pad_shape).astype(x.dtype)
        else:
            pad = np.zeros(pad_shape, x.dtype)
        x = np.concatenate([x, pad], axis=ax)
    return x


def _padded_size(prog: Program, args: Sequence[Any]) -> int:
    for a, x in zip(prog.args, args):
        if a.spec.marked:
            return int(np.shape(x)[a.spec.marked[0]])
    raise ValueError(f"program {prog.name} has no argument with a marked dimension")


def _scalarize_np(out: Tree, specs: Tree) -> float:
    return float(sum(np.sum(np.sin(np.asarray(x, np.float64))) for x in _leaves(out, specs)))


def _leaves(tree: Tree, specs: Tree) -> list[Any]:
    found: list[Any] = []
    map_specs(lambda _, x: found.append(x), specs, tree)
    return found


def _fd_gradient(
    f: Callable[..., float], args: Sequence[Any], which: Sequence[int]
) -> tuple[np.ndarray, ...]:
    grads = []
    for i in which:
        x = np.asarray(args[i], np.float64)
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            plus, minus = x.copy(), x.copy()
            plus[idx] += FD_STEP
            minus[idx] -= FD_STEP
            hi = f(*[plus if k == i else a for k, a in enumerate(args)])
            lo = f(*[minus if k == i else a for k, a in enumerate(args)])
            g[idx] = (hi - lo) / (2 * FD_STEP)
        grads.append(g)
    return tuple(grads)


def _fd_directional(
    f: Callable[..., Tree], specs: Tree, args: Sequence[Any], which: Sequence[int], ts: Sequence[Any]
) -> Tree:
    def moved(sign: float) -> list[Any]:
        moved_args = list(args)
        for i, t in zip(which, ts):
            moved_args[i] = np.asarray(args[i], np.float64) + sign * FD_STEP * np.asarray(t, np.float64)
        return moved_args

    hi, lo = f(*moved(1.0)), f(*moved(-1.0))
    return map_specs(lambda _, a, b: (np.asarray(a) - np.asarray(b)) / (2 * FD_STEP), specs, hi, lo)


# ---------------------------------------------------------------------------
# plait helpers of the wrappers


def _merge(args: Sequence[Any], positions: Sequence[int], values: Sequence[Any]) -> list[Any]:
    merged = list(args)
    for i, v in zip(positions, values):
        merged[i] = v
    return merged


def _zero_padding(x: Array, spec: Spec, n: Array, batched: bool) -> Array:
    """Zero ``x`` past the logical size ``n`` (one per element when ``batched``) along its marked axes."""
    for ax in spec.marked:
        size = x.shape[ax]
        shape = [1] * x.ndim
        shape[ax] = size
        idx = pnp.arange(size).reshape(shape)
        bound = pnp.reshape(n, (-1,) + (1,) * (x.ndim - 1)) if batched else n
        x = pnp.where(idx < bound, x, pnp.zeros_like(x))
    return x


def _scalarize(out: Tree, specs: Tree) -> Array:
    total: Array = 0.0
    for x in _leaves(out, specs):
        total = total + pnp.sum(pnp.sin(x))
    return total


# ---------------------------------------------------------------------------
# The wrappers


def wrap_jit(p: Program) -> Program:
    """``jit(f)``."""
    return replace(p, name=f"jit({p.name})", fn=plait.jit(p.fn))


def wrap_donation(p: Program) -> Program:
    """``jit(f, donate_argnums=0)``."""
    return replace(p, name=f"donate({p.name})", fn=plait.jit(p.fn, donate_argnums=0))


def wrap_checkpoint(p: Program) -> Program:
    """``checkpoint(f)``."""
    return replace(p, name=f"checkpoint({p.name})", fn=plait.checkpoint(p.fn))


def wrap_vmap(p: Program) -> Program:
    """``vmap(f)`` over a leading axis of every argument."""

    def oracle(*args: Any) -> Tree:
        return _stack([p.oracle(*(a[b] for a in args)) for b in range(len(args[0]))], p.out)

    def sample(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        draws = [p.sample(rng, n) for _ in range(VMAP_SIZE)]
        return tuple(np.stack(xs) for xs in zip(*draws))

    return replace(
        p,
        name=f"vmap({p.name})",
        fn=plait.vmap(p.fn),
        oracle=oracle,
        args=tuple(replace(a, spec=a.spec.batched(VMAP_SIZE)) for a in p.args),
        out=map_specs(lambda s: s.batched(VMAP_SIZE), p.out),
        sample=sample,
    )


def wrap_grad(p: Program) -> Program:
    """``grad`` of ``sum(sin(out))`` with respect to every float argument."""
    which = tuple(p.float_args)

    def loss(*args: Any) -> Array:
        return _scalarize(p.fn(*args), p.out)

    def oracle(*args: Any) -> Tree:
        return _fd_gradient(lambda *a: _scalarize_np(p.oracle(*a), p.out), args, which)

    return replace(
        p,
        name=f"grad({p.name})",
        fn=plait.grad(loss, argnums=which),
        oracle=oracle,
        out=tuple(p.args[i].spec for i in which),
        derivative=True,
    )


def _forward_mode(p: Program, kind: str) -> Program:
    which = p.float_args
    k = len(p.args)

    def fn(*args: Any) -> Tree:
        primals, tangents = args[:k], args[k:]

        def closed(*d: Any) -> Tree:
            return p.fn(*_merge(primals, which, d))

        diff = [primals[i] for i in which]
        if kind == "jvp":
            return plait.jvp(closed, tuple(diff), tuple(tangents))
        out, f_jvp = plait.linearize(closed, *diff)
        return out, f_jvp(*tangents)

    def oracle(*args: Any) -> Tree:
        primals, tangents = args[:k], args[k:]
        return p.oracle(*primals), _fd_directional(p.oracle, p.out, primals, which, tangents)

    def sample(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        primals = p.sample(rng, n)
        tangents = [(0.5 * rng.standard_normal(np.shape(primals[i]))).astype(np.float32) for i in which]
        return (*primals, *tangents)

    return replace(
        p,
        name=f"{kind}({p.name})",
        fn=fn,
        oracle=oracle,
        args=(*p.args, *(p.args[i] for i in which)),
        out=(p.out, p.out),
        sample=sample,
        derivative=True,
    )


def wrap_jvp(p: Program) -> Program:
    """``jvp(f, primals, tangents)`` with the tangents as extra arguments; returns ``(out, tangent_out)``."""
    return _forward_mode(p, "jvp")


def wrap_linearize(p: Program) -> Program:
    """``linearize(f, *primals)`` applied to tangents given as extra arguments."""
    return _forward_mode(p, "linearize")


def wrap_mask(p: Program) -> Program:
    """``mask(f)`` with the logical size as an extra argument; the result's padding is zeroed."""
    name = f"n{p.masks}"
    in_shapes = [a.spec.mask_spec(name) for a in p.args]
    out_shape = map_specs(lambda s: s.mask_spec(name), p.out)
    masked = plait.mask(p.fn, in_shapes, out_shape)

    def fn(*args: Any) -> Tree:
        *padded, n = args
        out = masked(list(padded), {name: n})
        return map_specs(lambda s, x: _zero_padding(x, s, n, batched=False), p.out, out)

    def oracle(*args: Any) -> Tree:
        *padded, n = args
        size = _padded_size(p, padded)
        logical = [_fit(np.asarray(x), a.spec.marked, int(n)) for a, x in zip(p.args, padded)]
        return map_specs(lambda s, x: _fit(np.asarray(x), s.marked, size), p.out, p.oracle(*logical))

    def sample(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        logical = int(rng.integers(1, n + 1))
        args = p.sample(rng, logical)
        padded = [_fit(np.asarray(x), a.spec.marked, n, "random", rng) for a, x in zip(p.args, args)]
        return (*padded, np.asarray(logical, np.int32))

    return replace(
        p,
        name=f"mask({p.name})",
        fn=fn,
        oracle=oracle,
        args=(*p.args, Arg(SCALAR, is_float=False)),
        sample=sample,
        masks=p.masks + 1,
    )


def wrap_piles(p: Program) -> Program:
    """``vmap(f, in_axes=pile_axis, out_axes=pile_axis)`` on piles built from
    the arguments' data and a trailing ``lengths`` argument; arguments without
    a marked dimension are batched along axis 0, the result's padding is zeroed."""
    for a in p.args:
        if len(a.spec.marked) > 1:
            raise ValueError(f"piles: an argument of {p.name} has {len(a.spec.marked)} marked dimensions")
    ragged = [a.spec.marked[0] if a.spec.marked else None for a in p.args]
    in_axes = tuple(plait.pile_axis if r is not None else 0 for r in ragged)
    out_axes = map_specs(lambda s: plait.pile_axis if s.marked else 0, p.out)
    mapped = plait.vmap(p.fn, in_axes=in_axes, out_axes=out_axes)

    def fn(*args: Any) -> Tree:
        *xs, lengths = args
        size = next(x.shape[r + 1] for x, r in zip(xs, ragged) if r is not None)
        ins = [x if r is None else plait.Pile(x, lengths, ragged_axis=r) for x, r in zip(xs, ragged)]
        out = mapped(*ins)

        def unpile(s: Spec, o: Any) -> Array:
            if not s.marked:
                return o
            data = o.data
            ax = s.marked[0] + 1
            have = data.shape[ax]
            if not definitely_equal(have, size):  # the pile may be padded to its longest element
                data = lax.slice_in_dim(data, 0, min(have, size), axis=ax)
                pads = [(0, 0, 0)] * data.ndim
                pads[ax] = (0, size - data.shape[ax], 0)
                data = lax.pad(data, pnp.zeros((), data.dtype), pads)
            return _zero_padding(data, s.batched(PILE_SIZE), lengths, batched=True)

        return map_specs(unpile, p.out, out)

    def oracle(*args: Any) -> Tree:
        *xs, lengths = args
        size = _padded_size(p, [x[0] for x in xs])
        outs = []
        for b, n in enumerate(np.asarray(lengths)):
            element = [_fit(np.asarray(x[b]), a.spec.marked, int(n)) for a, x in zip(p.args, xs)]
            outs.append(
                map_specs(lambda s, o: _fit(np.asarray(o), s.marked, size), p.out, p.oracle(*element))
            )
        return _stack(outs, p.out)

    def sample(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
        if rng.random() < 0.25:
            lengths = np.full(PILE_SIZE, rng.integers(1, n + 1), np.int32)
        else:
            lengths = rng.integers(1, n + 1, PILE_SIZE).astype(np.int32)
        draws = []
        for m in lengths:
            args = p.sample(rng, int(m))
            draws.append([_fit(np.asarray(x), a.spec.marked, n, "random", rng) for a, x in zip(p.args, args)])
        return (*(np.stack(xs) for xs in zip(*draws)), lengths)

    return replace(
        p,
        name=f"piles({p.name})",
        fn=fn,
        oracle=oracle,
        args=(
            *(replace(a, spec=a.spec.batched(PILE_SIZE)) for a in p.args),
            Arg(_spec(PILE_SIZE), is_float=False),
        ),
        out=map_specs(lambda s: s.batched(PILE_SIZE), p.out),
        sample=sample,
    )


def wrap_invertible(p: Program) -> Program:
    """``invertible`` of ``f`` as a function of its state arguments (the
    parameters are closed over: constants of the invertible function)."""
    state = [i for i, a in enumerate(p.args) if a.state]

    def fn(*args: Any) -> Tree:
        def body(*s: Any) -> Tree:
            return p.fn(*_merge(args, state, s))

        return plait.invertible(body)(*(args[i] for i in state))

    return replace(p, name=f"invertible({p.name})", fn=fn)


def wrap_invertible_args(p: Program) -> Program:
    """``invertible(f)`` called with every argument, the parameters included."""

    def fn(*args: Any) -> Tree:
        return plait.invertible(p.fn)(*args)

    return replace(p, name=f"invertible_args({p.name})", fn=fn)


def wrap_custom_jvp(p: Program) -> Program:
    """``custom_jvp`` whose rule is the true JVP."""
    which = p.float_args

    def call(*args: Any) -> Tree:
        return p.fn(*args)

    f = plait.custom_jvp(call)
    use = RuleUse("custom_jvp", p.depth, [0])

    def rule(primals: Sequence[Any], tangents: Sequence[Any]) -> Tree:
        use.calls[0] += 1

        def closed(*d: Any) -> Tree:
            return p.fn(*_merge(primals, which, d))

        return plait.jvp(closed, tuple(primals[i] for i in which), tuple(tangents[i] for i in which))

    f.defjvp(rule)
    return replace(p, name=f"custom_jvp({p.name})", fn=f, rules=(*p.rules, use))


def wrap_custom_vjp(p: Program) -> Program:
    """``custom_vjp`` whose rule is the true VJP (residuals: the arguments)."""
    which = p.float_args

    def call(*args: Any) -> Tree:
        return p.fn(*args)

    f = plait.custom_vjp(call)
    use = RuleUse("custom_vjp", p.depth, [0])

    def fwd(*args: Any) -> tuple[Tree, tuple[Any, ...]]:
        return p.fn(*args), args

    def bwd(args: tuple[Any, ...], ct: Tree) -> tuple[Any, ...]:
        use.calls[0] += 1

        def closed(*d: Any) -> Tree:
            return p.fn(*_merge(args, which, d))

        _, pullback = plait.vjp(closed, *(args[i] for i in which))
        cts = dict(zip(which, pullback(ct)))
        return tuple(cts.get(i) for i in range(len(args)))

    f.defvjp(fwd, bwd)
    return replace(p, name=f"custom_vjp({p.name})", fn=f, rules=(*p.rules, use))


def wrap_custom_vmap(p: Program) -> Program:
    """``custom_vmap`` whose rule is ``vmap(f)``."""

    def call(*args: Any) -> Tree:
        return p.fn(*args)

    f = plait.custom_vmap(call)
    use = RuleUse("custom_vmap", p.depth, [0])

    def rule(axis_size: int, in_batched: Sequence[Any], *args: Any) -> tuple[Tree, bool]:
        use.calls[0] += 1
        in_axes = tuple(0 if b else None for b in in_batched)
        return plait.vmap(p.fn, in_axes=in_axes, axis_size=axis_size)(*args), True

    f.def_vmap(rule)
    return replace(p, name=f"custom_vmap({p.name})", fn=f, rules=(*p.rules, use))


#: The transformations, in the order of the matrix, each a wrapper ``Program -> Program``.
TRANSFORMS: dict[str, Callable[[Program], Program]] = {
    "jit": wrap_jit,
    "vmap": wrap_vmap,
    "grad": wrap_grad,
    "jvp": wrap_jvp,
    "linearize": wrap_linearize,
    "mask": wrap_mask,
    "invertible": wrap_invertible,
    "invertible_args": wrap_invertible_args,
    "custom_jvp": wrap_custom_jvp,
    "custom_vjp": wrap_custom_vjp,
    "custom_vmap": wrap_custom_vmap,
    "checkpoint": wrap_checkpoint,
    "piles": wrap_piles,
    "donation": wrap_donation,
}

#: Every ordered pair ``(outer, inner)``: ``outer(inner(program))``.
PAIRS: list[tuple[str, ...]] = [(a, b) for a in TRANSFORMS for b in TRANSFORMS]

#: The important triples ``(outer, middle, inner)``.
TRIPLES: list[tuple[str, ...]] = [
    tuple(t.split(" ∘ "))
    for t in [
        # per-example gradients, compiled; second order
        "jit ∘ vmap ∘ grad",
        "jit ∘ grad ∘ vmap",
        "vmap ∘ grad ∘ jit",
        "jvp ∘ grad ∘ jit",
        "grad ∘ grad ∘ checkpoint",
        "grad ∘ jvp ∘ vmap",
        "linearize ∘ grad ∘ vmap",
        # masking: compile once for every length, batch over lengths, differentiate
        "jit ∘ vmap ∘ mask",
        "jit ∘ grad ∘ mask",
        "vmap ∘ grad ∘ mask",
        "grad ∘ vmap ∘ mask",
        "jit ∘ mask ∘ grad",
        "jit ∘ mask ∘ vmap",
        "linearize ∘ mask ∘ vmap",
        "grad ∘ mask ∘ checkpoint",
        # piles
        "jit ∘ piles ∘ grad",
        "jit ∘ grad ∘ piles",
        "grad ∘ piles ∘ jit",
        "jit ∘ vmap ∘ piles",
        "jit ∘ piles ∘ checkpoint",
        "jit ∘ piles ∘ mask",
        # invertible reverse mode
        "jit ∘ grad ∘ invertible",
        "vmap ∘ grad ∘ invertible",
        "grad ∘ vmap ∘ invertible",
        "grad ∘ invertible ∘ vmap",
        "grad ∘ invertible ∘ jit",
        "grad ∘ mask ∘ invertible",
        "mask ∘ grad ∘ invertible",
        "vmap ∘ mask ∘ invertible",
        "grad ∘ piles ∘ invertible",
        "piles ∘ grad ∘ invertible",
        "jvp ∘ grad ∘ invertible",
        "grad ∘ grad ∘ invertible",
        "grad ∘ invertible ∘ grad",
        "grad ∘ invertible ∘ mask",
        "jit ∘ grad ∘ invertible_args",
        "vmap ∘ grad ∘ invertible_args",
        "grad ∘ jit ∘ invertible_args",
        "grad ∘ mask ∘ invertible_args",
        "grad ∘ piles ∘ invertible_args",
        "grad ∘ invertible_args ∘ custom_jvp",
        "grad ∘ invertible_args ∘ custom_vjp",
        # custom rules
        "jit ∘ grad ∘ custom_vjp",
        "vmap ∘ grad ∘ custom_vjp",
        "grad ∘ vmap ∘ custom_vjp",
        "jvp ∘ grad ∘ custom_vjp",
        "jvp ∘ vmap ∘ custom_vjp",
        "grad ∘ mask ∘ custom_vjp",
        "grad ∘ piles ∘ custom_vjp",
        "jit ∘ jvp ∘ custom_jvp",
        "vmap ∘ grad ∘ custom_jvp",
        "grad ∘ vmap ∘ custom_jvp",
        "grad ∘ mask ∘ custom_jvp",
        "grad ∘ custom_jvp ∘ custom_vjp",
        "jit ∘ vmap ∘ custom_vmap",
        "grad ∘ vmap ∘ custom_vmap",
        "vmap ∘ vmap ∘ custom_vmap",
        "vmap ∘ grad ∘ custom_vmap",
        "vmap ∘ custom_vmap ∘ mask",
        "vmap ∘ mask ∘ custom_vmap",
        "jvp ∘ mask ∘ custom_jvp",
        "vmap ∘ jvp ∘ custom_vmap",
        "grad ∘ piles ∘ custom_jvp",
        "piles ∘ custom_vmap ∘ grad",
        # rematerialisation
        "jit ∘ grad ∘ checkpoint",
        "vmap ∘ grad ∘ checkpoint",
        "grad ∘ checkpoint ∘ vmap",
        # donated inputs: a training step, and donation under other transformations
        "donation ∘ grad ∘ checkpoint",
        "donation ∘ vmap ∘ grad",
        "grad ∘ jit ∘ donation",
        "vmap ∘ grad ∘ donation",
    ]
]


def composition_name(comp: Sequence[str]) -> str:
    """``"grad ∘ vmap"`` for ``("grad", "vmap")``."""
    return " ∘ ".join(comp)


@functools.cache
def build(comp: tuple[str, ...], program: str) -> Program:
    """The program ``comp[0](comp[1](...(base)))``, built once."""
    p = BASE_PROGRAMS[program]
    for name in reversed(comp):
        p = replace(TRANSFORMS[name](p), depth=p.depth + 1)
    return p


# ---------------------------------------------------------------------------
# Expectations: unsupported compositions, known bugs, bypassed rules


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """A regular expression for a composition pattern.

    A pattern lists transformations outer to inner separated by ``∘``; each
    item is a name or alternatives (``jvp|linearize``), ``…`` (any
    transformations, possibly none) or ``…(no grad|vmap)`` (any except those).
    It matches a composition that contains such a chain (searched, so the
    pattern may start and end anywhere)."""
    parts = []
    for item in pattern.split(" ∘ "):
        if item == "…":
            parts.append(r"(?:\w+ ∘ )*")
        elif item.startswith("…(no ") and item.endswith(")"):
            parts.append(rf"(?:(?!(?:{item[5:-1]}) ∘ )\w+ ∘ )*")
        else:
            parts.append(rf"(?<!\w)(?:{item}) ∘ ")
    return re.compile("".join(parts))


class RuleBypassed(AssertionError):
    """A composition computed the right values without running a custom rule it should have used."""


@dataclass(frozen=True)
class Expectation:
    """What a composition (pattern) does instead of simply working.

    ``pattern`` is a composition pattern (:func:`compile_pattern`),
    ``programs`` restricts the entry to some programs (empty: all).  The
    composition raises ``error`` with a message matching the regular
    expression ``match``; ``reason`` says why.
    """

    pattern: str
    error: type[BaseException]
    match: str
    reason: str
    programs: tuple[str, ...] = ()

    def applies(self, comp: Sequence[str], program: str) -> bool:
        """Whether this entry covers ``comp`` on ``program``."""
        if self.programs and program not in self.programs:
            return False
        return compile_pattern(self.pattern).search(composition_name(comp) + " ∘ ") is not None


_CUSTOM_VJP_FORWARD = r"can't apply forward-mode differentiation \(jvp\) to a custom_vjp function"
_NOT_CONCRETE = "padded shapes must be concrete"
_PILE_NOT_CONCRETE = "a Pile's padded size must be a concrete integer"

#: Compositions that are not meaningful or not supported: they raise the documented error.
UNSUPPORTED: list[Expectation] = [
    Expectation(
        "jvp|linearize ∘ …(no grad) ∘ custom_vjp",
        TypeError,
        _CUSTOM_VJP_FORWARD,
        "forward mode through a custom_vjp function: it has a reverse-mode rule only (as in JAX); "
        "give it a custom_jvp rule. Forward-over-reverse (jvp ∘ grad ∘ custom_vjp) works.",
    ),
    Expectation(
        "mask ∘ … ∘ mask",
        ValueError,
        _NOT_CONCRETE,
        "mask inside mask: the inner mask's padded sizes are the outer one's logical (symbolic) sizes, "
        "and mask needs concrete padded shapes",
    ),
    Expectation(
        "piles ∘ … ∘ mask",
        ValueError,
        _NOT_CONCRETE,
        "mask inside vmap over piles: an element's padded size is its ragged length, not a concrete size",
    ),
    Expectation(
        "piles ∘ … ∘ piles",
        TypeError,
        _PILE_NOT_CONCRETE,
        "piles of piles: the elements of a pile are themselves ragged, and a pile needs a concrete "
        "padded size (one ragged axis per value)",
    ),
    Expectation(
        "mask ∘ … ∘ piles",
        TypeError,
        _PILE_NOT_CONCRETE,
        "piles inside mask: the data's ragged axis has a logical (symbolic) size there, and a Pile needs a "
        "concrete padded size; the Pile constructor says so",
    ),
    Expectation(
        "vmap ∘ mask ∘ custom_vmap",
        NotImplementedError,
        "its batching rule expects a batch of values of one logical shape",
        "a custom_vmap function inside mask, batched by a vmap that gives each element its own logical "
        "size: its rule expects a batch of one logical shape, so mask refuses rather than bypassing the rule",
    ),
    Expectation(
        "piles ∘ …(no vmap) ∘ custom_vmap",
        NotImplementedError,
        "custom_vmap_call is not supported on ragged values",
        "a custom_vmap function inside vmap over piles: its batching rule expects a rectangular batch, so "
        "vmap over piles refuses it rather than bypassing the rule",
    ),
]

#: Compositions that should work but fail: defects of the packages, each with a minimal
#: reproduction in the report of issue 7.  Their tests check the current symptom and xfail.
KNOWN_BUGS: list[Expectation] = []

#: Compositions that compute the right values but do not run a custom rule that a
#: transformation outside it would use without the transformation in between (documented
#: behaviour of the packages; a rule that is not the true derivative would change the result).
#: Empty: mask, vmap over piles and autodiff keep every custom rule, or refuse (UNSUPPORTED).
BYPASSED: list[Expectation] = []

#: Every table, in the order they are consulted, with the status its entries give.
TABLES: list[tuple[str, list[Expectation]]] = [
    ("bug", KNOWN_BUGS),
    ("unsupported", UNSUPPORTED),
    ("bypassed", BYPASSED),
]


def expectation(comp: Sequence[str], program: str) -> tuple[str, Expectation | None]:
    """``(status, entry)``: the first entry of :data:`TABLES` covering ``comp`` on
    ``program`` with its table's status, or ``("pass", None)``."""
    for status, table in TABLES:
        for entry in table:
            if entry.applies(comp, program):
                return status, entry
    return "pass", None


# ---------------------------------------------------------------------------
# Running one case


def _tolerance(p: Program) -> float:
    return 2e-4 if p.derivative else 1e-5


def _as_plait_input(a: Arg, x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32 if a.is_float else np.int32)


def _compare(got: Tree, want: Tree, specs: Tree, tol: float, where: str) -> None:
    got_leaves, want_leaves = _leaves(got, specs), _leaves(want, specs)
    for k, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g_np, w_np = np.asarray(g), np.asarray(w, np.float64)
        if g_np.shape != w_np.shape:
            raise AssertionError(f"{where}: output {k} has shape {g_np.shape}, the oracle {w_np.shape}")
        scale = max(1.0, float(np.max(np.abs(w_np), initial=0.0)))
        np.testing.assert_allclose(g_np, w_np, rtol=tol, atol=tol * scale, err_msg=f"{where}: output {k}")


#: The transformations that use a custom rule, by the rule's kind.
RULE_TRIGGERS = {
    "custom_jvp": {"jvp", "linearize", "grad"},
    "custom_vjp": {"grad"},
    "custom_vmap": {"vmap", "piles"},
}


def check_rules_used(comp: Sequence[str], p: Program) -> None:
    """Raise :class:`RuleBypassed` unless every custom rule that a transformation
    outside it needs (with no other custom function in between) has run."""
    for use in p.rules:
        at = len(comp) - 1 - use.depth
        for j in range(at - 1, -1, -1):
            if comp[j].startswith("custom_"):
                break
            if comp[j] in RULE_TRIGGERS[use.kind] and use.calls[0] == 0:
                raise RuleBypassed(
                    f"{composition_name(comp)}: the {use.kind} rule never ran although {comp[j]} is applied outside it"
                )


def check_case(comp: tuple[str, ...], program: str, seed: int | None = None) -> None:
    """Run ``comp`` on ``program`` and assert that it equals its oracle and
    that the custom rules it should use ran.

    When the outermost transformation is ``donation``, the first argument is a
    fresh device array that the call must delete."""
    p = build(comp, program)
    seed = zlib.crc32(f"{composition_name(comp)}/{program}".encode()) if seed is None else seed
    rng = np.random.default_rng(seed)
    args = [_as_plait_input(a, x) for a, x in zip(p.args, p.sample(rng, PADDED))]
    want = p.oracle(*(np.asarray(x, np.float64) if a.is_float else x for a, x in zip(p.args, args)))
    call_args: list[Any] = list(args)
    if comp[0] == "donation":
        call_args[0] = plait.device_put(args[0])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Some donated buffers were not usable", UserWarning)
        got = p.fn(*call_args)
    where = f"{composition_name(comp)} on {program}"
    _compare(got, want, p.out, _tolerance(p), where)
    if comp[0] == "donation":
        if not call_args[0].is_deleted():
            raise AssertionError(f"{where}: the donated input was not deleted")
        try:
            np.asarray(call_args[0])
        except plait.DeletedArrayError:
            pass
        else:
            raise AssertionError(f"{where}: reading the donated input did not raise DeletedArrayError")
    check_rules_used(comp, p)


@dataclass(frozen=True)
class Outcome:
    """The result of one composition on one program.

    ``status``: ``"pass"``; ``"unsupported"``, ``"bug"`` or ``"bypassed"`` when
    it behaved as its entry in :data:`TABLES` says; ``"fail"`` otherwise (an
    unexpected error, a wrong value, or an entry that no longer applies) with
    ``detail`` saying what happened."""

    comp: tuple[str, ...]
    program: str
    status: str
    detail: str = ""
    seconds: float = 0.0


def _describe(e: BaseException) -> str:
    text = str(e).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(e).__name__}: {first[:300]}"


def run_case(comp: tuple[str, ...], program: str) -> Outcome:
    """Run one case and classify it against :data:`TABLES`."""
    status, entry = expectation(comp, program)
    start = time.perf_counter()
    try:
        check_case(comp, program)
    except Exception as e:
        took = time.perf_counter() - start
        if entry is not None and isinstance(e, entry.error) and re.search(entry.match, str(e)):
            return Outcome(comp, program, status, entry.reason, took)
        return Outcome(comp, program, "fail", _describe(e), took)
    took = time.perf_counter() - start
    if entry is not None:
        return Outcome(comp, program, "fail", f"expected ({status}: {entry.reason}) but it works", took)
    return Outcome(comp, program, "pass", "", took)


@contextlib.contextmanager
def eager_backend(name: str) -> Iterator[None]:
    """Evaluate eagerly with ``"xla"`` (plait's default: op by op on the device)
    or ``"numpy"`` (core's reference implementations, much faster to start)."""
    if name not in ("xla", "numpy"):
        raise ValueError(f"eager_backend: expected 'xla' or 'numpy', got {name!r}")
    if name == "xla":
        yield
        return
    prev = plait_core.set_eager_backend(None)
    try:
        yield
    finally:
        plait_core.set_eager_backend(prev)


def run_matrix(
    comps: Sequence[tuple[str, ...]], programs: Sequence[str] | None = None, progress: bool = False
) -> list[Outcome]:
    """Every composition on every program (by default all of :data:`BASE_PROGRAMS`)."""
    names = list(programs or BASE_PROGRAMS)
    out: list[Outcome] = []
    for k, comp in enumerate(comps):
        out.extend(run_case(comp, prog) for prog in names)
        if progress:
            print(f"\r{k + 1}/{len(comps)} {composition_name(comp):<44}", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return out


# ---------------------------------------------------------------------------
# Reporting

_TAGS = {"unsupported": "unsupported", "bug": "bug", "bypassed": "custom rule bypassed", "fail": "FAILS"}


def cells(outcomes: Sequence[Outcome]) -> tuple[dict[tuple[str, ...], str], list[str]]:
    """One mark per composition and the numbered notes the marks refer to.

    ``✓``: it works on every program; ``✓n``: it computes the right values
    with the caveat of note n; ``✗n``: it raises the error of note n (on the
    programs the note names, when the cell also has a ``✓``)."""
    notes: list[str] = []
    groups: dict[tuple[str, ...], list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(o.comp, []).append(o)

    def note(text: str) -> int:
        if text not in notes:
            notes.append(text)
        return notes.index(text) + 1

    marks: dict[tuple[str, ...], str] = {}
    for comp, group in groups.items():
        bad = [o for o in group if o.status != "pass"]
        refs: list[str] = []
        for o in bad:
            same = [b.program for b in bad if (b.status, b.detail) == (o.status, o.detail)]
            scope = "" if len(same) == len(group) else f" (on {', '.join(same)})"
            ref = note(f"{_TAGS[o.status]}{scope}: {o.detail}")
            refs.append(f"{'✓' if o.status == 'bypassed' else '✗'}{ref}")
        if any(o.status == "pass" for o in group) and not any(r.startswith("✓") for r in refs):
            refs.insert(0, "✓")  # it works on the other programs
        marks[comp] = " ".join(dict.fromkeys(refs)) if refs else "✓"
    return marks, notes


def render(outcomes: Sequence[Outcome], markdown: bool, eager: str = "xla") -> str:
    """The pair table (rows: outer, columns: inner), the triples and the notes."""
    marks, notes = cells(outcomes)
    names = list(TRANSFORMS)
    lines: list[str] = []
    if markdown:
        lines += [
            "# The composition matrix",
            "",
            "Generated by `PYTHONPATH=tests python -m composition_matrix --markdown docs/composition_matrix.md` "
            f"(eager evaluation: {eager}). Each cell is the composition `row ∘ column`, that is "
            "`row(column(program))`, run on every program below and compared with an oracle derived "
            "from the program's NumPy oracle (finite differences for derivatives, a Python loop for "
            "`vmap` and piles, the logical slices for `mask`).",
            "",
            "- ✓: every program matches its oracle;",
            "- ✓n: the values match, with the caveat of note n;",
            "- ✗n: the composition raises the error of note n (a `✓` beside it: only on the programs "
            "the note names).",
            "",
            "Programs (each a reversible block, so that `invertible` applies): "
            + "; ".join(f"`{name}`: {text}" for name, text in PROGRAM_DOCS.items())
            + ".",
            "",
            "| outer ＼ inner | " + " | ".join(names) + " |",
            "|---|" + "---|" * len(names),
        ]
        lines += [f"| **{r}** | " + " | ".join(marks.get((r, c), " ") for c in names) + " |" for r in names]
    else:
        width = max(len(n) for n in names)
        lines.append("Rows: the outer transformation; columns: the inner one (row(column(program))).")
        lines.append("")
        lines.append(" " * (width + 1) + " ".join(f"{n[:11]:<11}" for n in names))
        lines += [f"{r:<{width}} " + " ".join(f"{marks.get((r, c), ''):<11}" for c in names) for r in names]
    triples = [c for c in marks if len(c) == 3]
    if triples:
        lines += ["", "## Triples" if markdown else "Triples:", ""]
        fmt = "- {}: {}" if markdown else "  {:<40} {}"
        lines += [fmt.format(composition_name(c), marks[c]) for c in triples]
    if notes:
        lines += ["", "## Notes" if markdown else "Notes:", ""]
        lines += [f"{k}. {n}" for k, n in enumerate(notes, 1)]
    clean = sum(1 for v in marks.values() if v == "✓")
    works = sum(1 for v in marks.values() if "✗" not in v)
    lines += [
        "",
        f"{works} of {len(marks)} compositions work on every program ({clean} without caveats).",
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the matrix and print it; exit status 1 if a composition fails unexpectedly."""
    parser = argparse.ArgumentParser(
        prog="python -m composition_matrix", description="The composition matrix of plait."
    )
    parser.add_argument("--markdown", metavar="PATH", help="also write the matrix as markdown to PATH")
    parser.add_argument("--no-triples", action="store_true", help="only the ordered pairs")
    parser.add_argument(
        "--only", metavar="PATTERN", help="only compositions matching a pattern, e.g. 'grad ∘ …'"
    )
    parser.add_argument("--program", action="append", choices=list(BASE_PROGRAMS), help="only this program")
    parser.add_argument(
        "--eager",
        choices=["xla", "numpy"],
        default="xla",
        help="the eager backend (default: xla, as installed)",
    )
    ns = parser.parse_args(argv)
    comps = PAIRS + ([] if ns.no_triples else TRIPLES)
    if ns.only:
        pattern = compile_pattern(ns.only)
        comps = [c for c in comps if pattern.search(composition_name(c) + " ∘ ")]
    start = time.perf_counter()
    with eager_backend(ns.eager):
        outcomes = run_matrix(comps, ns.program, progress=sys.stderr.isatty())
    print(render(outcomes, markdown=False, eager=ns.eager))
    print(f"{len(outcomes)} cases in {time.perf_counter() - start:.1f} s")
    if ns.markdown:
        with open(ns.markdown, "w", encoding="utf-8") as fh:
            fh.write(render(outcomes, markdown=True, eager=ns.eager))
    failed = [o for o in outcomes if o.status == "fail"]
    for o in failed:
        print(f"FAIL {composition_name(o.comp)} on {o.program}: {o.detail}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
