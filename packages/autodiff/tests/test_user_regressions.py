"""Regressions found by porting JAX programs to plait (autodiff's part)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_core import invertible, lax


def _coupling(w: Any, x1: Any, x2: Any) -> tuple[Any, Any]:
    return x1 + pnp.tanh(x2 @ w), x2


def test_weight_passed_to_an_invertible_function_is_kept_and_differentiated() -> None:
    # A JAX user writes blocks as block(params, x1, x2); a weight cannot be
    # rebuilt from the outputs, so the backward pass keeps it (issue 12).
    w = np.full((3, 3), 0.3, np.float32)
    x1 = np.arange(15, dtype=np.float32).reshape(5, 3) / 10
    x2 = np.ones((5, 3), np.float32)

    def rev_loss(w: Any, a: Any, b: Any) -> Any:
        return pnp.sum(invertible(_coupling)(w, a, b)[0] ** 2)

    def loss(w: Any, a: Any, b: Any) -> Any:
        return pnp.sum(_coupling(w, a, b)[0] ** 2)

    got = ad.grad(rev_loss, argnums=(0, 1, 2))(w, x1, x2)
    want = ad.grad(loss, argnums=(0, 1, 2))(w, x1, x2)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5)


def test_closed_over_weight_is_the_remedy_and_matches_ordinary_grad() -> None:
    w = np.full((3, 3), 0.3, np.float32)
    x1 = np.arange(15, dtype=np.float32).reshape(5, 3) / 10
    x2 = np.ones((5, 3), np.float32)

    def rev_loss(w: Any, a: Any, b: Any) -> Any:
        return pnp.sum(invertible(lambda p, q: _coupling(w, p, q))(a, b)[0] ** 2)

    def loss(w: Any, a: Any, b: Any) -> Any:
        return pnp.sum(_coupling(w, a, b)[0] ** 2)

    got = ad.grad(rev_loss, argnums=(0, 1, 2))(w, x1, x2)
    want = ad.grad(loss, argnums=(0, 1, 2))(w, x1, x2)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5)


def test_body_that_is_not_invertible_keeps_its_argument() -> None:
    # What the outputs do not determine is kept, never an error (issue 12).
    def bad(x: Any) -> Any:
        return pnp.maximum(x, 0.0) * 0.0 + x * 2.0

    x = np.array([-1.0, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(ad.grad(lambda x: pnp.sum(invertible(bad)(x)))(x), np.full(3, 2.0), rtol=1e-6)


# ---------------------------------------------------------------------------
# float() / numpy.asarray() of a differentiated value dropped its derivative
# silently (grad(lambda x: float(x) * x) gave x instead of 2x); as in JAX they
# are errors, while discrete conversions (bool, int, indexing) keep working.


@pytest.mark.parametrize(
    "convert, what",
    [(float, r"float\(\)"), (np.asarray, r"numpy.asarray\(\)"), (complex, r"complex\(\)")],
)
def test_float_conversion_of_a_differentiated_value_is_an_error(convert: Any, what: str) -> None:
    with pytest.raises(pc.ConcretizationTypeError, match=rf"{what} of a value being differentiated \(f32\[\]\)"):
        ad.grad(lambda x: convert(x) * x)(np.float32(2.0))
    with pytest.raises(pc.ConcretizationTypeError, match="would drop its derivative"):
        ad.jvp(lambda x: x * convert(x), (np.float32(2.0),), (np.float32(1.0),))


def test_discrete_conversions_of_a_differentiated_value_still_work() -> None:
    x = np.float32(2.0)
    assert float(ad.grad(lambda v: v * int(v))(x)) == 2.0
    assert float(ad.grad(lambda v: v if v > 0 else -v)(x)) == 1.0
    assert float(ad.grad(lambda v: pnp.arange(5.0)[v.astype(np.int32)] * v)(x)) == 2.0
    # stop_gradient makes the float conversion explicit and allowed: d/dx (2 * x) = 2.
    assert float(ad.grad(lambda v: float(lax.stop_gradient(v)) * v)(x)) == 2.0
    # building arrays from differentiated scalars is not a conversion.
    np.testing.assert_allclose(np.asarray(ad.grad(lambda v: pnp.sum(pnp.array([v, 2 * v])))(x)), 3.0)


# ---------------------------------------------------------------------------
# nn activations: JAX's derivatives at the kinks (relu'(0) = 0, not the 1/2 of
# maximum's tie rule; elu'(0) = alpha), and no NaN derivative of celu for
# large inputs (expm1 of a large x overflowed: inf * 0).


_SELU_A, _SELU_S = 1.6732632423543772, 1.0507009873554805

# NumPy derivatives away from the kinks.
_DERIVATIVES: dict[str, Any] = {
    "relu": lambda x: (x > 0) * 1.0,
    "relu6": lambda x: ((x > 0) & (x < 6)) * 1.0,
    "elu": lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0))),
    "selu": lambda x: _SELU_S * np.where(x > 0, 1.0, _SELU_A * np.exp(np.minimum(x, 0))),
    "celu": lambda x: np.where(x > 0, 1.0, np.exp(np.minimum(x, 0))),
    "hard_sigmoid": lambda x: ((x > -3) & (x < 3)) / 6.0,
}


@pytest.mark.parametrize(
    "name, at_kinks",
    [
        ("relu", {0.0: 0.0}),
        ("relu6", {0.0: 0.0, 6.0: 0.0}),
        ("elu", {0.0: 1.0}),
        ("selu", {0.0: _SELU_S * _SELU_A}),
        ("celu", {0.0: 1.0}),
        ("hard_sigmoid", {-3.0: 0.0, 3.0: 0.0}),
    ],
)
def test_activation_derivatives(name: str, at_kinks: dict[float, float]) -> None:
    fn = getattr(pc.nn, name)
    smooth = np.array([-100.0, -7.0, -2.5, -0.5, 0.25, 2.0, 5.0, 8.0, 100.0], np.float32)
    got = np.array([float(ad.grad(fn)(v)) for v in smooth])
    np.testing.assert_allclose(got, _DERIVATIVES[name](smooth.astype(np.float64)), rtol=1e-4, atol=1e-30)
    for x, d in at_kinks.items():
        np.testing.assert_allclose(float(ad.grad(fn)(np.float32(x))), d, rtol=1e-6)


def test_ties_of_cummin_share_the_tangent_along_the_parallel_prefix_tree() -> None:
    # found by the fuzzer (seed 748000670): plait's doubling scan split the cotangent of tied entries
    # differently from JAX, which differentiates the work-efficient prefix tree. For x = [2, -1, -1, -1, -1],
    # with p0 = min(x0, x1), p1 = min(x2, x3), q0 = min(p0, p1), the tree's outputs are y0 = x0, y1 = p0,
    # y2 = min(p0, x2), y3 = q0, y4 = min(q0, x4), and each tied min halves its cotangent:
    # x1 gets w1 + w2/2 + w3/2 + w4/4, x2 gets w2/2 + w3/4 + w4/8, x3 gets w3/4 + w4/8, x4 gets w4/2.
    w = np.array([0.3, -0.7, 0.5, 0.2, 0.9], np.float32)
    x = pnp.asarray(np.array([2.0, -1.0, -1.0, -1.0, -1.0], np.float32))
    got = np.asarray(ad.grad(lambda x: pnp.sum(pc.lax.cummin(x, axis=0) * w))(x))
    w0, w1, w2, w3, w4 = (float(v) for v in w)
    want = [w0, w1 + w2 / 2 + w3 / 2 + w4 / 4, w2 / 2 + w3 / 4 + w4 / 8, w3 / 4 + w4 / 8, w4 / 2]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # reversed, cummax of the negation mirrors it
    flipped = np.asarray(ad.grad(lambda x: pnp.sum(pc.lax.cummax(-x, axis=0, reverse=True) * w[::-1]))(x[::-1]))
    np.testing.assert_allclose(flipped, -np.asarray(want)[::-1], rtol=1e-6)


def test_tanh_derivative_keeps_its_precision_where_tanh_nears_one() -> None:
    # 1 - y*y loses up to ~700 ulps where |y| nears 1, and JAX's reverse mode
    # (g*(1-y) + g*(1-y)*y) cancels as y nears -1; (1 - y)(1 + y) is within
    # an ulp or two of the exact derivative at the computed y, at both ends,
    # in forward and reverse mode.
    x = np.linspace(-9, 9, 4001).astype(np.float32)
    y = np.asarray(pnp.tanh(x)).astype(np.float64)
    exact = (1 - y) * (1 + y)
    back = np.asarray(ad.grad(lambda v: pnp.sum(pnp.tanh(v)))(x)).astype(np.float64)
    fwd = np.asarray(ad.jvp(pnp.tanh, (x,), (np.ones_like(x),))[1]).astype(np.float64)
    for got in (back, fwd):
        assert np.max(np.abs(got - exact) / exact) < 4e-7
