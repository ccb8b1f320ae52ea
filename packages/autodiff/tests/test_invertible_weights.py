"""Invertible reverse mode on networks whose weights are arguments (issue 12):
what the backward pass keeps, custom_ivjp rules that see the weights, custom
derivative rules inside, what is stored, and the reconstruction-drift check."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_autodiff.rules.invertible import invertible_lin_p
from plait_core import InvertibleDriftWarning, custom_ivjp, custom_jvp, custom_vjp, invertible

R = np.random.default_rng(12)
W, H = 4, 6


def mlp(p: dict[str, Any], z: Any) -> Any:
    return pnp.tanh(z @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def block(p: dict[str, Any], x1: Any, x2: Any) -> tuple[Any, Any]:
    y1 = x1 + mlp(p["F"], x2)
    return y1, x2 + mlp(p["G"], y1)


def stack(params: list[dict[str, Any]], x1: Any, x2: Any) -> tuple[Any, Any]:
    for p in params:
        x1, x2 = block(p, x1, x2)
    return x1, x2


def half(scale: float = 1.0) -> dict[str, np.ndarray]:
    return {
        "w1": (R.standard_normal((W, H)) / np.sqrt(W)).astype(np.float32),
        "b1": (R.standard_normal(H) * 0.1).astype(np.float32),
        "w2": (R.standard_normal((H, W)) * scale / np.sqrt(H)).astype(np.float32),
        "b2": (R.standard_normal(W) * 0.1).astype(np.float32),
    }


def make_params(depth: int) -> list[dict[str, Any]]:
    return [{"F": half(), "G": half()} for _ in range(depth)]


def inputs(batch: int = 3) -> tuple[np.ndarray, np.ndarray]:
    return R.standard_normal((batch, W)).astype(np.float32), R.standard_normal((batch, W)).astype(np.float32)


def loss_of(f: Any) -> Any:
    return lambda p, a, b: (lambda y: (y[0] * y[1]).sum() + (y[0] ** 2).sum())(f(p, a, b))


def assert_trees_close(a: Any, b: Any, rtol: float = 1e-5) -> None:
    la, lb = pc.tree_util.tree_leaves(a), pc.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=1e-5)


def kept_flags(f: Any, *args: Any) -> tuple[bool, ...]:
    _, pullback = ad.vjp(lambda *a: loss_of(f)(*a), *args)
    (eqn,) = [e for e in pullback.linear.eqns if e.primitive is invertible_lin_p]
    flags: tuple[bool, ...] = eqn.params["known"]
    return flags


def test_weights_as_arguments_are_kept_and_get_their_gradients() -> None:
    params, (x1, x2) = make_params(3), inputs()
    got = ad.grad(loss_of(invertible(stack)), argnums=(0, 1, 2))(params, x1, x2)
    want = ad.grad(loss_of(stack), argnums=(0, 1, 2))(params, x1, x2)
    assert_trees_close(got, want)
    # Every weight is kept (8 leaves per block), both activations are rebuilt.
    assert kept_flags(invertible(stack), params, x1, x2) == (True,) * 24 + (False, False)
    # The backward program rebuilds each block's inputs by subtracting.
    _, pullback = ad.vjp(loss_of(invertible(stack)), params, x1, x2)
    names = [e.primitive.name for e in pc.make_jaxpr(pullback)(np.float32(1.0)).eqns]
    assert names.count("sub") >= 2 * 3


def test_an_activation_is_never_kept_for_a_bias_of_the_same_size() -> None:
    # A width-sized bias and a one-row batch cost the same bytes: the tie
    # keeps the earlier argument (the parameters), not the activation.
    params, (x1, x2) = make_params(2), inputs(batch=1)
    assert kept_flags(invertible(stack), params, x1, x2)[-2:] == (False, False)


def test_custom_ivjp_receives_the_weights_as_values() -> None:
    seen: list[tuple[Any, Any, Any]] = []
    blk = custom_ivjp(block)

    @blk.defivjp
    def _ivjp(xs: Any, ys: Any, dys: Any) -> Any:
        p, x1, x2 = xs
        seen.append((p, x1, x2))
        (y1, y2), (dy1, dy2) = ys, dys
        g, g_vjp = ad.vjp(mlp, p["G"], y1)
        x2 = y2 - g
        d_g, dy1_g = g_vjp(dy2)
        dy1 = dy1 + dy1_g
        f, f_vjp = ad.vjp(mlp, p["F"], x2)
        d_f, dx2_f = f_vjp(dy1)
        return (p, y1 - f, x2), ({"F": d_f, "G": d_g}, dy1, dy2 + dx2_f)

    def with_rule(params: Any, x1: Any, x2: Any) -> Any:
        for p in params:
            x1, x2 = blk(p, x1, x2)
        return x1, x2

    params, (x1, x2) = make_params(2), inputs()
    got = ad.grad(loss_of(invertible(with_rule)), argnums=(0, 1, 2))(params, x1, x2)
    want = ad.grad(loss_of(stack), argnums=(0, 1, 2))(params, x1, x2)
    assert_trees_close(got, want)
    assert len(seen) == 2
    for p, a, b in seen:
        # the nested dict of weights, as called; the activations are to rebuild
        assert sorted(p) == ["F", "G"] and sorted(p["F"]) == ["b1", "b2", "w1", "w2"]
        assert pc.tree_util.tree_structure(p) == pc.tree_util.tree_structure(params[0])
        assert all(leaf is not None for leaf in pc.tree_util.tree_leaves(p))
        assert a is None and b is None


def test_custom_derivative_rules_inside_are_used() -> None:
    # Rules that differ from the true derivative, so a bypass would show.
    @custom_jvp
    def act(x: Any) -> Any:
        return pnp.tanh(x)

    act.defjvp(lambda primals, tangents: (pnp.tanh(primals[0]), 2.0 * tangents[0]))

    @custom_vjp
    def clip(x: Any) -> Any:
        return x * 1.0

    clip.defvjp(lambda x: (x * 1.0, None), lambda _, g: (pnp.clip(g, -0.1, 0.1),))

    def blk(w: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
        y1 = x1 + act(x2 @ w)
        return y1, clip(x2) + y1 @ w

    w, (x1, x2) = half()["w1"][:, :W], inputs()
    got = ad.grad(loss_of(invertible(blk)), argnums=(0, 1, 2))(w, x1, x2)
    want = ad.grad(loss_of(blk), argnums=(0, 1, 2))(w, x1, x2)
    assert_trees_close(got, want)
    assert np.max(np.abs(np.asarray(want[2]))) > 0  # the clipped cotangent reached x2


def test_residuals_say_what_is_stored() -> None:
    params, (x1, x2) = make_params(2), inputs()
    stored = invertible(stack).residuals(params, x1, x2)
    assert sorted(stored.rebuilt) == ["args[1]", "args[2]"]
    assert "args[0][1]['G']['w2']" in stored.kept and len(stored.kept) == 16
    assert stored.kept["args[0][0]['F']['w1']"].shape == (W, H)
    weights = sum(np.asarray(v).nbytes for v in pc.tree_util.tree_leaves(params))
    assert stored.stored_bytes == weights + 2 * x1.nbytes  # the weights and the two outputs
    assert stored.intermediate_bytes > 10 * x1.nbytes
    assert "rebuilt args[1]: f32[3,4]" in str(stored)
    shapes = pc.tree_util.tree_map(lambda a: pc.ShapeDtypeStruct(a.shape, a.dtype), (params, x1, x2))
    assert invertible(stack).residuals(*shapes) == stored  # shapes are enough
    # An argument the outputs do not determine is kept, whatever its name.
    square = invertible(lambda v, s: (pnp.exp(v) * 4.0 * v, s + 1.0)).residuals(x1, x2)
    assert list(square.kept) == ["args[0]"] and list(square.rebuilt) == ["args[1]"]


def planted(scale: float) -> list[dict[str, Any]]:
    """Blocks whose F is multiplied by ``scale``: x1 = y1 - F(x2) cancels
    catastrophically when F is huge next to x1."""
    params = make_params(2)
    for p in params:
        p["F"]["w2"] = p["F"]["w2"] * np.float32(scale)
    return params


def test_drift_is_small_for_a_well_conditioned_stack_and_large_for_a_planted_one() -> None:
    x1, x2 = inputs()
    good = invertible(stack).drift(planted(1.0), x1, x2)
    assert sorted(good["arguments"]) == ["args[1]", "args[2]"]
    assert max(float(e) for e in good["arguments"].values()) < 1e-5
    bad = invertible(stack).drift(planted(1e5), x1, x2)
    assert float(bad["arguments"]["args[1]"]) > 1e-3


def test_drift_per_block() -> None:
    def blocked(params: Any, x1: Any, x2: Any) -> Any:
        for p in params:
            x1, x2 = invertible(block)(p, x1, x2)
        return x1, x2

    x1, x2 = inputs()
    params = planted(1.0)
    params[0]["F"]["w2"] = params[0]["F"]["w2"] * np.float32(1e5)  # only the first block is ill-conditioned
    report = invertible(blocked).drift(params, x1, x2)["blocks"]
    assert list(report) == ["equation 0: invertible_call block", "equation 1: invertible_call block"]
    first, second = (float(e) for e in report.values())
    assert first > 1e-3  # the inputs its inverse rebuilds drift
    assert second < 1e-5  # the second block's inputs are rebuilt well from the exact outputs


def test_check_warns_on_drift_and_stays_quiet_otherwise() -> None:
    x1, x2 = inputs()
    checked = invertible(stack, check=True)

    def grad_with(params: Any) -> Any:
        return ad.grad(lambda p: loss_of(checked)(p, x1, x2))(params)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grad_with(planted(1.0))
    with pytest.warns(
        InvertibleDriftWarning,
        match=r"invertible function stack: values rebuilt from its outputs drift .* tolerance 0.001 \(args\[1\]: ",
    ):
        grad_with(planted(1e5))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ad.grad(lambda p: loss_of(invertible(stack, check=0.5))(p, x1, x2))(planted(1e5))
