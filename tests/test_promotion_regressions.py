"""The dtype and weak-type differences from JAX 0.10.2 reported in issue 11.

Each case runs eagerly and under ``jit`` and asserts JAX's dtype and weak
type (what JAX 0.10.2 gives, confirmed against it) and the value (a NumPy
oracle).  ``x`` is a strong float32 vector, ``h`` float16, ``i`` int32 and
``b`` bool.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import grad, jit, jvp, nn

X = np.array([1.5, -2.0, 3.0], np.float32)
H = np.array([1.0, 2.0, 3.0], np.float16)
I = np.array([1, 2, 3], np.int32)  # noqa: E741 - the issue's name
B = np.array([True, False, True])
I8 = np.array([1, 2, 3], np.int8)


def _x() -> Any:
    return pnp.asarray(X)


def _weak_f32() -> Any:
    return pnp.full((3,), 2.5)  # a weakly typed float32 vector


CASES: dict[str, tuple[Callable[[], Any], str, bool, Any]] = {
    # name: (program, JAX's dtype, JAX's weak type, NumPy oracle)
    "at[:].set(1.5) is strong": (lambda: _x().at[:].set(1.5), "float32", False, np.full(3, 1.5, np.float32)),
    "at[:].set(1.5) + h is float32": (
        lambda: _x().at[:].set(1.5) + pnp.asarray(H), "float32", False, 1.5 + H.astype(np.float32)),
    "at[0].set of a weak array stays weak": (
        lambda: _weak_f32().at[0].set(1.0), "float32", True, np.array([1.0, 2.5, 2.5], np.float32)),
    "max(w, axis=0) is strong": (lambda: pnp.max(_weak_f32(), axis=0), "float32", False, np.float32(2.5)),
    "sum(w, axis=0) is strong": (lambda: pnp.sum(_weak_f32(), axis=0), "float32", False, np.float32(7.5)),
    "max(w, axis=0) + float16 is float32": (
        lambda: pnp.max(_weak_f32(), axis=0) + pnp.float16(1), "float32", False, np.float32(3.5)),
    "power(weak 2.0, i) is strong": (
        lambda: pnp.power(pnp.asarray(2.0), pnp.asarray(I)), "float32", False, 2.0 ** I.astype(np.float32)),
    "b ** 2 is strong int32": (lambda: pnp.asarray(B) ** 2, "int32", False, B.astype(np.int32)),
    "(b ** 2) + int8 is int32": (
        lambda: (pnp.asarray(B) ** 2) + pnp.asarray(I8), "int32", False, B.astype(np.int32) + I8),
    "jvp of a weak constant output has a weak tangent": (
        lambda: jvp(lambda x: 3.0 - (x >= 0), (_x(),), (_x(),))[1], "float32", True, np.zeros(3, np.float32)),
    "i >= i * 0.5 is a weak bool": (
        lambda: pnp.asarray(I) >= pnp.asarray(I) * 0.5, "bool", True, I >= I * 0.5),
    "uint32 + int32 is int32 (x64 off)": (
        lambda: pnp.asarray(np.array([7], np.uint32)) + pnp.asarray(np.array([-2], np.int32)),
        "int32", False, np.array([5], np.int32)),
    "square(b) is int32": (lambda: pnp.square(pnp.asarray(B)), "int32", False, B.astype(np.int32)),
    "softplus(b) is a weak float32": (
        lambda: nn.softplus(pnp.asarray(B)), "float32", True, np.log1p(np.exp(B.astype(np.float32)))),
    "grad of x.at[0].mul(x[1])": (
        lambda: grad(lambda x: pnp.sum(x.at[0].mul(x[1])))(_x()),
        "float32", False, np.array([X[1], X[0] + 1.0, 1.0], np.float32)),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_issue_case(name: str, mode: str) -> None:
    program, dtype, weak, expected = CASES[name]
    out = program() if mode == "eager" else jit(program)()
    assert out.dtype == np.dtype(dtype), (out.dtype, dtype)
    assert out.weak_type is weak
    np.testing.assert_allclose(np.asarray(out), np.asarray(expected), rtol=1e-6)


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_round_of_booleans_is_a_value_error(mode: str) -> None:
    b = pnp.asarray(B)
    with pytest.raises(ValueError, match="round: booleans cannot be rounded"):
        pnp.round(b) if mode == "eager" else jit(pnp.round)(b)


def test_scatter_mul_with_repeated_indices_differentiates_in_both_arguments() -> None:
    x = pnp.asarray(np.array([1.5, -2.0, 3.0, 0.5], np.float32))
    y = pnp.asarray(np.array([2.0, 3.0, -1.0], np.float32))
    idx = np.array([0, 0, 2])

    def f(x: Any, y: Any) -> Any:
        return pnp.sum(x.at[idx].mul(y) ** 2)

    gx, gy = jit(grad(f, argnums=(0, 1)))(x, y)
    xs, ys = np.asarray(x, np.float64), np.asarray(y, np.float64)
    # out = [x0*y0*y1, x1, x2*y2, x3]; d sum(out**2)
    want_x = 2 * np.array([xs[0] * (ys[0] * ys[1]) ** 2, xs[1], xs[2] * ys[2] ** 2, xs[3]])
    want_y = 2 * np.array([xs[0] ** 2 * ys[0] * ys[1] ** 2, xs[0] ** 2 * ys[0] ** 2 * ys[1], xs[2] ** 2 * ys[2]])
    np.testing.assert_allclose(np.asarray(gx), want_x, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gy), want_y, rtol=1e-5)
    # and under vmap, over a batch of updates
    gys = plait.vmap(grad(f, argnums=1), in_axes=(None, 0))(x, pnp.stack([y, y * 2]))
    np.testing.assert_allclose(np.asarray(gys[0]), want_y, rtol=1e-5)


def test_weak_booleans_promote_to_a_strong_bool() -> None:
    # found by the fuzzer (seed 741000081): a comparison of weak values is a weak bool, as in JAX, but NumPy-level
    # promotion of weak booleans gives a strong bool (JAX's result_type drops the weak flag of bool)
    b = pnp.asarray(np.array([True, False]))
    weak = b >= 3
    assert weak.dtype == np.bool_ and weak.weak_type
    for out in (pnp.maximum(weak, weak), pnp.minimum(weak, weak), weak + weak, weak & weak,
                pnp.where(weak, weak, weak), weak == weak):
        assert out.dtype == np.bool_ and not out.weak_type
    assert pnp.result_type(weak, weak) == np.bool_
    assert plait.numpy.result_type(weak, weak, return_weak_type_flag=True) == (np.bool_, False)
    assert plait.jit(lambda w: pnp.maximum(w, w))(weak).weak_type is False


def test_triu_of_a_weak_value_stays_weak_with_its_values() -> None:
    # found by the fuzzer (seed 7519000525): triu/tril zeroed with a strong zero, so the result lost its weak type
    w = pnp.where(pnp.asarray(I) > 1, pnp.asarray(I), 0.0)  # int32 with a Python float: weak float32
    assert w.dtype == np.float32 and w.weak_type
    m = pnp.broadcast_to(w, (3, 3))
    for fn, np_fn in ((pnp.triu, np.triu), (pnp.tril, np.tril)):
        for out in (fn(m), jit(fn)(m)):
            assert out.dtype == np.float32 and out.weak_type
            np.testing.assert_array_equal(np.asarray(out), np_fn(np.broadcast_to(np.where(I > 1, I, 0.0), (3, 3))))


def test_clip_and_interp_refuse_complex_values_with_value_error() -> None:
    # as JAX 0.10.2: complex numbers have no order (both raise ValueError there too)
    c = pnp.asarray(np.array([1 + 1j, 2.0], np.complex64))
    with pytest.raises(ValueError, match="clip: complex numbers have no order"):
        pnp.clip(c, 0, 1)
    with pytest.raises(ValueError, match="clip: complex numbers have no order"):
        pnp.clip(pnp.asarray(X), 0j, 1)
    with pytest.raises(ValueError, match="interp: complex x values are not supported"):
        pnp.interp(c, pnp.asarray(X[:2]), pnp.asarray(X[:2]))
    xs = np.array([1.2, 1.7, 0.5, 2.5], np.float32)
    out = pnp.interp(pnp.asarray(xs), pnp.asarray(np.array([1.0, 2.0], np.float32)), c, left=-1j)  # complex fp
    assert out.dtype == np.complex64
    np.testing.assert_allclose(np.asarray(out), np.interp(xs, [1.0, 2.0], np.asarray(c), left=-1j), rtol=1e-6)
    hard = nn.hard_tanh(c)  # lexicographic order, as JAX's hard_tanh
    assert hard.dtype == np.complex64


def test_det_of_half_precision_is_computed_in_float32() -> None:
    a = np.array([[2.0, 1.0], [0.5, 3.0]], np.float16)
    out = pnp.linalg.det(pnp.asarray(a))
    assert out.dtype == np.float16
    assert float(out) == pytest.approx(5.5, rel=1e-3)
