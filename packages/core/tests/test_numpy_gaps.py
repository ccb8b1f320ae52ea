"""plait_core.numpy: norms, unique, and indexing, roll and cumlogsumexp at
symbolic sizes, against NumPy, eager and staged (make_jaxpr + eval_jaxpr).

Values at symbolic sizes need an interpreter that binds the sizes (mask, vmap
over piles), so here they are checked by the shapes of the staged programs;
/work/main/tests/test_symbolic_numpy.py checks their values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_numpy_util import BF16, F32, I32, check, sample

import plait_core
import plait_core.numpy as pnp
from plait_core import lax
from plait_core.dims import symbolic_dims
from plait_core.errors import ConcretizationTypeError

# ---------------------------------------------------------------------------
# linalg.norm, vector_norm, matrix_norm


VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 0, 3, 0.5, -1, -2.5]
MATRIX_ORDS = [None, "fro", 1, -1, np.inf, -np.inf]


def test_linalg_is_reachable_as_an_attribute() -> None:
    assert pnp.linalg.norm is plait_core.numpy.norms.norm
    assert pnp.linalg.matmul is pnp.matmul


@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_vector_norms(ord: Any) -> None:
    x = sample((6,), F32, seed=1)
    x[2] = 0.0
    with np.errstate(divide="ignore"):
        want = np.linalg.norm(x.astype(np.float64), ord)
    check(lambda v: pnp.linalg.norm(v, ord), x, expected=want, dtype=F32, rtol=2e-5)
    t = sample((2, 3, 4), F32, seed=2)
    for axis in (0, -1, (1,)):
        for keepdims in (False, True):
            with np.errstate(divide="ignore"):
                want = np.linalg.norm(t.astype(np.float64), ord, axis, keepdims)
            check(lambda v, a=axis, k=keepdims: pnp.linalg.norm(v, ord, a, k), t, expected=want, rtol=2e-5)


@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norms(ord: Any) -> None:
    m = sample((3, 4), F32, seed=3)
    for axis in (None, (0, 1), (1, 0)):
        for keepdims in (False, True):
            want = np.linalg.norm(m.astype(np.float64), ord, axis, keepdims)
            check(lambda v, a=axis, k=keepdims: pnp.linalg.norm(v, ord, a, k), m, expected=want, rtol=2e-5)
    t = sample((2, 3, 4), F32, seed=4)
    for axis in ((0, 1), (2, 0), (-1, -2)):
        for keepdims in (False, True):
            want = np.linalg.norm(t.astype(np.float64), ord, axis, keepdims)
            check(lambda v, a=axis, k=keepdims: pnp.linalg.norm(v, ord, a, k), t, expected=want, rtol=2e-5)
    want = np.linalg.matrix_norm(t.astype(np.float64), ord="fro" if ord is None else ord)
    check(lambda v: pnp.linalg.matrix_norm(v, ord="fro" if ord is None else ord), t, expected=want, rtol=2e-5)


def test_norm_of_any_rank_without_ord_and_of_integers() -> None:
    t = sample((2, 3, 4), F32, seed=5)
    check(pnp.linalg.norm, t, expected=np.linalg.norm(t.astype(np.float64)), rtol=2e-5)
    check(lambda v: pnp.linalg.norm(v, keepdims=True), t,
          expected=np.linalg.norm(t.astype(np.float64), keepdims=True), rtol=2e-5)
    i = sample((5,), I32, seed=6)
    for ord in (None, 1, np.inf, 0):
        check(lambda v, o=ord: pnp.linalg.norm(v, o), i, expected=np.linalg.norm(i, ord), dtype=F32, rtol=2e-5)
    b = sample((4,), BF16, seed=7)
    check(pnp.linalg.norm, b, expected=np.linalg.norm(b.astype(np.float64)), dtype=BF16, rtol=2e-2)
    check(pnp.linalg.norm, np.zeros(0, F32), expected=0.0, dtype=F32)
    check(lambda v: pnp.linalg.norm(v, np.inf), np.zeros(0, F32), expected=0.0, dtype=F32)


@pytest.mark.parametrize("ord", [2, 1, 3, np.inf, -np.inf, 0], ids=str)
def test_vector_norm_over_several_axes(ord: Any) -> None:
    t = sample((2, 3, 4), F32, seed=8)
    for axis in (None, 1, (0, 2)):
        for keepdims in (False, True):
            want = np.linalg.vector_norm(t.astype(np.float64), axis=axis, keepdims=keepdims, ord=ord)
            check(lambda v, a=axis, k=keepdims: pnp.linalg.vector_norm(v, axis=a, keepdims=k, ord=ord), t,
                  expected=want, rtol=2e-5)


def test_norm_errors() -> None:
    m, v, t = np.ones((3, 3), F32), np.ones(3, F32), np.ones((2, 3, 4), F32)
    with pytest.raises(ValueError, match=r"linalg.norm: invalid order 'fro' for a vector norm"):
        pnp.linalg.norm(v, "fro")
    with pytest.raises(ValueError, match=r"linalg.norm: invalid order 3 for a matrix norm; use 'fro', 'nuc', 1, -1"):
        pnp.linalg.norm(m, 3)
    with pytest.raises(ValueError, match=r"linalg.norm: invalid order 'max' for a matrix norm"):
        pnp.linalg.norm(m, "max")
    with pytest.raises(ValueError, match=r"linalg.norm: with axis=None and ord=1 the input must be 1-D or 2-D, "
                                         r"got 3 dimensions"):
        pnp.linalg.norm(t, 1)
    with pytest.raises(ValueError, match=r"linalg.norm: axis=\(0, 1, 2\) names 3 axes"):
        pnp.linalg.norm(t, axis=(0, 1, 2))
    with pytest.raises(ValueError, match=r"linalg.norm: repeated axis in axis=\(0, 0\)"):
        pnp.linalg.norm(m, axis=(0, 0))
    with pytest.raises(ValueError, match=r"linalg.norm: axis 2 is out of bounds for an array of rank 2"):
        pnp.linalg.norm(m, axis=2)
    with pytest.raises(ValueError, match=r"linalg.matrix_norm: the input must have at least 2 dimensions, got 1"):
        pnp.linalg.matrix_norm(v)
    with pytest.raises(TypeError, match=r"linalg.norm: ord must be None, a string or a real number, got \[1\]"):
        pnp.linalg.norm(v, [1])
    with pytest.raises(TypeError, match=r"linalg.vector_norm: expected an array"):
        pnp.linalg.vector_norm("abc")


# ---------------------------------------------------------------------------
# unique


def _np_unique(x: np.ndarray, **kw: Any) -> tuple[np.ndarray, ...]:
    out = np.unique(x, return_index=True, return_inverse=True, return_counts=True, **kw)
    return tuple(out)


UNIQUE_INPUTS = {
    "ints_2d": np.array([[3, 1, 2], [3, 5, 1]], np.int32),
    "floats_nan": np.array([1.0, np.nan, 2.0, np.nan, 1.0, -0.0, 0.0], np.float32),
    "bools": np.array([True, False, True]),
    "one": np.array([4.5], np.float32),
    "empty": np.zeros(0, np.float32),
    "random": sample((4, 5), I32, seed=9),
}


@pytest.mark.parametrize("name", list(UNIQUE_INPUTS))
def test_unique_matches_numpy(name: str) -> None:
    x = UNIQUE_INPUTS[name]
    values, index, inverse, counts = _np_unique(x)
    # Without size= only eagerly (the input must be concrete); staged with size= the count.
    k = len(values)
    for call, want in [
        (lambda v, **kw: pnp.unique(v, **kw), values),
        (lambda v, **kw: pnp.unique(v, return_index=True, return_inverse=True, return_counts=True, **kw),
         (values, index, inverse, counts)),
        (lambda v, **kw: pnp.unique(v, return_counts=True, **kw), (values, counts)),
        (lambda v, **kw: pnp.unique(v, False, True, **kw), (values, inverse)),
    ]:
        eager = call(x)
        for e, w in zip(eager if isinstance(eager, tuple) else (eager,), want if isinstance(want, tuple) else (want,)):
            np.testing.assert_array_equal(np.asarray(e), w)
        check(lambda v, c=call: c(v, size=k), x, expected=want)
    assert np.asarray(pnp.unique(x)).dtype == x.dtype


def test_unique_nans_apart_with_equal_nan_false() -> None:
    x = UNIQUE_INPUTS["floats_nan"]
    values, index, inverse, counts = _np_unique(x, equal_nan=False)
    got = pnp.unique(x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    for g, w in zip(got, (values, index, inverse, counts)):
        np.testing.assert_array_equal(np.asarray(g), w)


def _padded_unique(x: np.ndarray, size: int, fill: Any) -> tuple[np.ndarray, ...]:
    """NumPy's unique cut or padded to ``size`` (values with ``fill``, or the
    smallest; indices with the smallest's; counts with 0)."""
    values, index, inverse, counts = _np_unique(x)
    k = min(size, len(values))
    out_v = np.full(size, values[0] if fill is None else fill, x.dtype)
    out_i = np.full(size, index[0], np.int32)
    out_c = np.zeros(size, np.int32)
    out_v[:k], out_i[:k], out_c[:k] = values[:k], index[:k], counts[:k]
    return out_v, out_i, inverse, out_c


