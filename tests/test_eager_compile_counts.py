"""XLA compilations of eager code across interpreters (issue 26): an eager
``grad`` (or ``vmap`` of ``grad``) of a ``jit`` function compiles on its
first call only (partial evaluation gives the same split call each time, as
JAX's), and eager library functions compile one program per signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
import plait_dispatch
from plait_core import eager_staging


def _compiles(f: Callable[[], Any]) -> tuple[int, Any]:
    before = plait_dispatch.stats.snapshot()["xla_compiles"]
    out = f()
    return plait_dispatch.stats.snapshot()["xla_compiles"] - before, out


def _f(x: Any) -> Any:
    return pnp.sum(pnp.sin(x) * x)


def _df(x: Any) -> Any:
    return np.sin(x) + x * np.cos(x)


@pytest.mark.parametrize(
    "name, make",
    [
        ("grad of jit", lambda: plait.grad(plait.jit(_f))),
        ("vmap of grad of jit", lambda: plait.vmap(plait.grad(plait.jit(_f)))),
    ],
)
def test_eager_derivatives_of_calls_compile_once(name: str, make: Callable[[], Any]) -> None:
    g = make()
    x = np.linspace(0.1, 1.0, 6).astype(np.float32)
    if name.startswith("vmap"):
        x = np.stack([x, x + 1.0])
    first, out = _compiles(lambda: g(x))
    assert first >= 1
    np.testing.assert_allclose(np.asarray(out), _df(x), rtol=1e-5)
    for _ in range(3):
        again, out2 = _compiles(lambda: g(x))
        assert again == 0, name
        np.testing.assert_array_equal(np.asarray(out2), np.asarray(out))


def test_eager_library_functions_compile_one_program_per_signature() -> None:
    rng = np.random.default_rng(2)
    a = pnp.asarray((rng.normal(size=(7, 7)) + 7 * np.eye(7)).astype(np.float32))
    b = pnp.asarray(rng.normal(size=(7,)).astype(np.float32))
    m = pnp.asarray(rng.normal(size=(9, 7)).astype(np.float32))
    n, x = _compiles(lambda: pnp.linalg.solve(a, b))
    assert n == 1
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(np.asarray(a), np.asarray(b)), rtol=1e-4)
    col = m[:, 0]
    n, sol = _compiles(lambda: pnp.linalg.lstsq(m, col)[0])
    assert n == 1
    np.testing.assert_allclose(np.asarray(sol), np.eye(7)[0], atol=1e-4)
    n, nrm = _compiles(lambda: pnp.linalg.norm(m, axis=1))
    assert n == 1
    np.testing.assert_allclose(np.asarray(nrm), np.linalg.norm(np.asarray(m), axis=1), rtol=1e-5)
    n, _ = _compiles(lambda: (pnp.linalg.solve(a, b), pnp.linalg.norm(m, axis=1), pnp.mean(m)))
    assert n == 1  # only mean is new


def _clip_loss(w: Any, x: Any, t: Any) -> Any:
    z = pnp.dot(x, w)
    return pnp.logaddexp(0.0, z) - t * z + pnp.linalg.norm(w)


_RNG = np.random.default_rng(4)
_X = _RNG.normal(size=(16, 3)).astype(np.float32)
_T = (_X @ np.array([1.0, -1.0, 2.0]) > 0).astype(np.float32)
_W = np.array([0.5, -0.25, 0.75], np.float32)


def _per_example(staged: bool) -> Any:
    prev = eager_staging.set_eager_staging(staged)
    try:
        return plait.vmap(plait.grad(_clip_loss), in_axes=(None, 0, 0))(_W, _X, _T)
    finally:
        eager_staging.set_eager_staging(prev)


def test_library_functions_under_eager_transformations_are_one_program_each() -> None:
    # As JAX's jitted logaddexp and norm: differentiated and batched as calls.
    plait_dispatch.clear_caches()
    n_op_by_op, op_by_op = _compiles(lambda: _per_example(False))
    plait_dispatch.clear_caches()
    n_staged, staged = _compiles(lambda: _per_example(True))
    assert n_staged < n_op_by_op, (n_staged, n_op_by_op)
    again, staged2 = _compiles(lambda: _per_example(True))
    assert again == 0
    jitted = plait.jit(plait.vmap(plait.grad(_clip_loss), in_axes=(None, 0, 0)))(_W, _X, _T)
    np.testing.assert_allclose(np.asarray(staged), np.asarray(op_by_op), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(staged), np.asarray(jitted), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(staged2), np.asarray(staged))
    z = _X @ _W
    want = ((1 / (1 + np.exp(-z)) - _T)[:, None] * _X) + _W / np.linalg.norm(_W)
    np.testing.assert_allclose(np.asarray(staged), want, rtol=1e-5, atol=1e-6)


def test_staged_programs_are_unchanged() -> None:
    grad = plait.grad(lambda w: pnp.sum(_clip_loss(w, _X, _T)))
    text = str(plait.make_jaxpr(grad)(_W))
    prev = eager_staging.set_eager_staging(False)
    try:
        assert str(plait.make_jaxpr(grad)(_W)) == text
    finally:
        eager_staging.set_eager_staging(prev)
    assert "closed_call" not in text and "name=logaddexp" not in text


@pytest.mark.parametrize("policy", [None, plait.checkpoint_policies.nothing_saveable])
def test_eager_grad_of_a_checkpointed_layer_compiles_once(policy: Any) -> None:
    # A checkpointed layer applied several times, differentiated eagerly in a loop:
    # its policy split is cached with the partial evaluation, so the staged
    # recomputation is one program per signature, compiled on the first call only
    # (it was recompiled for every layer and every call).
    layer = plait.checkpoint(lambda x, w: pnp.tanh(x @ w), policy=policy)

    def net(ws: Any, x: Any) -> Any:
        for w in ws:
            x = layer(x, w)
        return pnp.sum(x**2)

    rng = np.random.default_rng(0)
    ws = [(rng.standard_normal((5, 5)) * 0.5).astype(np.float32) for _ in range(4)]
    x = np.linspace(-1.0, 1.0, 5).astype(np.float32)

    def net_np(ws: Any, x: Any) -> Any:
        for w in ws:
            x = np.tanh(x @ w)
        return np.sum(x**2)

    _, first = _compiles(lambda: plait.grad(net)(ws, x))
    n, again = _compiles(lambda: plait.grad(net)(ws, x))
    assert n == 0
    eps = 1e-3
    bumped = [w.copy() for w in ws]
    bumped[2][1, 3] += eps
    lowered = [w.copy() for w in ws]
    lowered[2][1, 3] -= eps
    fd = (net_np(bumped, x.astype(np.float64)) - net_np(lowered, x.astype(np.float64))) / (2 * eps)
    assert abs(fd) > 1e-3
    np.testing.assert_allclose(np.asarray(again[2])[1, 3], fd, rtol=2e-3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
