"""Operators and methods installed on tracers by plait_core.numpy."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import pytest
from test_numpy_util import F32, I32, check_staged, sample

import plait_core
import plait_core.numpy as pnp
from plait_core.errors import ConcretizationTypeError
from plait_core.numpy import install_array_methods

ARITH = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod, operator.pow]
BITS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]
COMPARE = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]


def _oracle(op: Any, a: Any, b: Any) -> Any:
    with np.errstate(all="ignore"):
        return op(np.asarray(a, np.float64), np.asarray(b, np.float64))


@pytest.mark.parametrize("op", ARITH + COMPARE, ids=lambda o: o.__name__)
@pytest.mark.parametrize("other", ["array", "scalar", "numpy"])
def test_binary_operators_both_ways(op: Any, other: str) -> None:
    x = sample((2, 3), F32, low=0.5, high=3)
    y = sample((3,), F32, seed=1, low=0.5, high=3)
    if other == "array":
        check_staged(lambda a, b: op(a, b), x, y, expected=_oracle(op, x, y))
        check_staged(lambda a, b: op(b, a), x, y, expected=_oracle(op, y, x))
    elif other == "scalar":
        check_staged(lambda a: op(a, 2), x, expected=_oracle(op, x, 2), dtype=bool if op in COMPARE else F32)
        check_staged(lambda a: op(2.0, a), x, expected=_oracle(op, 2.0, x))
    else:
        check_staged(lambda a: op(a, y), x, expected=_oracle(op, x, y))
        check_staged(lambda a: op(y, a), x, expected=_oracle(op, y, x))


@pytest.mark.parametrize("op", BITS, ids=lambda o: o.__name__)
def test_bitwise_operators(op: Any) -> None:
    x = sample((2, 3), I32, low=0, high=20)
    y = np.array([1, 2, 3], np.int32)
    check_staged(lambda a, b: op(a, b), x, y, expected=op(x, y), dtype=I32)
    check_staged(lambda a: op(a, 3), x, expected=op(x, 3), dtype=I32)
    check_staged(lambda a: op(5, a), x, expected=op(5, x), dtype=I32)


def test_unary_operators_and_matmul() -> None:
    x = sample((3, 3), F32)
    i = sample((3,), I32)
    check_staged(lambda a: (-a, +a, abs(a)), x, expected=(-x, x, np.abs(x)))
    check_staged(lambda a: ~a, i, expected=~i)
    check_staged(lambda a: ~(a > 0), x, expected=~(x > 0))
    check_staged(lambda a: a @ a, x, expected=x @ x, rtol=1e-5, atol=1e-5)
    check_staged(lambda a: x @ a, x, expected=x @ x, rtol=1e-5, atol=1e-5)
    check_staged(lambda a, b: divmod(a, b), i, np.int32(2), expected=divmod(i, 2))
    check_staged(lambda a: divmod(7, a), np.int32(3), expected=divmod(7, 3))
    check_staged(lambda a: round(a, 1), x, expected=np.round(x, 1))


def test_operators_promote_like_jax() -> None:
    x16 = np.ones(3, np.float16)
    closed = plait_core.make_jaxpr(lambda a: a * 2.5 + 1)(x16)
    assert closed.out_avals[0].dtype == np.float16
    closed = plait_core.make_jaxpr(lambda a: a / 2)(np.ones(3, np.int32))
    assert closed.out_avals[0].dtype == np.float32
    closed = plait_core.make_jaxpr(lambda a: 2 * a)(np.ones(3, np.int8))
    assert closed.out_avals[0].dtype == np.int8
    assert "mul 2 a" in str(closed)  # the scalar stays a literal, not a broadcast


def test_unsupported_operands_return_not_implemented() -> None:
    def f(a: Any) -> Any:
        return a + "text"

    with pytest.raises(TypeError, match="unsupported operand type"):
        plait_core.make_jaxpr(f)(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"array operators do not accept a list; convert it with plait.numpy.asarray"):
        plait_core.make_jaxpr(lambda a: a * [1, 2])(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="array operators do not accept a tuple"):
        plait_core.make_jaxpr(lambda a: (1, 2) + a)(np.ones(2, np.float32))
    with pytest.raises(TypeError, match="pow\\(\\) with a modulus is not supported"):
        plait_core.make_jaxpr(lambda a: pow(a, 2, 3))(np.ones(2, np.int32))


def test_reduction_and_shape_methods() -> None:
    x = sample((2, 3, 4), F32)
    check_staged(lambda a: (a.sum(), a.sum(1), a.mean(axis=(0, 2)), a.var(1, ddof=1), a.std(), a.max(0), a.min(-1),
                            a.prod(2), a.argmax(1), a.argmin(), a.cumsum(2), a.cumprod(), a.ptp(0)), x,
                 expected=(x.sum(), x.sum(1), x.mean(axis=(0, 2)), x.var(1, ddof=1), x.std(), x.max(0), x.min(-1),
                           x.prod(2), x.argmax(1), x.argmin(), x.cumsum(2), x.cumprod(), np.ptp(x, 0)),
                 rtol=1e-4, atol=1e-4)
    check_staged(lambda a: ((a > 0).any(), (a > -5).all(1)), x, expected=((x > 0).any(), (x > -5).all(1)))
    check_staged(lambda a: (a.reshape(6, 4), a.reshape((4, -1)), a.reshape(shape=(24,)), a.ravel(), a.flatten(),
                            a.transpose(), a.transpose(1, 0, 2), a.transpose((2, 0, 1)), a.swapaxes(0, 2),
                            a[None].squeeze(0), a.T, a.mT), x,
                 expected=(x.reshape(6, 4), x.reshape(4, -1), x.ravel(), x.ravel(), x.flatten(), x.T,
                           x.transpose(1, 0, 2), x.transpose(2, 0, 1), x.swapaxes(0, 2), x, x.T, x.swapaxes(-1, -2)))
    check_staged(lambda a: (a.astype(np.int32), a.astype(pnp.float16), a.clip(-1, 1), a.round(1), a.repeat(2, 0),
                            a.take(np.array([0, 2]), 1), a.sort(1), a.argsort(-1), a.conj(), a.real, a.imag,
                            a[0].diagonal(), a[0].trace(), a[0].dot(a[0].T)), x,
                 expected=(x.astype(np.int32), x.astype(np.float16), x.clip(-1, 1), x.round(1), x.repeat(2, 0),
                           x.take([0, 2], 1), np.sort(x, 1), np.argsort(x, -1), x, x, np.zeros_like(x),
                           x[0].diagonal(), x[0].trace(), x[0] @ x[0].T), rtol=1e-4, atol=1e-3)


def test_at_and_getitem_on_tracers() -> None:
    x = sample((3, 4), F32)
    check_staged(lambda a: (a[1], a[:, ::2], a[np.array([0, 2])], a.at[0, 1].set(9.0), a.at[:, 0].add(1.0),
                            a.at[1].multiply(2.0), a.at[2, :2].min(0.0), a.at[0].max(1.0), a.at[1:].get()), x,
                 expected=(x[1], x[:, ::2], x[[0, 2]], _set(x, (0, 1), 9.0), _apply(x, (slice(None), 0), lambda v: v + 1),
                           _apply(x, 1, lambda v: v * 2), _apply(x, (2, slice(None, 2)), lambda v: np.minimum(v, 0)),
                           _apply(x, 0, lambda v: np.maximum(v, 1)), x[1:]))


def _set(x: np.ndarray, idx: Any, value: Any) -> np.ndarray:
    y = x.copy()
    y[idx] = value
    return y


def _apply(x: np.ndarray, idx: Any, fn: Any) -> np.ndarray:
    y = x.copy()
    y[idx] = fn(y[idx])
    return y


def test_concrete_only_methods_raise_under_staging() -> None:
    with pytest.raises(ConcretizationTypeError, match=r"item\(\) needs a concrete value"):
        plait_core.make_jaxpr(lambda a: a.item())(np.ones((), np.float32))
    with pytest.raises(ConcretizationTypeError, match=r"tolist\(\) needs a concrete value"):
        plait_core.make_jaxpr(lambda a: a.tolist())(np.ones(2, np.float32))
    with pytest.raises(TypeError, match=r"reshape\(\) got unexpected keyword arguments \['newshape'\]"):
        plait_core.make_jaxpr(lambda a: a.reshape(newshape=(2,)))(np.ones(2, np.float32))


def test_install_on_another_class() -> None:
    class Box:
        """A minimal array type: wraps a NumPy array and exposes its aval."""

        def __init__(self, value: np.ndarray) -> None:
            self.value = value

        @property
        def aval(self) -> Any:
            return plait_core.ShapedArray(self.value.shape, self.value.dtype)

        @property
        def shape(self) -> Any:
            return self.value.shape

        @property
        def ndim(self) -> int:
            return self.value.ndim

        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return self.value

    plait_core.register_array_type(Box, lambda b: b.aval, lambda b: b.value)
    install_array_methods(Box)
    b = Box(np.arange(4, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(b + 1), np.arange(4) + 1)  # type: ignore[operator]
    np.testing.assert_array_equal(np.asarray(b.sum()), 6.0)  # type: ignore[attr-defined]
    np.testing.assert_array_equal(np.asarray(b[1:3]), [1.0, 2.0])  # type: ignore[index]
    np.testing.assert_array_equal(np.asarray(b.at[0].set(5.0)), [5.0, 1.0, 2.0, 3.0])  # type: ignore[attr-defined]
    np.testing.assert_array_equal(np.asarray(2 * b), [0.0, 2.0, 4.0, 6.0])  # type: ignore[operator]
