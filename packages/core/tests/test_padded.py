"""Core's padded semantics on its own: a NumPy environment of concrete
logical sizes runs every padded rule eagerly, and the logical part of each
result equals the primitive applied to the logical slices (whatever the
padding holds); the exact ops layer binds exactly what it says."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_core import ops
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, SymbolicDim
from plait_core.padded import PaddedEnv, padded_rules
from plait_core.primitives import linalg as la
from plait_core.primitives import reductions as red

N, M = SymbolicDim.var("n"), SymbolicDim.var("m")


class NumpyEnv(PaddedEnv):
    """Logical sizes given as Python ints; padded sizes fixed."""

    def __init__(self, padded: dict[str, int], logical: dict[str, int]) -> None:
        self.padded, self.logical = padded, logical

    def is_padded(self, d: Dim) -> bool:
        return isinstance(d, SymbolicDim) and not d.is_constant

    def padded_dim(self, d: Dim) -> int:
        return int(d.evaluate(self.padded)) if isinstance(d, SymbolicDim) else int(d)

    def value(self, d: Dim, dtype: Any = None) -> Any:
        value = int(d.evaluate(self.logical)) if isinstance(d, SymbolicDim) else int(d)
        return np.asarray(value, dtype or np.int32)


ENV = NumpyEnv({"n": 6, "m": 5}, {"n": 4, "m": 2})


def _padded(rng: np.random.Generator, shape: tuple[int, ...], dtype: Any = np.float32) -> np.ndarray:
    x = rng.standard_normal(shape).astype(dtype) if np.dtype(dtype).kind == "f" else rng.integers(-9, 9, shape).astype(dtype)
    return x


def _logical(x: np.ndarray) -> np.ndarray:
    return x[:4, :2] if x.ndim == 2 else x[:4]


@pytest.mark.parametrize("prim, np_fun", [
    (red.reduce_sum_p, lambda x, a: x.sum(a)), (red.reduce_prod_p, lambda x, a: x.prod(a)),
    (red.reduce_max_p, lambda x, a: x.max(a)), (red.reduce_min_p, lambda x, a: x.min(a)),
])  # fmt: skip
@pytest.mark.parametrize("axes", [(0,), (1,), (0, 1)])
def test_reductions_ignore_the_padding(prim: Any, np_fun: Any, axes: tuple[int, ...]) -> None:
    x = _padded(np.random.default_rng(0), (6, 5))
    x[4:, :] = np.nan  # the padding holds anything
    x[:, 2:] = np.inf
    aval = ShapedArray((N, M), np.dtype(np.float32))
    out = np.asarray(padded_rules[prim](ENV, [x], [aval], axes=axes))
    want = np_fun(_logical(x).astype(np.float64), axes)
    keep = [slice(0, 4), slice(0, 2)]
    logical_out = out[tuple(k for i, k in enumerate(keep) if i not in axes)]
    np.testing.assert_allclose(logical_out, want, rtol=1e-5)


@pytest.mark.parametrize("prim, np_fun", [(red.reduce_and_p, np.bitwise_and.reduce), (red.reduce_or_p, np.bitwise_or.reduce)])
def test_bitwise_reductions(prim: Any, np_fun: Any) -> None:
    x = _padded(np.random.default_rng(1), (6,), np.int32)
    out = padded_rules[prim](ENV, [x], [ShapedArray((N,), np.dtype(np.int32))], axes=(0,))
    assert int(out) == int(np_fun(x[:4]))


@pytest.mark.parametrize("prim, np_fun", [(red.argmax_p, np.argmax), (red.argmin_p, np.argmin)])
def test_arg_reductions(prim: Any, np_fun: Any) -> None:
    x = np.array([1.0, 3.0, 3.0, -2.0, 9.0, -9.0], np.float32)
    out = padded_rules[prim](ENV, [x], [ShapedArray((N,), np.dtype(np.float32))], axes=(0,), index_dtype=np.dtype(np.int32))
    assert int(out) == int(np_fun(x[:4]))


@pytest.mark.parametrize("prim, np_fun", [
    (red.cumsum_p, np.cumsum), (red.cumprod_p, np.cumprod), (red.cummax_p, np.maximum.accumulate),
    (red.cummin_p, np.minimum.accumulate),
])  # fmt: skip
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative(prim: Any, np_fun: Any, reverse: bool) -> None:
    x = _padded(np.random.default_rng(2), (6,))
    x[4:] = 1e6
    out = np.asarray(padded_rules[prim](ENV, [x], [ShapedArray((N,), np.dtype(np.float32))], axis=0, reverse=reverse))
    want = np_fun(x[:4][::-1])[::-1] if reverse else np_fun(x[:4])
    np.testing.assert_allclose(out[:4], want, rtol=1e-5)


def test_sort_puts_the_padding_last() -> None:
    x = np.array([3.0, np.nan, -1.0, 2.0, -50.0, -60.0], np.float32)
    v = np.arange(6, dtype=np.int32)
    avals = [ShapedArray((N,), np.dtype(np.float32)), ShapedArray((N,), np.dtype(np.int32))]
    keys, vals = padded_rules[red.sort_p](ENV, [x, v], avals, dimension=0, is_stable=True, num_keys=1)
    np.testing.assert_array_equal(np.asarray(keys)[:4], [-1.0, 2.0, 3.0, np.nan])
    np.testing.assert_array_equal(np.asarray(vals)[:4], [2, 3, 0, 1])


def test_dot_general_zeroes_a_contracted_padded_axis() -> None:
    rng = np.random.default_rng(3)
    a, b = _padded(rng, (5, 6)), _padded(rng, (6, 3))
    a[:, 4:] = np.inf
    b[4:, :] = np.nan
    avals = [ShapedArray((5, N), np.dtype(np.float32)), ShapedArray((N, 3), np.dtype(np.float32))]
    out = padded_rules[la.dot_general_p](
        ENV, [a, b], avals, dimension_numbers=(((1,), (0,)), ((), ())), precision=None, preferred_element_type=None
    )
    np.testing.assert_allclose(np.asarray(out), a[:, :4] @ b[:4], rtol=1e-5)


def test_every_reduction_has_an_identity() -> None:
    for p in (red.reduce_sum_p, red.reduce_prod_p, red.reduce_max_p, red.reduce_min_p, red.reduce_and_p,
              red.reduce_or_p, red.argmax_p, red.argmin_p, red.cumsum_p, red.cumprod_p, red.cummax_p, red.cummin_p):
        assert p.identity is not None
    assert red.reduce_max_p.identity(np.dtype(np.int8)) == -128  # type: ignore[misc]
    assert red.reduce_min_p.identity(np.dtype(np.float32)) == np.inf  # type: ignore[misc]
    assert bool(red.reduce_and_p.identity(np.dtype(bool))) is True  # type: ignore[misc]
    assert red.sort_p.identity is None


def test_fill_and_exact_ops() -> None:
    x = np.arange(6, dtype=np.float32)
    filled = ENV.fill(x, ShapedArray((N,), np.dtype(np.float32)), None, -1.0)
    np.testing.assert_array_equal(np.asarray(filled), [0, 1, 2, 3, -1, -1])
    assert ENV.fill(x, ShapedArray((6,), np.dtype(np.float32)), None, -1.0) is x  # nothing padded
    np.testing.assert_array_equal(np.asarray(ops.select(x > 2, x, -x)), np.where(x > 2, x, -x))
    assert ops.reshape(x, (6,)) is x and ops.transpose(x, (0,)) is x and ops.reduce_sum(x, ()) is x
    np.testing.assert_array_equal(np.asarray(ops.full((2, 3), 7, np.dtype(np.int32))), np.full((2, 3), 7, np.int32))
    np.testing.assert_array_equal(np.asarray(ops.window(x, 0, np.int32(4), 3)), [4, 5, 0])


def test_rev_and_pad_keep_the_logical_part_in_front() -> None:
    from plait_core.primitives import structural as st

    x = np.array([[1, 2, 9, 9, 9], [3, 4, 9, 9, 9], [5, 6, 9, 9, 9], [7, 8, 9, 9, 9], [9] * 5, [9] * 5], np.float32)
    aval = ShapedArray((N, M), np.dtype(np.float32))  # logical 4 x 2 in a 6 x 5 padding
    out = np.asarray(padded_rules[st.rev_p](ENV, [x], [aval], dimensions=(0, 1)))
    np.testing.assert_array_equal(out[:4, :2], x[:4, :2][::-1, ::-1])
    config = ((1, 2, 0), (0, 1, 1))
    padded = np.asarray(padded_rules[st.pad_p](ENV, [x, np.float32(-1)], [aval, ShapedArray((), np.dtype(np.float32))],
                                               padding_config=config))  # fmt: skip
    want = np.asarray(np.pad(np.insert(x[:4, :2], 1, -1, axis=1), ((1, 2), (0, 1)), constant_values=-1))
    np.testing.assert_array_equal(padded[: want.shape[0], : want.shape[1]], want)


def test_passthrough_rules_pad_their_size_params() -> None:
    from plait_core.primitives import structural as st

    out = padded_rules[st.broadcast_in_dim_p](
        ENV, [np.float32(3)], [ShapedArray((), np.dtype(np.float32))], shape=(N, 2), broadcast_dimensions=()
    )
    np.testing.assert_array_equal(np.asarray(out), np.full((6, 2), 3, np.float32))
    assert padded_rules.is_passthrough(st.broadcast_in_dim_p) and not padded_rules.is_passthrough(st.rev_p)
