"""The oracle of vmap tests: a Python loop over the batch.

``check_against_loop(fun, gens, axes)`` builds batched arguments from
per-element generators, runs ``vmap`` (nested once per level of ``axes``)
and compares with ``fun`` applied to every element in a Python loop and the
results stacked.  It also stages the vmapped function, type-checks the jaxpr
and evaluates it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import plait_core as pc
from plait_batching import vmap
from plait_core.tree_util import tree_flatten

Gen = Callable[[np.random.Generator], Any]
Axes = Sequence[int | None]  # one entry per argument, for one level of vmap


def arr(shape: tuple[int, ...], dtype: Any = np.float32, lo: float = -3, hi: float = 3) -> Gen:
    """A generator of arrays of ``shape`` and ``dtype`` with values in [lo, hi)."""
    dt = np.dtype(dtype)

    def gen(rng: np.random.Generator) -> np.ndarray:
        if dt == np.bool_:
            return rng.random(shape) < 0.5
        if np.issubdtype(dt, np.integer):
            return rng.integers(int(lo), int(hi), shape).astype(dt)
        return rng.uniform(lo, hi, shape).astype(dt)

    return gen


def perm(n: int, k: int) -> Gen:
    """Index vectors (shape (k, 1), int32) of ``k`` distinct indices below ``n``."""

    def gen(rng: np.random.Generator) -> np.ndarray:
        return rng.permutation(n)[:k].astype(np.int32).reshape(k, 1)

    return gen


def batched_value(gen: Gen, rng: np.random.Generator, axes: Sequence[int | None], sizes: Sequence[int]) -> Any:
    """A value for one argument: ``axes[0]`` is its axis at the outermost vmap
    (``None``: not batched there), and so on inwards."""
    if not axes:
        return gen(rng)
    if axes[0] is None:
        return batched_value(gen, rng, axes[1:], sizes[1:])
    elems = [batched_value(gen, rng, axes[1:], sizes[1:]) for _ in range(sizes[0])]
    return np.stack(elems, axis=axes[0])


def loop(fun: Callable[..., Any], args: Sequence[Any], levels: Sequence[Axes], sizes: Sequence[int]) -> list[np.ndarray]:
    """``fun`` applied element by element (nested loops), results stacked in front."""
    if not levels:
        leaves, _ = tree_flatten(fun(*args))
        return [np.asarray(x) for x in leaves]
    axes = levels[0]
    per = []
    for b in range(sizes[0]):
        elem = [a if ax is None else np.take(a, b, axis=ax) for a, ax in zip(args, axes)]
        per.append(loop(fun, elem, levels[1:], sizes[1:]))
    return [np.stack([p[k] for p in per]) for k in range(len(per[0]))]


def nested_vmap(fun: Callable[..., Any], levels: Sequence[Axes]) -> Callable[..., Any]:
    """``vmap(vmap(fun, levels[1]), levels[0])`` and so on."""
    f = fun
    for axes in reversed(levels):
        f = vmap(f, in_axes=tuple(axes))
    return f


def assert_same(actual: Any, expected: np.ndarray, what: str) -> None:
    a = np.asarray(actual)
    assert a.shape == expected.shape, f"{what}: shape {a.shape} != {expected.shape}"
    assert a.dtype == expected.dtype, f"{what}: dtype {a.dtype} != {expected.dtype}"
    if np.issubdtype(expected.dtype, np.inexact) or expected.dtype.kind == "V" or a.dtype.name in ("bfloat16",):
        wide = np.complex128 if np.iscomplexobj(expected) else np.float64  # (complex: both parts compared)
        np.testing.assert_allclose(
            a.astype(wide), expected.astype(wide), rtol=2e-5, atol=1e-5, equal_nan=True, err_msg=what
        )
    else:
        np.testing.assert_array_equal(a, expected, err_msg=what)


def check_against_loop(
    fun: Callable[..., Any],
    gens: Sequence[Gen],
    levels: Sequence[Axes],
    sizes: Sequence[int] = (3, 2),
    *,
    seed: int = 0,
    staged: bool = True,
) -> None:
    """vmap (nested per level of ``levels``) equals the loop, eagerly and staged."""
    rng = np.random.default_rng(seed)
    sizes = sizes[: len(levels)]
    args = [batched_value(g, rng, [lv[i] for lv in levels], sizes) for i, g in enumerate(gens)]
    expected = loop(fun, args, levels, sizes)
    mapped = nested_vmap(fun, levels)
    got, _ = tree_flatten(mapped(*args))
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert_same(g, e, f"eager output {k}")
    if staged:
        closed = pc.make_jaxpr(mapped)(*args)
        pc.check_jaxpr(closed)
        outs = pc.eval_jaxpr(closed.jaxpr, closed.consts, *tree_flatten(args)[0])
        for k, (g, e) in enumerate(zip(outs, expected)):
            assert_same(g, e, f"staged output {k}")


def modes(nargs: int) -> list[tuple[str, list[Axes]]]:
    """The in_axes patterns every case is checked with."""
    out: list[tuple[str, list[Axes]]] = [("front", [[0] * nargs]), ("last", [[-1] * nargs])]
    if nargs > 1:
        for i in range(nargs):
            out.append((f"only{i}", [[0 if j == i else None for j in range(nargs)]]))
    out.append(("nested", [[0] * nargs, [-1] * nargs]))
    if nargs > 1:
        out.append(("nested_mixed", [[0] + [None] * (nargs - 1), [None] * (nargs - 1) + [0]]))
    return out
