"""Varying manual axes inside ``shard_map`` (JAX 0.10's ``check_vma``), on 8 CPU
devices (run by ``test_shard_map_vma.py`` with ``PLAIT_NUM_CPU_DEVICES=8``).

The regression of issue 24: ``grad`` inside the body of a loss of replicated
parameters and split data is the gradient summed over devices (the transpose of
the implicit ``pvary`` of the parameters is a ``psum``), so a data-parallel step
written per device equals the global step.  Oracles: the same computation on one
device, and NumPy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax
from plait.sharding import Mesh
from plait.sharding import PartitionSpec as P

RNG = np.random.default_rng(0)
X = RNG.standard_normal((16, 3)).astype(np.float32)
Y = RNG.standard_normal(16).astype(np.float32)
W = RNG.standard_normal(4).astype(np.float32)


@pytest.fixture(scope="module")
def mesh() -> Mesh:
    assert plait.device_count() == 8
    return Mesh(np.array(plait.devices()), ("x",))


def _loss(p: Any, x: Any, y: Any) -> Any:
    # Scaled by the global batch size: the per-device losses sum to the global loss.
    return pnp.sum((x @ p[:3] + p[3] - y) ** 2) / 16


def _global_grad(p: np.ndarray) -> np.ndarray:
    r = X.astype(np.float64) @ p[:3] + p[3] - Y
    return np.concatenate([2 * X.T @ r, [2 * r.sum()]]) / 16


def test_grad_inside_the_body_of_replicated_parameters_is_summed_over_devices(mesh: Mesh) -> None:
    def step(p: Any, x: Any, y: Any) -> Any:
        return p - 0.1 * plait.grad(_loss)(p, x, y)

    mapped = plait.jit(plait.shard_map(step, mesh=mesh, in_specs=(P(), P("x"), P("x")), out_specs=P()))
    want = W - 0.1 * _global_grad(W.astype(np.float64))
    np.testing.assert_allclose(np.asarray(mapped(W, X, Y)), want, rtol=1e-5, atol=1e-6)
    # The same as the step on one device.
    np.testing.assert_allclose(np.asarray(mapped(W, X, Y)), np.asarray(step(W, X, Y)), rtol=1e-5, atol=1e-6)


def test_value_and_grad_of_a_pmean_loss_inside_the_body(mesh: Mesh) -> None:
    def step(p: Any, x: Any, y: Any) -> Any:
        return plait.value_and_grad(lambda q: lax.pmean(_loss(q, x, y), "x"))(p)

    loss, g = plait.shard_map(step, mesh=mesh, in_specs=(P(), P("x"), P("x")), out_specs=(P(), P()))(W, X, Y)
    r = X.astype(np.float64) @ W[:3] + W[3] - Y
    np.testing.assert_allclose(float(loss), (r**2).sum() / 16 / 8, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g), _global_grad(W.astype(np.float64)) / 8, rtol=1e-5, atol=1e-6)


def test_grad_jvp_and_hessian_outside_the_body(mesh: Mesh) -> None:
    f = plait.shard_map(lambda p, x, y: lax.psum(_loss(p, x, y), "x"), mesh=mesh,
                        in_specs=(P(), P("x"), P("x")), out_specs=P())
    np.testing.assert_allclose(np.asarray(plait.grad(f)(W, X, Y)), _global_grad(W.astype(np.float64)), rtol=1e-5, atol=1e-6)
    _, t = plait.jvp(lambda p: f(p, X, Y), (W,), (np.ones(4, np.float32),))
    np.testing.assert_allclose(float(t), _global_grad(W.astype(np.float64)).sum(), rtol=1e-5)
    a = np.concatenate([X, np.ones((16, 1), np.float32)], 1).astype(np.float64)
    np.testing.assert_allclose(np.asarray(plait.hessian(lambda p: f(p, X, Y))(W)), 2 * a.T @ a / 16, rtol=1e-5)


def test_collectives_of_invariant_values_and_their_types(mesh: Mesh) -> None:
    seen: list[Any] = []

    def body(p: Any, x: Any) -> Any:
        seen.extend([plait.typeof(p).vma, plait.typeof(x).vma, plait.typeof(x * p[0]).vma,
                     plait.typeof(lax.psum(x, "x")).vma, plait.typeof(lax.axis_index("x")).vma])
        return lax.psum(p, "x"), lax.pmax(p, "x"), lax.pmean(p, "x"), lax.axis_index("x") * x[:, 0]

    s, mx, mean, idx = plait.shard_map(body, mesh=mesh, in_specs=(P(), P("x")), out_specs=(P(), P(), P(), P("x")))(W, X)
    np.testing.assert_allclose(np.asarray(s), 8 * W, rtol=1e-6)  # the sum of 8 equal copies, as JAX's
    np.testing.assert_allclose(np.asarray(mx), W)
    np.testing.assert_allclose(np.asarray(mean), W, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(idx), np.repeat(np.arange(8), 2) * X[:, 0], rtol=1e-6)
    x_axes = frozenset({"x"})
    assert seen == [frozenset(), x_axes, x_axes, frozenset(), x_axes]


def test_collectives_of_invariant_values_transpose_with_a_sum(mesh: Mesh) -> None:
    # ppermute/psum_scatter of a replicated input first make it varying (pvary), so
    # its cotangent is summed over the devices; the numbers are JAX 0.10.2's.
    perm = [(i, (i + 1) % 8) for i in range(8)]
    f = plait.shard_map(lambda a: lax.ppermute(a, "x", perm), mesh=mesh, in_specs=P(), out_specs=P("x"))
    c = np.arange(16.0, dtype=np.float32)
    g = plait.grad(lambda v: pnp.sum(f(v) * c))(np.arange(2.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(g), [c[0::2].sum(), c[1::2].sum()])
    h = plait.shard_map(lambda a: lax.psum_scatter(a, "x", tiled=True), mesh=mesh, in_specs=P(), out_specs=P("x"))
    v = np.arange(8.0, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(h(v)), 8 * v)
    np.testing.assert_allclose(np.asarray(plait.grad(lambda u: pnp.sum(h(u) * v))(v)), 8 * v)


def test_an_out_spec_that_claims_replication_of_a_varying_value_is_an_error(mesh: Mesh) -> None:
    with pytest.raises(ValueError, match=r"out spec P\(\) of output leaf 0 .*replicated over the mesh axes \('x',\), but it varies"):
        plait.shard_map(lambda p, x: x * p[0], mesh=mesh, in_specs=(P(), P("x")), out_specs=P())(W, X)
    with pytest.raises(ValueError, match="varies over them"):
        plait.shard_map(lambda x: lax.axis_index("x") + 0 * x, mesh=mesh, in_specs=P(), out_specs=P())(W)


def test_check_vma_false_keeps_the_unchecked_semantics(mesh: Mesh) -> None:
    def step(p: Any, x: Any, y: Any) -> Any:
        return p - 0.1 * plait.grad(_loss)(p, x, y)

    out = plait.shard_map(step, mesh=mesh, in_specs=(P(), P("x"), P("x")), out_specs=P(), check_vma=False)(W, X, Y)
    # Device 0's own step: its local gradient, on its two rows.
    r = X[:2].astype(np.float64) @ W[:3] + W[3] - Y[:2]
    local = np.concatenate([2 * X[:2].T @ r, [2 * r.sum()]]) / 16
    np.testing.assert_allclose(np.asarray(out), W - 0.1 * local, rtol=1e-5, atol=1e-6)


def test_pvary_and_pcast(mesh: Mesh) -> None:
    def body(p: Any) -> Any:
        q = lax.pvary(p, "x")
        assert plait.typeof(q).vma == frozenset({"x"})
        assert plait.typeof(lax.pcast(p, "x", to="varying")).vma == frozenset({"x"})
        return q * 2

    np.testing.assert_allclose(np.asarray(plait.shard_map(body, mesh=mesh, in_specs=P(), out_specs=P("x"))(W[:2])),
                               np.tile(2 * W[:2], 8))
    # grad of a pvary'd replicated input sums over the 8 devices.
    f = plait.shard_map(lambda p: lax.pvary(p, "x"), mesh=mesh, in_specs=P(), out_specs=P("x"))
    np.testing.assert_allclose(np.asarray(plait.grad(lambda p: pnp.sum(f(p)))(W)), np.full(4, 8.0))
    with pytest.raises(NotImplementedError, match="only to='varying'"):
        lax.pcast(W, "x", to="reduced")
