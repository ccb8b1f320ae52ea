"""``invertible`` on real reversible networks (issue 12), end to end on XLA:
a RevNet whose parameters are an argument trains exactly like ordinary
reverse mode (plain blocks, ``custom_ivjp`` blocks, under ``jit``), and a
function whose argument cannot be rebuilt from its output composes with every
transformation."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from composition_matrix import eager_backend

import plait
from plait import numpy as pnp

R = np.random.default_rng(12)
DEPTH, WIDTH, HIDDEN, BATCH = 16, 128, 256, 32  # the sizes, but the batch (256 there: same results)


def mlp(p: dict[str, Any], z: Any) -> Any:
    return pnp.dot(pnp.tanh(pnp.dot(z, p["w1"]) + p["b1"]), p["w2"]) + p["b2"]


def block(p: dict[str, Any], x1: Any, x2: Any) -> tuple[Any, Any]:
    y1 = x1 + mlp(p["F"], x2)
    return y1, x2 + mlp(p["G"], y1)


ivjp_block = plait.custom_ivjp(block)


@ivjp_block.defivjp
def _block_ivjp(xs: Any, ys: Any, dys: Any) -> Any:
    p, _, _ = xs  # the weights, as called; the activations are for this rule to rebuild
    (y1, y2), (dy1, dy2) = ys, dys
    g, g_vjp = plait.vjp(mlp, p["G"], y1)
    x2 = y2 - g
    d_g, dy1_g = g_vjp(dy2)
    dy1 = dy1 + dy1_g
    f, f_vjp = plait.vjp(mlp, p["F"], x2)
    d_f, dx2_f = f_vjp(dy1)
    return (p, y1 - f, x2), ({"F": d_f, "G": d_g}, dy1, dy2 + dx2_f)


def stack_of(blk: Any) -> Any:
    def stack(params: list[Any], x1: Any, x2: Any) -> tuple[Any, Any]:
        for p in params:
            x1, x2 = blk(p, x1, x2)
        return x1, x2

    return stack


def loss_of(stack: Any) -> Any:
    return lambda params, x1, x2: pnp.mean(pnp.concatenate(stack(params, x1, x2)) ** 2)


def revnet_params() -> list[dict[str, Any]]:
    def half() -> dict[str, np.ndarray]:
        return {
            "w1": (R.standard_normal((WIDTH, HIDDEN)) / np.sqrt(WIDTH)).astype(np.float32),
            "b1": (R.standard_normal(HIDDEN) * 0.1).astype(np.float32),
            "w2": (R.standard_normal((HIDDEN, WIDTH)) * 0.5 / np.sqrt(HIDDEN)).astype(np.float32),
            "b2": (R.standard_normal(WIDTH) * 0.1).astype(np.float32),
        }

    return [{"F": half(), "G": half()} for _ in range(DEPTH)]


PARAMS = revnet_params()
X1, X2 = (R.standard_normal((BATCH, WIDTH)).astype(np.float32) for _ in range(2))
LOSSES = {
    "invertible": loss_of(plait.invertible(stack_of(block))),
    "custom_ivjp": loss_of(plait.invertible(stack_of(ivjp_block))),
}
ORDINARY = loss_of(stack_of(block))


def relative_error(got: Any, want: Any) -> float:
    """The largest, over leaves, of |got - want| / |want| (2-norms)."""
    pairs = zip(plait.tree_util.tree_leaves(got), plait.tree_util.tree_leaves(want), strict=True)
    return max(float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b))) for a, b in pairs)


def sgd_losses(value_and_grad: Any, steps: int = 6, lr: float = 0.5) -> list[float]:
    params, losses = PARAMS, []
    for _ in range(steps):
        value, grads = value_and_grad(params, X1, X2)
        losses.append(float(value))
        params = plait.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return losses


@pytest.mark.parametrize("variant", list(LOSSES))
def test_revnet_value_and_grad_equal_ordinary_reverse_mode(variant: str) -> None:
    value, grads = plait.value_and_grad(LOSSES[variant])(PARAMS, X1, X2)
    want_value, want_grads = plait.value_and_grad(ORDINARY)(PARAMS, X1, X2)
    assert abs(float(value) - float(want_value)) <= 1e-5 * abs(float(want_value))
    assert relative_error(grads, want_grads) <= 1e-5


def test_revnet_trains_like_ordinary_reverse_mode_under_jit() -> None:
    want = sgd_losses(plait.jit(plait.value_and_grad(ORDINARY)))
    assert want[-1] < 0.8 * want[0]  # it does learn
    for variant, loss in LOSSES.items():
        got = sgd_losses(plait.jit(plait.value_and_grad(loss)))
        np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=variant)


# ---------------------------------------------------------------------------
# A function whose argument the output does not determine: exp(x) * 4 * x


def f_plain(x: Any) -> Any:
    return pnp.exp(x) * 4.0 * x


f_inv = plait.invertible(f_plain)
X = np.array([0.3, -0.7, 1.1, 0.05], np.float32)


def df(x: np.ndarray) -> np.ndarray:
    return np.asarray(4 * np.exp(x) * (1 + x))


def test_value_gradient_jvp_and_vjp() -> None:
    np.testing.assert_allclose(f_inv(X), np.exp(X) * 4 * X, rtol=1e-6)
    np.testing.assert_allclose(plait.grad(lambda v: f_inv(v).sum())(X), df(X), rtol=1e-5)
    tangent = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    out, out_t = plait.jvp(f_inv, (X,), (tangent,))
    np.testing.assert_allclose(out, np.exp(X) * 4 * X, rtol=1e-6)
    np.testing.assert_allclose(out_t, df(X) * tangent, rtol=1e-5)
    ct = np.array([2.0, -1.0, 0.25, -3.0], np.float32)
    (got,) = plait.vjp(f_inv, X)[1](ct)
    np.testing.assert_allclose(got, df(X) * ct, rtol=1e-5)


def test_some_inputs_a_second_output_and_pytrees() -> None:
    def two(a: Any, b: Any) -> tuple[Any, Any]:
        return pnp.exp(a) * 4.0 * a, b * 3.0 + pnp.sin(b)

    inv = plait.invertible(two)
    # Only the second output carries a gradient, and it does not depend on a.
    ga, gb = plait.grad(lambda a, b: inv(a, b)[1].sum(), argnums=(0, 1))(X, X + 1)
    np.testing.assert_allclose(ga, np.zeros(4), atol=0)
    np.testing.assert_allclose(gb, 3 + np.cos(X + 1), rtol=1e-5)
    # With respect to one input only.
    np.testing.assert_allclose(plait.grad(lambda a: inv(a, X)[0].sum())(X), df(X), rtol=1e-5)
    # Pytree inputs and outputs.
    tree = plait.invertible(lambda d: {"y": pnp.exp(d["a"]) * d["w"], "z": d["a"] + d["w"]})
    g = plait.grad(lambda d: tree(d)["y"].sum() + (tree(d)["z"] ** 2).sum())({"a": X, "w": X + 2})
    a, w = X.astype(np.float64), X.astype(np.float64) + 2
    np.testing.assert_allclose(g["a"], np.exp(a) * w + 2 * (a + w), rtol=1e-5)
    np.testing.assert_allclose(g["w"], np.exp(a) + 2 * (a + w), rtol=1e-5)


def test_under_jit_and_vmap() -> None:
    np.testing.assert_allclose(plait.grad(lambda v: plait.jit(f_inv)(v).sum())(X), df(X), rtol=1e-5)
    np.testing.assert_allclose(plait.jit(plait.grad(lambda v: f_inv(v).sum()))(X), df(X), rtol=1e-5)
    xs = np.stack([X, X - 0.5])
    per_row = plait.vmap(plait.grad(lambda v: f_inv(v).sum()))(xs)
    np.testing.assert_allclose(per_row, df(xs), rtol=1e-5)


# ---------------------------------------------------------------------------
# Weights as arguments under mask, piles and vmap


def small_block(w: dict[str, Any], x1: Any, x2: Any) -> tuple[Any, Any]:
    y1 = x1 + pnp.tanh(x2 @ w["f"])
    return y1, x2 + pnp.tanh(y1 @ w["g"])


SMALL_W = {k: (R.standard_normal((3, 3)) * 0.5).astype(np.float32) for k in "fg"}
S1, S2 = (R.standard_normal((5, 3)).astype(np.float32) for _ in range(2))


def small_loss(f: Any) -> Any:
    return lambda w, a, b: pnp.sum(f(w, a, b)[0] * f(w, a, b)[1])


def test_weights_as_arguments_under_mask_vmap_and_piles() -> None:
    with eager_backend("numpy"):  # op-by-op XLA would mostly measure compiling each small op
        check_mask_vmap_and_piles()


def check_mask_vmap_and_piles() -> None:
    inv = plait.invertible(small_block)
    spec = {"f": "(3, 3)", "g": "(3, 3)"}
    masked = plait.mask(
        lambda args: plait.grad(small_loss(inv), argnums=(0, 1))(*args),
        in_shapes=[(spec, "(n, 3)", "(n, 3)")],
        out_shape=(spec, "(n, 3)"),
    )
    got_w, got_x = masked([(SMALL_W, S1, S2)], {"n": 3})
    want_w, want_x = plait.grad(small_loss(small_block), argnums=(0, 1))(SMALL_W, S1[:3], S2[:3])
    np.testing.assert_allclose(got_w["f"], want_w["f"], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(got_x)[:3], want_x, rtol=1e-5)

    ws = {k: np.stack([v, 0.5 * v]) for k, v in SMALL_W.items()}
    got = plait.vmap(plait.grad(small_loss(inv)), in_axes=(0, None, None))(ws, S1, S2)
    want = plait.vmap(plait.grad(small_loss(small_block)), in_axes=(0, None, None))(ws, S1, S2)
    np.testing.assert_allclose(got["g"], want["g"], rtol=1e-5)

    pile = plait.Pile.from_arrays([S1[:2], S1[:4]])

    def per_element(f: Any) -> Any:
        return plait.vmap(plait.grad(lambda a: small_loss(f)(SMALL_W, a, 0.5 * a)), in_axes=plait.pile_axis,
                          out_axes=plait.pile_axis)  # fmt: skip

    for a, b in zip(per_element(inv)(pile).unpack(), per_element(small_block)(pile).unpack()):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_drift_under_jit_equals_eager() -> None:
    inv = plait.invertible(stack_of(block))
    eager = inv.drift(PARAMS[:2], X1, X2)
    jitted = plait.jit(inv.drift)(PARAMS[:2], X1, X2)
    assert sorted(eager["arguments"]) == sorted(jitted["arguments"]) == ["args[1]", "args[2]"]
    for k, e in eager["arguments"].items():
        assert float(e) < 1e-5 and float(jitted["arguments"][k]) < 1e-5


def test_check_reports_drift_from_compiled_code() -> None:
    def planted(scale: float) -> list[dict[str, Any]]:
        params: list[dict[str, Any]] = plait.tree_util.tree_map(lambda a: a, PARAMS[:2])  # fresh dicts
        params[0]["F"]["w2"] = params[0]["F"]["w2"] * np.float32(scale)
        return params

    checked = plait.invertible(stack_of(block), check=True)
    step = plait.jit(plait.grad(loss_of(checked)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        step(planted(1.0), X1, X2)
    with pytest.warns(plait.InvertibleDriftWarning, match=r"invertible function stack: .* \(args\[1\]: [\d.e+-]+\)"):
        step(planted(1e5), X1, X2)  # the same compiled program: the warning comes from running it