@pytest.mark.parametrize("size", [0, 2, 4, 7])
@pytest.mark.parametrize("fill", [None, -9])
def test_unique_with_size_pads_or_cuts_and_stages(size: int, fill: Any) -> None:
    x = UNIQUE_INPUTS["ints_2d"]
    want = _padded_unique(x, size, fill)
    check(lambda v: pnp.unique(v, return_index=True, return_inverse=True, return_counts=True, size=size,
                               fill_value=fill), x, expected=want)
    closed = plait_core.make_jaxpr(lambda v: pnp.unique(v, size=size, fill_value=fill))(x)
    assert [a.shape for a in closed.out_avals] == [(size,)]
    f = np.array([2.0, np.nan, 2.0, 1.0], np.float32)
    check(lambda v: pnp.unique(v, size=size, fill_value=fill), f, expected=_padded_unique(f, size, fill)[0])


def test_unique_with_size_of_an_empty_input_needs_a_fill_value() -> None:
    check(lambda v: pnp.unique(v, size=2, fill_value=1.5), np.zeros(0, F32), expected=np.full(2, 1.5, F32))
    with pytest.raises(ValueError, match=r"unique: the input is empty, so padding it to size=2 needs a fill_value"):
        pnp.unique(np.zeros(0, F32), size=2)


