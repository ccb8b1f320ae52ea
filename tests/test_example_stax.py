"""plait.example_libraries.stax: each layer's shapes and values against NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait import random
from plait.example_libraries import stax

RNG = np.random.default_rng(1)
KEY = random.key(0)


def _np(x: Any) -> np.ndarray:
    return np.asarray(x)


def _init_apply(layer: Any, shape: tuple[int, ...], x: Any, **kwargs: Any) -> tuple[Any, Any, Any]:
    init_fun, apply_fun = layer
    out_shape, params = init_fun(KEY, shape)
    return out_shape, params, apply_fun(params, x, **kwargs)


def test_dense_serial_and_flatten() -> None:
    x = RNG.normal(size=(5, 2, 3)).astype(np.float32)
    layer = stax.serial(stax.Flatten, stax.Dense(4), stax.Tanh, stax.Dense(2))
    out_shape, params, y = _init_apply(layer, (-1, 2, 3), x)
    assert out_shape == (-1, 2)
    (w1, b1), (w2, b2) = params[1], params[3]
    assert _np(w1).shape == (6, 4) and _np(b2).shape == (2,) and params[0] == () and params[2] == ()
    want = np.tanh(x.reshape(5, 6) @ _np(w1) + _np(b1)) @ _np(w2) + _np(b2)
    np.testing.assert_allclose(_np(y), want, rtol=1e-5, atol=1e-6)


def _conv_ref(x: np.ndarray, w: np.ndarray, stride: int) -> np.ndarray:
    """NHWC x HWIO cross-correlation, VALID padding."""
    kh, kw = w.shape[:2]
    oh, ow = (x.shape[1] - kh) // stride + 1, (x.shape[2] - kw) // stride + 1
    out = np.zeros((x.shape[0], oh, ow, w.shape[3]))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, w)
    return out


def test_conv_and_conv_transpose() -> None:
    x = RNG.normal(size=(2, 5, 5, 3)).astype(np.float32)
    out_shape, (w, b), y = _init_apply(stax.Conv(4, (3, 2), strides=(2, 2)), (2, 5, 5, 3), x)
    assert out_shape == (2, 2, 2, 4) == _np(y).shape and _np(b).shape == (1, 1, 1, 4)
    np.testing.assert_allclose(_np(y), _conv_ref(x, _np(w), 2) + _np(b), rtol=1e-4, atol=1e-5)
    # A transposed convolution with stride s (kernel not transposed, as JAX's default): input entry
    # (i, j) adds x * W[::-1, ::-1] to the outputs (s i + p, s j + q).
    xt = RNG.normal(size=(1, 3, 3, 2)).astype(np.float32)
    out_shape, (wt, bt), yt = _init_apply(stax.ConvTranspose(3, (2, 2), strides=(2, 2)), (1, 3, 3, 2), xt)
    assert out_shape == (1, 6, 6, 3) == _np(yt).shape
    want = np.zeros((1, 6, 6, 3))
    for i in range(3):
        for j in range(3):
            want[0, 2 * i:2 * i + 2, 2 * j:2 * j + 2, :] += np.einsum("c,hwco->hwo", xt[0, i, j], _np(wt)[::-1, ::-1])
    np.testing.assert_allclose(_np(yt), want + _np(bt), rtol=1e-4, atol=1e-5)


def test_pools() -> None:
    x = RNG.normal(size=(1, 4, 4, 2)).astype(np.float32)
    blocks = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4, 5).reshape(1, 2, 2, 4, 2)
    for layer, reduce in [(stax.MaxPool, np.max), (stax.SumPool, np.sum), (stax.AvgPool, np.mean)]:
        out_shape, _, y = _init_apply(layer((2, 2), (2, 2)), (1, 4, 4, 2), x)
        assert out_shape == (1, 2, 2, 2)
        np.testing.assert_allclose(_np(y), reduce(blocks, axis=3), rtol=1e-6)
    # SAME padding averages over the entries inside the input only.
    out_shape, _, y = _init_apply(stax.AvgPool((2, 2), padding="SAME"), (1, 4, 4, 2), x)
    assert out_shape == (1, 4, 4, 2)
    np.testing.assert_allclose(_np(y)[0, 3, 3], x[0, 3, 3], rtol=1e-6)
    np.testing.assert_allclose(_np(y)[0, 3, 0], x[0, 3, 0:2].mean(0), rtol=1e-6)
    np.testing.assert_allclose(_np(y)[0, 1, 1], x[0, 1:3, 1:3].mean((0, 1)), rtol=1e-6)


def test_batch_norm() -> None:
    x = RNG.normal(2.0, 3.0, size=(4, 3, 3, 2)).astype(np.float32)
    out_shape, (beta, gamma), y = _init_apply(stax.BatchNorm(), (4, 3, 3, 2), x)
    assert out_shape == (4, 3, 3, 2) and _np(beta).shape == (2,) and _np(gamma).shape == (2,)
    z = (x - x.mean((0, 1, 2))) / np.sqrt(x.var((0, 1, 2)) + 1e-5)
    np.testing.assert_allclose(_np(y), z, rtol=1e-4, atol=1e-4)
    init_fun, apply_fun = stax.BatchNorm(axis=(0,), center=False)
    _, params = init_fun(KEY, (4, 5))
    assert params[0] == ()
    x2 = RNG.normal(size=(4, 5)).astype(np.float32)
    got = apply_fun((params[0], np.full(5, 2.0, np.float32)), x2)
    np.testing.assert_allclose(_np(got), 2 * (x2 - x2.mean(0)) / np.sqrt(x2.var(0) + 1e-5), rtol=1e-4, atol=1e-4)


def test_activations() -> None:
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    soft = np.exp(x) / np.exp(x).sum(-1, keepdims=True)
    for layer, want in [
        (stax.Relu, np.maximum(x, 0)), (stax.Tanh, np.tanh(x)), (stax.Exp, np.exp(x)),
        (stax.Sigmoid, 1 / (1 + np.exp(-x))), (stax.Softplus, np.log1p(np.exp(x))),
        (stax.Softmax, soft), (stax.LogSoftmax, np.log(soft)),
        (stax.Elu, np.where(x > 0, x, np.expm1(x))), (stax.LeakyRelu, np.where(x > 0, x, 0.01 * x)),
    ]:
        out_shape, params, y = _init_apply(layer, (3, 4), x)
        assert out_shape == (3, 4) and params == ()
        np.testing.assert_allclose(_np(y), want, rtol=1e-5, atol=1e-6)


def test_dropout() -> None:
    x = np.ones((200,), np.float32)
    init_fun, apply_fun = stax.Dropout(0.7)
    _, params = init_fun(KEY, (200,))
    y = _np(apply_fun(params, x, rng=random.key(3)))
    kept = y[y != 0]
    np.testing.assert_allclose(kept, np.float32(1) / np.float32(0.7), rtol=1e-6)
    assert 0.55 < (y > 0).mean() < 0.85
    np.testing.assert_array_equal(_np(stax.Dropout(0.7, mode="test")[1](params, x, rng=KEY)), x)
    with pytest.raises(ValueError, match=r"stax\.Dropout: apply_fun needs a PRNG key"):
        apply_fun(params, x)


def test_fan_out_in_parallel_identity_and_shape_dependent() -> None:
    x = RNG.normal(size=(2, 3)).astype(np.float32)
    layer = stax.serial(stax.FanOut(2), stax.parallel(stax.Identity, stax.Relu), stax.FanInSum)
    out_shape, _, y = _init_apply(layer, (2, 3), x)
    assert out_shape == (2, 3)
    np.testing.assert_allclose(_np(y), x + np.maximum(x, 0), rtol=1e-6)
    concat = stax.serial(stax.FanOut(3), stax.FanInConcat(axis=-1))
    out_shape, _, y = _init_apply(concat, (2, 3), x)
    assert out_shape == (2, 9)
    np.testing.assert_array_equal(_np(y), np.concatenate([x, x, x], -1))
    made = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
    out_shape, params, y = _init_apply(made, (2, 3), x)
    assert out_shape == (2, 6) and _np(y).shape == (2, 6)
    np.testing.assert_allclose(_np(y), x @ _np(params[0]) + _np(params[1]), rtol=1e-5, atol=1e-6)
