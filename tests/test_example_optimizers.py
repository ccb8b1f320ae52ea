"""plait.example_libraries.optimizers: each optimizer's update rule against a
NumPy transcription of its formula, schedules, clipping, state packing, and a
stax MLP trained with each optimizer under jit."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import random
from plait.example_libraries import optimizers, stax

RNG = np.random.default_rng(0)
SHAPES = {"w": (3, 2), "b": (2,), "s": ()}
X0 = {k: RNG.normal(size=s).astype(np.float32) for k, s in SHAPES.items()}
GRADS = [{k: RNG.normal(size=s).astype(np.float32) for k, s in SHAPES.items()} for _ in range(4)]
LR = 0.1


def _np_sgd() -> tuple[Callable[..., Any], Callable[..., Any]]:
    return (lambda x: [x], lambda i, g, s: [s[0] - LR * g])


def _np_momentum(nesterov: bool) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def update(i: int, g: Any, s: list[Any]) -> list[Any]:
        x, v = s
        v = 0.9 * v + g
        return [x - LR * ((0.9 * v + g) if nesterov else v), v]

    return (lambda x: [x, np.zeros_like(x)], update)


def _np_adagrad() -> tuple[Callable[..., Any], Callable[..., Any]]:
    def update(i: int, g: Any, s: list[Any]) -> list[Any]:
        x, acc, m = s
        acc = acc + g * g
        scaled = np.where(acc > 0, g / np.sqrt(np.where(acc > 0, acc, 1)), 0)
        m = 0.1 * scaled + 0.9 * m
        return [x - LR * m, acc, m]

    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)], update)


def _np_rmsprop(momentum: bool) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def update(i: int, g: Any, s: list[Any]) -> list[Any]:
        x, a, mom = s
        a = 0.9 * a + 0.1 * g * g
        step = LR * g / np.sqrt(a + 1e-8)
        if momentum:
            mom = 0.9 * mom + step
            return [x - mom, a, mom]
        return [x - step, a, mom]

    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)], update)


def _np_adam(kind: str) -> tuple[Callable[..., Any], Callable[..., Any]]:
    def update(i: int, g: Any, s: list[Any]) -> list[Any]:
        x, m, v = s
        m = 0.1 * g + 0.9 * m
        if kind == "adam":
            v = 0.001 * g * g + 0.999 * v
            m_hat, v_hat = m / (1 - 0.9 ** (i + 1)), v / (1 - 0.999 ** (i + 1))
            return [x - LR * m_hat / (np.sqrt(v_hat) + 1e-8), m, v]
        v = np.maximum(0.999 * v, np.abs(g))
        return [x - LR / (1 - 0.9 ** (i + 1)) * m / (v + 1e-8), m, v]

    return (lambda x: [x, np.zeros_like(x), np.zeros_like(x)], update)


def _np_sm3() -> tuple[Callable[..., Any], Callable[..., Any]]:
    def init(x: Any) -> list[Any]:
        x1 = np.atleast_1d(x)
        return [x1, np.zeros_like(x1), [np.zeros(n) for n in x1.shape], x.shape]

    def update(i: int, g: Any, s: list[Any]) -> list[Any]:
        x, m, vs, shape = s
        g = np.atleast_1d(g)
        acc = np.full(x.shape, np.inf)
        for j, v in enumerate(vs):
            acc = np.minimum(acc, v.reshape([-1 if k == j else 1 for k in range(x.ndim)]))
        acc = acc + g * g
        m = 0.1 * np.where(acc > 0, g / np.sqrt(np.where(acc > 0, acc, 1)), 0) + 0.9 * m
        x = x - LR * m
        vs = [acc.max(axis=tuple(k for k in range(x.ndim) if k != j)) for j in range(x.ndim)]
        return [x, m, vs, shape]

    return init, update


CASES: dict[str, tuple[Any, tuple[Callable[..., Any], Callable[..., Any]]]] = {
    "sgd": (optimizers.sgd(LR), _np_sgd()),
    "momentum": (optimizers.momentum(LR, 0.9), _np_momentum(False)),
    "nesterov": (optimizers.nesterov(LR, 0.9), _np_momentum(True)),
    "adagrad": (optimizers.adagrad(LR), _np_adagrad()),
    "rmsprop": (optimizers.rmsprop(LR), _np_rmsprop(False)),
    "rmsprop_momentum": (optimizers.rmsprop_momentum(LR), _np_rmsprop(True)),
    "adam": (optimizers.adam(LR), _np_adam("adam")),
    "adamax": (optimizers.adamax(LR), _np_adam("adamax")),
    "sm3": (optimizers.sm3(LR), _np_sm3()),
}


@pytest.mark.parametrize("name", list(CASES))
def test_update_rule_matches_numpy(name: str) -> None:
    (init_fn, update_fn, get_params), (np_init, np_update) = CASES[name]
    state = init_fn(X0)
    ref = {k: np_init(v.astype(np.float64)) for k, v in X0.items()}
    for i, g in enumerate(GRADS):
        state = update_fn(i, g, state)
        ref = {k: np_update(i, g[k].astype(np.float64), ref[k]) for k in ref}
        params = get_params(state)
        assert set(params) == set(SHAPES)
        for k in SHAPES:
            got = np.asarray(params[k])
            assert got.shape == SHAPES[k] and got.dtype == np.float32
            np.testing.assert_allclose(got, np.reshape(ref[k][0], SHAPES[k]), rtol=2e-5, atol=1e-6, err_msg=f"{name} {k}")


def test_schedules() -> None:
    steps = np.arange(6)
    np.testing.assert_allclose([optimizers.constant(0.5)(i) for i in steps], 0.5)
    np.testing.assert_allclose(
        [float(optimizers.exponential_decay(1.0, 2, 0.5)(i)) for i in steps], 0.5 ** (steps / 2), rtol=1e-6
    )
    np.testing.assert_allclose(
        [float(optimizers.inverse_time_decay(1.0, 2, 0.5)(i)) for i in steps], 1 / (1 + 0.5 * steps / 2), rtol=1e-6
    )
    np.testing.assert_allclose(
        [float(optimizers.inverse_time_decay(1.0, 2, 0.5, staircase=True)(i)) for i in steps],
        1 / (1 + 0.5 * np.floor(steps / 2)), rtol=1e-6,
    )
    np.testing.assert_allclose(
        [float(optimizers.polynomial_decay(1.0, 4, 0.2, power=2.0)(i)) for i in steps],
        (1 - np.minimum(steps, 4) / 4) ** 2 * 0.8 + 0.2, rtol=1e-6,
    )
    pc = optimizers.piecewise_constant([1, 3], [1.0, 0.5, 0.1])
    np.testing.assert_allclose([float(pc(i)) for i in steps], [1.0, 1.0, 0.5, 0.5, 0.1, 0.1])
    with pytest.raises(ValueError, match="one entry fewer than values"):
        optimizers.piecewise_constant([1, 2], [1.0, 0.5])
    with pytest.raises(TypeError, match="a step size must be a scalar or a schedule"):
        optimizers.sgd(np.ones(2))
    sched = optimizers.sgd(optimizers.exponential_decay(1.0, 1, 0.5))
    state = sched.update_fn(2, {"a": np.float32(1.0)}, sched.init_fn({"a": np.float32(0.0)}))
    np.testing.assert_allclose(float(sched.params_fn(state)["a"]), -0.25, rtol=1e-6)


def test_l2_norm_and_clip_grads() -> None:
    tree = {"a": np.array([3.0, 0.0], np.float32), "b": np.array([[4.0]], np.float32)}
    np.testing.assert_allclose(float(optimizers.l2_norm(tree)), 5.0)
    clipped = optimizers.clip_grads(tree, 1.0)
    np.testing.assert_allclose(np.asarray(clipped["a"]), [0.6, 0.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(clipped["b"]), [[0.8]], rtol=1e-6)
    kept = optimizers.clip_grads(tree, 10.0)
    np.testing.assert_allclose(np.asarray(kept["a"]), [3.0, 0.0])


def test_pack_unpack_and_tree_mismatch() -> None:
    init_fn, update_fn, get_params = optimizers.adam(LR)
    state = update_fn(0, GRADS[0], init_fn(X0))
    restored = optimizers.pack_optimizer_state(pickle.loads(pickle.dumps(optimizers.unpack_optimizer_state(state))))
    again = update_fn(1, GRADS[1], restored)
    want = update_fn(1, GRADS[1], state)
    for k in SHAPES:
        np.testing.assert_array_equal(np.asarray(get_params(again)[k]), np.asarray(get_params(want)[k]))
    with pytest.raises(TypeError, match="gradient tree that does not match the parameter tree"):
        update_fn(1, {"w": GRADS[0]["w"]}, state)


@pytest.mark.parametrize("name", ["sgd", "adam"])
def test_stax_mlp_training_reduces_the_loss(name: str) -> None:
    init_params, predict = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(3), stax.LogSoftmax)
    out_shape, params = init_params(random.key(0), (-1, 4))
    assert out_shape == (-1, 3)
    x = RNG.normal(size=(32, 4)).astype(np.float32)
    labels = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0.5).astype(np.int32)
    onehot = np.eye(3, dtype=np.float32)[labels]

    def loss(p: Any) -> Any:
        return -pnp.mean(pnp.sum(predict(p, x) * onehot, axis=1))

    opt_init, opt_update, get_params = {"sgd": optimizers.sgd(0.5), "adam": optimizers.adam(0.05)}[name]

    @plait.jit
    def step(i: Any, state: Any) -> Any:
        return opt_update(i, plait.grad(loss)(get_params(state)), state)

    state = opt_init(params)
    first = float(loss(params))
    for i in range(30):
        state = step(i, state)
    assert float(loss(get_params(state))) < 0.6 * first