def test_unique_errors() -> None:
    x = np.array([1, 2, 2], np.int32)
    with pytest.raises(ConcretizationTypeError, match=r"unique without size= \(the number of distinct values "
                                                      r"depends on the data; pass a static size="):
        plait_core.make_jaxpr(pnp.unique)(x)
    with pytest.raises(NotImplementedError, match=r"unique: axis=0 is not supported; only axis=None"):
        pnp.unique(x, axis=0)
    with pytest.raises(ValueError, match=r"unique: size must be non-negative, got -1"):
        pnp.unique(x, size=-1)
    with pytest.raises(ValueError, match=r"unique: fill_value must be a scalar"):
        pnp.unique(x, size=4, fill_value=np.zeros(2, np.int32))
    with pytest.raises(TypeError, match=r"unique: size must be an integer, got 2.5"):
        pnp.unique(x, size=2.5)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Symbolic sizes: what stages, with which shapes, and what is a clear error


N, M = symbolic_dims("n, m")


def _spec(*shape: Any) -> plait_core.ShapeDtypeStruct:
    return plait_core.ShapeDtypeStruct(shape, np.float32)


def _shapes(f: Any, *specs: Any) -> list[tuple[Any, ...]]:
    closed = plait_core.make_jaxpr(f)(*specs)
    plait_core.check_jaxpr(closed)
    return [a.shape for a in closed.out_avals]


def test_updates_and_negative_indices_stage_at_symbolic_sizes() -> None:
    # Each of these failed before: the position n - 1 went through int(), or a
    # negative constant index could not be wrapped against n.
    progs = [
        lambda v: v.at[-1].set(1.0),
        lambda v: v.at[-1].add(1.0, mode="clip"),
        lambda v: v.at[-2:].mul(2.0),
        lambda v: v.at[np.array([-1, 0])].max(0.0),
        lambda v: v.at[-1].get(mode="fill", fill_value=0.0) * v,
        lambda v: v[np.array([-1, 0])].sum() * v,
        lambda v: pnp.take(v, np.array([-1, -2]), axis=0, mode="clip").sum(0) * v,
        lambda v: pnp.take_along_axis(v, np.full((1, 3), -1), 0) * v,
    ]
    for f in progs:
        assert _shapes(f, _spec(N, 3)) == [(N, 3)]
    text = str(plait_core.make_jaxpr(lambda v: v.at[-1].set(1.0))(_spec(N)))
    assert "dim_as_value[dim=n]" in text and "scatter" in text


def test_roll_and_cumlogsumexp_stage_at_symbolic_sizes() -> None:
    assert _shapes(lambda v: pnp.roll(v, 2), _spec(N)) == [(N,)]
    assert _shapes(lambda v: pnp.roll(v, (1, -1), axis=(0, 1)), _spec(N, M)) == [(N, M)]
    assert _shapes(lambda v: pnp.roll(v, 1, axis=None), _spec(N, 3)) == [(N, 3)]
    assert "dynamic_slice" in str(plait_core.make_jaxpr(lambda v: pnp.roll(v, 3))(_spec(N)))
    for axis in (0, 1):
        for reverse in (False, True):
            spec = _spec(N, 3) if axis == 0 else _spec(3, N)
            closed = plait_core.make_jaxpr(lambda v, a=axis, r=reverse: lax.cumlogsumexp(v, a, r))(spec)
            assert "scan" in str(closed)
            assert closed.out_avals[0].shape == ((N, 3) if axis == 0 else (3, N))


