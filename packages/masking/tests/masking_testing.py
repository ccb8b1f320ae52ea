"""Shared test machinery: a masked function checked against the unpadded one.

A :class:`Case` is a function, its specs and padded input types, and several
logical environments.  :func:`check_case` makes padded inputs whose padding
holds garbage (NaN for floats), runs ``mask(fun)`` eagerly and staged (the
staged program is built once, with the logical sizes as inputs, and
evaluated at every environment), and compares the logical part of every
output with ``fun`` applied to the logical slices of the inputs, which NumPy
evaluates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from plait_core import ClosedJaxpr, ShapeDtypeStruct, check_jaxpr, eval_jaxpr, make_jaxpr
from plait_core.dims import SymbolicDim
from plait_core.jaxpr import sub_jaxprs
from plait_core.tree_util import tree_flatten, tree_leaves
from plait_masking import mask
from plait_masking.specs import Wildcard, parse_spec

Maker = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]


@dataclass
class Case:
    """``fun`` over inputs of the given specs, padded shapes and dtypes."""

    name: str
    fun: Callable[..., Any]
    in_shapes: list[str]
    out_shape: Any
    padded: list[tuple[tuple[int, ...], Any]]
    envs: list[dict[str, int]]
    makers: dict[int, Maker] = field(default_factory=dict)
    rtol: float = 1e-5

    def __repr__(self) -> str:
        return self.name


def normal(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Logical data of a dtype: small integers, booleans, or normal floats."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        low = 0 if dt.kind == "u" else -5
        return rng.integers(low, 6, shape).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def uniform(low: float, high: float) -> Maker:
    def make(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.uniform(low, high, shape).astype(np.float32)

    return make


def integers(low: int, high: int, dtype: Any = np.int32) -> Maker:
    def make(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.integers(low, high, shape).astype(dtype)

    return make


def spread(low: int, high: int) -> Maker:
    """Integers covering ``[low, high)`` evenly, in random order (indices that
    hit both edges and both out-of-bounds sides)."""

    def make(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        size = int(np.prod(shape))
        values = np.arange(low, high)
        if size < len(values):
            return rng.choice(values, size, replace=False).reshape(shape).astype(np.int32)
        return rng.permutation(np.resize(values, size)).reshape(shape).astype(np.int32)

    return make


def garbage(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any, nan: bool) -> np.ndarray:
    """What the padding holds: NaN (``nan``) or large values for floats, small
    integers (valid indices, so they are dangerous ones), random booleans."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(0 if dt.kind == "u" else -8, 9, shape).astype(dt)
    if nan:
        return np.full(shape, np.nan, dt)
    return rng.uniform(-1e3, 1e3, shape).astype(dt)


def logical_shape(spec: str, padded: tuple[int, ...], env: dict[str, int]) -> tuple[int, ...]:
    dims = parse_spec(spec)
    return tuple(p if isinstance(d, Wildcard) else int(d if type(d) is int else d.evaluate(env))  # type: ignore[union-attr]
                 for d, p in zip(dims, padded))


def padded_inputs(case: Case, env: dict[str, int], seed: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Padded inputs (garbage past the logical part) and their logical slices."""
    rng = np.random.default_rng(seed)
    padded, logical = [], []
    for i, (spec, (shape, dtype)) in enumerate(zip(case.in_shapes, case.padded)):
        lshape = logical_shape(spec, shape, env)
        data = case.makers[i](rng, shape) if i in case.makers else normal(rng, shape, dtype)
        data = np.asarray(data, dtype)
        full = np.array(garbage(rng, shape, dtype, nan=seed % 2 == 0))
        index = tuple(slice(0, n) for n in lshape)
        full[index] = data[index]
        padded.append(full)
        logical.append(full[index].copy())
    return padded, logical


def assert_logical_equal(got: Any, expected: Any, rtol: float, where: str) -> None:
    got_leaves = tree_leaves(got)
    exp_leaves = tree_leaves(expected)
    assert len(got_leaves) == len(exp_leaves), where
    for k, (g, e) in enumerate(zip(got_leaves, exp_leaves)):
        g, e = np.asarray(g), np.asarray(e)
        assert g.dtype == e.dtype, f"{where}: output {k} dtype {g.dtype} != {e.dtype}"
        assert g.ndim == e.ndim, f"{where}: output {k} rank {g.ndim} != {e.ndim}"
        assert all(a >= b for a, b in zip(g.shape, e.shape)), f"{where}: output {k} {g.shape} < {e.shape}"
        part = g[tuple(slice(0, n) for n in e.shape)]
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(part.astype(np.float64), e.astype(np.float64), rtol=rtol, atol=1e-6,
                                       err_msg=f"{where}: output {k}")
        else:
            np.testing.assert_array_equal(part, e, err_msg=f"{where}: output {k}")


def reference(fun: Callable[..., Any], args: Sequence[np.ndarray]) -> Any:
    """``fun`` on unpadded inputs, evaluated by core's NumPy implementations
    (staged first, so operators follow plait's promotion rules, not NumPy's)."""
    closed, shapes = make_jaxpr(fun, return_shape=True)(*args)
    from plait_core.tree_util import tree_structure, tree_unflatten

    outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return tree_unflatten(tree_structure(shapes), [np.asarray(o) for o in outs])


def check_case(case: Case) -> None:
    """The masked function equals the unpadded one on the logical part, eagerly
    and staged once for every environment."""
    masked = mask(case.fun, case.in_shapes, case.out_shape)
    staged: ClosedJaxpr | None = None
    names = sorted(case.envs[0])
    for k, env in enumerate(case.envs):
        padded, logical = padded_inputs(case, env, seed=k)
        expected = reference(case.fun, logical)
        where = f"{case.name} at {env}"
        got = masked(padded, {n: np.int32(v) for n, v in env.items()})
        assert_logical_equal(got, expected, case.rtol, f"{where} (eager)")
        sizes = [np.int32(env[n]) for n in names]
        if staged is None:
            staged = make_jaxpr(lambda xs, ns: masked(xs, dict(zip(names, ns))))(padded, sizes)
            check_jaxpr(staged)
        flat, _ = tree_flatten((padded, sizes))
        outs = eval_jaxpr(staged.jaxpr, staged.consts, *flat)
        _, out_tree = tree_flatten(got)
        from plait_core.tree_util import tree_unflatten

        assert_logical_equal(tree_unflatten(out_tree, outs), expected, case.rtol, f"{where} (staged)")


def primitives_of(case: Case) -> set[str]:
    """The primitives ``case.fun`` binds on its logical (symbolic) inputs,
    sub-jaxprs included."""
    args = []
    for spec, (shape, dtype) in zip(case.in_shapes, case.padded):
        dims = tuple(p if isinstance(d, Wildcard) else d for d, p in zip(parse_spec(spec), shape))
        args.append(ShapeDtypeStruct(dims, dtype))
    closed = make_jaxpr(case.fun)(*args)
    names: set[str] = set()
    stack = [closed.jaxpr]
    while stack:
        j = stack.pop()
        for eqn in j.eqns:
            names.add(eqn.primitive.name)
            stack.extend(sub_jaxprs(eqn))
    return names


def is_symbolic_shape(shape: Sequence[Any]) -> bool:
    return any(isinstance(d, SymbolicDim) for d in shape)
