"""Transformations composed with devices, on 8 CPU devices in one process
(run by ``test_multidevice_programs.py`` in a subprocess with
``PLAIT_NUM_CPU_DEVICES=8``).  Oracles: the same programs on one device, NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax
from plait.sharding import Mesh, NamedSharding, P

X = (np.arange(32, dtype=np.float32).reshape(8, 4) - 10) / 8
W = np.linspace(-1, 1, 4).astype(np.float32)


@pytest.fixture(scope="module")
def mesh() -> Mesh:
    return plait.sharding.make_mesh((4, 2), ("x", "y"))


def _loss_sharded(mesh: Mesh) -> object:
    def loss(w: object, x: object) -> object:
        per_device = plait.shard_map(
            lambda w, xb: lax.psum(pnp.sum(pnp.tanh(xb @ w) ** 2), "x"),
            mesh=mesh, in_specs=(P(), P("x")), out_specs=P(),
        )
        return per_device(w, x)

    return loss


def _loss(w: object, x: object) -> object:
    return pnp.sum(pnp.tanh(x @ w) ** 2)


def test_grad_through_shard_map(mesh: Mesh) -> None:
    loss = _loss_sharded(mesh)
    np.testing.assert_allclose(float(loss(W, X)), float(_loss(W, X)), rtol=1e-6)
    for argnums in (0, 1):
        want = np.asarray(plait.grad(_loss, argnums)(W, X))
        np.testing.assert_allclose(np.asarray(plait.grad(loss, argnums)(W, X)), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.asarray(plait.jit(plait.grad(loss, argnums))(W, X)), want, rtol=1e-5, atol=1e-6)


def test_transposes_of_the_collectives(mesh: Mesh) -> None:
    # all_gather's transpose sums and keeps this device's slot; pmean's averages.
    # JAX 0.10's all_gather is varying, so out_specs=P() needs the unchecked mode.
    def f(x: object) -> object:
        g = plait.shard_map(lambda a: lax.all_gather(a, "x", tiled=True) * pnp.arange(8.0)[:, None],
                            mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False)
        return pnp.sum(g(x) ** 2)

    want = 2 * X * (np.arange(8.0)[:, None] ** 2) * 2  # replicated over 'y' (2 copies)
    np.testing.assert_allclose(np.asarray(plait.grad(f)(X)), want / 2, rtol=1e-5)

    def h(x: object) -> object:
        m = plait.shard_map(lambda a: lax.pmean(a, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())
        return pnp.sum(m(x) * pnp.arange(2.0)[:, None])

    np.testing.assert_allclose(np.asarray(plait.grad(h)(X)), np.tile(np.arange(2.0)[:, None] / 4, (4, 4)), rtol=1e-6)


def test_vmap_of_shard_map(mesh: Mesh) -> None:
    f = plait.shard_map(lambda a: lax.psum(a * lax.axis_index("x").astype(np.float32), "x"),
                        mesh=mesh, in_specs=P("x"), out_specs=P())
    xs = np.stack([X, 2 * X, -X])
    want = (xs.reshape(3, 4, 2, 4) * np.arange(4.0)[None, :, None, None]).sum(1)
    np.testing.assert_allclose(np.asarray(plait.vmap(f)(xs)), want, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(plait.vmap(f, in_axes=1, out_axes=1)(xs.transpose(1, 0, 2))),
                               want.transpose(1, 0, 2), rtol=1e-6)


def test_pmap_of_grad_and_vmap_inside_pmap() -> None:
    xs = X.reshape(8, 1, 4)
    g = plait.pmap(plait.grad(lambda w, x: _loss(w, x)), in_axes=(None, 0))(W, xs)
    for k in range(8):
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(plait.grad(_loss)(W, xs[k])), rtol=1e-5, atol=1e-6)
    # Both names in one psum: the device axis and a vmapped axis.
    y = np.arange(24, dtype=np.float32).reshape(4, 3, 2)
    r = plait.pmap(plait.vmap(lambda a: lax.psum(a, ("dev", "b")), axis_name="b"), "dev")(y)
    np.testing.assert_allclose(np.asarray(r), np.broadcast_to(y.sum((0, 1)), y.shape))
    r = plait.pmap(plait.vmap(lambda a: a - lax.pmean(a, "dev"), axis_name="b"), "dev")(y)
    np.testing.assert_allclose(np.asarray(r), y - y.mean(0), rtol=1e-6, atol=1e-6)


def test_data_parallel_sgd_step_equals_the_single_device_step(mesh: Mesh) -> None:
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((4, 3)).astype(np.float32), "b": np.zeros(3, np.float32)}
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 3)).astype(np.float32)

    def step(p: dict, x: object, y: object) -> tuple[dict, object]:
        loss, g = plait.value_and_grad(lambda p: pnp.mean((pnp.tanh(x @ p["w"] + p["b"]) - y) ** 2))(p)
        return plait.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), loss

    data, repl = NamedSharding(mesh, P(("x", "y"))), NamedSharding(mesh, P())
    sharded = plait.jit(step, in_shardings=(repl, data, data), out_shardings=(repl, repl))
    p1, l1 = sharded(plait.device_put(params, repl), plait.device_put(x, data), plait.device_put(y, data))
    p0, l0 = plait.jit(step)(params, x, y)
    assert p1["w"].sharding == repl and len(p1["w"].addressable_shards) == 8
    np.testing.assert_allclose(float(l1), float(l0), rtol=1e-6)
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(p1[k]), np.asarray(p0[k]), rtol=1e-6, atol=1e-6)
    # The same step as pmap with the gradients averaged by pmean.
    def pstep(p: dict, x: object, y: object) -> dict:
        g = plait.grad(lambda p: pnp.mean((pnp.tanh(x @ p["w"] + p["b"]) - y) ** 2))(p)
        g = lax.pmean(g, "d")
        return plait.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g)

    p2 = plait.pmap(pstep, "d", in_axes=(None, 0, 0), out_axes=None)(params, x.reshape(8, 2, 4), y.reshape(8, 2, 3))
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(p2[k]), np.asarray(p0[k]), rtol=1e-6, atol=1e-6)


def test_sharded_arrays_through_mask_and_vmap(mesh: Mesh) -> None:
    x = plait.device_put(X, NamedSharding(mesh, P("x")))
    np.testing.assert_allclose(np.asarray(plait.vmap(lambda r: r * 2)(x)), 2 * X)
    masked = plait.mask(lambda a: pnp.sum(a, axis=1), ["(8, n)"], "8")
    np.testing.assert_allclose(np.asarray(masked([x], {"n": 3})), X[:, :3].sum(1), rtol=1e-6)


@pytest.mark.parametrize(
    "name, body, in_spec, out_spec",
    [
        ("ppermute", lambda a: lax.ppermute(a, "x", [(0, 1), (1, 2), (2, 0)]), P("x"), P("x")),
        ("psum_scatter", lambda a: lax.psum_scatter(a, "x", scatter_dimension=1, tiled=True), P("x"), P(None, "x")),
        ("all_to_all", lambda a: lax.all_to_all(a, "x", 1, 0, tiled=True), P("x"), P("x")),
        ("all_gather", lambda a: lax.all_gather(a, "y", axis=1, tiled=True), P("x", "y"), P("x")),
    ],
)
def test_transposes_pass_the_dot_product_test(mesh: Mesh, name: str, body: object, in_spec: P, out_spec: P) -> None:
    # For a linear f: <f(x), c> == <x, grad(<f(.), c>)(x)> for any x and c.
    # all_gather over 'y' leaves a value varying over 'y' that out_spec P('x') takes as
    # equal: JAX 0.10 refuses that unless check_vma=False.
    f = plait.shard_map(body, mesh=mesh, in_specs=in_spec, out_specs=out_spec, check_vma=name != "all_gather")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(X.shape).astype(np.float32)
    fx = np.asarray(f(x))
    c = rng.standard_normal(fx.shape).astype(np.float32)
    g = np.asarray(plait.grad(lambda v: pnp.sum(f(v) * c))(x))
    np.testing.assert_allclose(float(np.sum(fx * c)), float(np.sum(x * g)), rtol=1e-4)


def test_a_pile_of_sharded_data(mesh: Mesh) -> None:
    # The sharded axis (the pile's batch axis) is not the ragged one.
    lengths = np.array([2, 4, 1, 3, 4, 0, 2, 1])
    x = plait.device_put(X, NamedSharding(mesh, P(("x", "y"))))
    out = plait.vmap(lambda r: pnp.sum(r * 2), in_axes=plait.pile_axis)(plait.Pile(x, lengths))
    np.testing.assert_allclose(np.asarray(out), [2 * X[i, :n].sum() for i, n in enumerate(lengths)], rtol=1e-6)


def test_repeated_sharded_training_steps_match_the_single_device_steps(mesh: Mesh) -> None:
    # After the first call the sharded step runs on jit's fast path; ten
    # steps must agree with ten single-device steps, and a gradient with
    # respect to an integer (float0 zeros) must come back on every call.
    rng = np.random.default_rng(2)
    params = {"w": rng.standard_normal((4, 3)).astype(np.float32), "b": np.zeros(3, np.float32)}
    x = rng.standard_normal((16, 4)).astype(np.float32)
    y = rng.standard_normal((16, 3)).astype(np.float32)

    def step(p: dict, x: object, y: object, n: object) -> tuple[dict, object, object]:
        def loss(p: dict, n: object) -> object:
            return pnp.mean((pnp.tanh(x @ p["w"] + p["b"]) - y) ** 2) * n
        value, (g, gn) = plait.value_and_grad(loss, argnums=(0, 1), allow_int=True)(p, n)
        return plait.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), value, gn

    data, repl = NamedSharding(mesh, P(("x", "y"))), NamedSharding(mesh, P())
    sharded = plait.jit(step, donate_argnums=0)
    plain = plait.jit(step)
    p1 = plait.device_put(params, repl)
    xs, ys, n = plait.device_put(x, data), plait.device_put(y, data), plait.device_put(np.int32(2), repl)
    p0: object = params
    for _ in range(10):
        old = p1
        p1, l1, gn = sharded(p1, xs, ys, n)
        p0, l0, _ = plain(p0, x, y, np.int32(2))
        assert old["w"].is_deleted()
        assert gn.dtype == plait.dtypes.float0 and gn.shape == ()
        np.testing.assert_allclose(float(l1), float(l0), rtol=1e-5)
        assert p1["w"].sharding.is_fully_replicated and len(p1["w"].addressable_shards) == 8
    for k in ("w", "b"):
        np.testing.assert_allclose(np.asarray(p1[k]), np.asarray(p0[k]), rtol=1e-5, atol=1e-6)