def test_cumlogsumexp_at_a_static_size_keeps_the_log_depth_form() -> None:
    x = sample((5, 3), F32, seed=10)
    closed = plait_core.make_jaxpr(lambda v: lax.cumlogsumexp(v, 0))(x)
    assert "scan" not in str(closed)
    check(lambda v: lax.cumlogsumexp(v, 0), x, expected=np.logaddexp.accumulate(x.astype(np.float64), 0), rtol=1e-5)


@pytest.mark.parametrize("index, size, want", [
    (np.s_[::2], 2 * N, N), (np.s_[1::2], 2 * N, N), (np.s_[::-2], 2 * N, N), (np.s_[-2::-2], 2 * N, N),
    (np.s_[::3], 3 * N + 1, N + 1), (np.s_[2::2], 2 * N + 4, N + 1), (np.s_[::-1], N, N), (np.s_[1:-1], N + 2, N),
    (np.s_[-1:-3], N, 0), (np.s_[1:3:-1], N, 0),
], ids=str)
def test_strided_slices_of_symbolic_sizes_whose_length_is_a_polynomial(index: Any, size: Any, want: Any) -> None:
    assert _shapes(lambda v: v[index], _spec(size)) == [(want,)]
    assert _shapes(lambda v: v.at[index].set(0.0), _spec(size)) == [(size,)]


def test_strided_slices_whose_length_rounds_are_an_error() -> None:
    for index, size, length in ((np.s_[::2], N, r"ceil\(\(n\) / 2\)"), (np.s_[::3], 2 * N, r"ceil\(\(2\*n\) / 3\)")):
        with pytest.raises(TypeError, match=rf"slicing the symbolic dimension .* has length {length}, which is not "
                                            r"one: a symbolic dimension is an integer polynomial"):
            plait_core.make_jaxpr(lambda v, i=index: v[i])(_spec(size))


def test_take_with_mode_raise_needs_a_static_axis_length() -> None:
    with pytest.raises(TypeError, match=r"take with mode='raise' \(the axis length\) needs a concrete integer, "
                                        r"but got the symbolic dimension n"):
        plait_core.make_jaxpr(lambda v: pnp.take(v, np.array([0]), mode="raise"))(_spec(N))


def test_unique_with_size_stages_at_a_symbolic_size() -> None:
    closed = plait_core.make_jaxpr(lambda v: pnp.unique(v, size=3, return_inverse=True))(_spec(N, 2))
    assert [a.shape for a in closed.out_avals] == [(3,), (N, 2)]


def test_pad_median_diagonal_and_linspace_stage_at_symbolic_sizes() -> None:
    for mode in ("edge", "wrap", "reflect", "symmetric", "mean"):
        assert _shapes(lambda v, m=mode: pnp.pad(v, ((1, 2), (0, 0)), mode=m), _spec(N, 3)) == [(N + 3, 3)]
    assert _shapes(lambda v: pnp.median(v, axis=0), _spec(N, 3)) == [(3,)]
    assert _shapes(lambda v: pnp.diagonal(v, 1), _spec(N, N + 1)) == [(N,)]
    assert _shapes(lambda v: pnp.trace(v), _spec(N, N)) == [()]
    assert _shapes(lambda v: pnp.linspace(0.0, 1.0, v.shape[0]) * v, _spec(N)) == [(N,)]
    with pytest.raises(TypeError, match=r"diagonal: the offset 0 diagonal of a plane of shape \(n, 3\) has length "
                                        r"min\(n, 3\), which depends on the sizes"):
        plait_core.make_jaxpr(pnp.diagonal)(_spec(N, 3))


@pytest.mark.parametrize("mode", ["edge", "wrap", "reflect", "symmetric"])
def test_pad_modes_at_static_sizes_are_unchanged(mode: str) -> None:
    x = sample((4, 3), F32, seed=11)
    check(lambda v: pnp.pad(v, ((2, 1), (1, 3)), mode=mode), x, expected=np.pad(x, ((2, 1), (1, 3)), mode=mode))
    for n in (1, 2, 5):
        check(pnp.median, sample((n,), F32, seed=n), expected=np.median(sample((n,), F32, seed=n)))
