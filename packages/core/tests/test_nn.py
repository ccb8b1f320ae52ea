"""plait_core.nn against NumPy formulas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import nn

X = np.linspace(-30, 30, 25).astype(np.float32)


def _np_sigmoid(x: np.ndarray) -> np.ndarray:
    return np.where(x >= 0, 1 / (1 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1 + np.exp(-np.abs(x))))


CASES: list[tuple[Callable[[Any], Any], Callable[[np.ndarray], np.ndarray]]] = [
    (nn.relu, lambda x: np.maximum(x, 0)),
    (nn.relu6, lambda x: np.clip(x, 0, 6)),
    (nn.sigmoid, _np_sigmoid),
    (nn.softplus, lambda x: np.logaddexp(x, 0)),
    (nn.log_sigmoid, lambda x: -np.logaddexp(-x, 0)),
    (nn.silu, lambda x: x * _np_sigmoid(x)),
    (nn.elu, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    (lambda x: nn.gelu(x, approximate=False), lambda x: 0.5 * x * (1 + np.vectorize(__import__("math").erf)(x / np.sqrt(2)))),
    (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))),
]


@pytest.mark.parametrize("fn,ref", CASES)
def test_activation_matches_numpy(fn: Callable[[Any], Any], ref: Callable[[np.ndarray], np.ndarray]) -> None:
    np.testing.assert_allclose(np.asarray(fn(X)), ref(X.astype(np.float64)), rtol=2e-5, atol=1e-6)
    closed = pc.make_jaxpr(fn)(X)
    np.testing.assert_allclose(np.asarray(pc.eval_jaxpr(closed.jaxpr, closed.consts, X)[0]), np.asarray(fn(X)), rtol=1e-6)


def test_softmax_and_log_softmax_are_stable() -> None:
    x = np.array([[1000.0, 1001.0, 1002.0], [-5.0, 0.0, 5.0]], np.float32)
    s = np.asarray(nn.softmax(x))
    ref = np.exp(x - x.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    np.testing.assert_allclose(s, ref, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.log_softmax(x)), np.log(ref), rtol=1e-5, atol=1e-6)


def test_logsumexp_axis_and_keepdims() -> None:
    x = np.linspace(-3, 3, 12).reshape(3, 4).astype(np.float32)
    ref = np.log(np.exp(x.astype(np.float64)).sum(axis=0))
    np.testing.assert_allclose(np.asarray(nn.logsumexp(x, axis=0)), ref, rtol=1e-6)
    assert np.asarray(nn.logsumexp(x, axis=1, keepdims=True)).shape == (3, 1)
    np.testing.assert_allclose(float(nn.logsumexp(np.array([-np.inf, 0.0], np.float32))), 0.0)


def test_one_hot() -> None:
    out = np.asarray(nn.one_hot(np.array([0, 2, 1]), 3))
    np.testing.assert_array_equal(out, np.eye(3, dtype=np.float32)[[0, 2, 1]])
    assert out.dtype == np.float32


def test_standardize() -> None:
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = np.asarray(nn.standardize(x))
    np.testing.assert_allclose(out.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(out.std(-1), 1, atol=1e-3)
