"""``has_aux``: the auxiliary output's leaves that are not traced values (strings,
Python scalars, NumPy arrays, any object) come back unchanged, as in JAX 0.10.2
(equinox's ``filter_grad(has_aux=True)`` of a function returning a label)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core.numpy as pnp

X3 = np.array([0.5, -1.25, 2.0], np.float32)
MARKER = object()


def with_aux(x: Any) -> Any:
    aux = {"label": "hi", "count": 3, "scale": 2.5, "none": None, "np": np.arange(2), "obj": MARKER, "sq": x * x}
    return pnp.sum(x**3), aux


def _check_aux(aux: dict[str, Any]) -> None:
    assert aux["label"] == "hi" and aux["count"] == 3 and type(aux["count"]) is int
    assert type(aux["scale"]) is float and aux["scale"] == 2.5
    assert aux["none"] is None and aux["obj"] is MARKER
    assert type(aux["np"]) is np.ndarray and aux["np"].tolist() == [0, 1]
    np.testing.assert_allclose(np.asarray(aux["sq"]), X3 * X3)  # a traced leaf: its primal value


def test_grad_and_value_and_grad_give_back_any_aux() -> None:
    g, aux = ad.grad(with_aux, has_aux=True)(X3)
    np.testing.assert_allclose(np.asarray(g), 3 * X3**2, rtol=1e-6)
    _check_aux(aux)
    (v, aux2), g2 = ad.value_and_grad(with_aux, has_aux=True)(X3)
    assert float(v) == pytest.approx(float(np.sum(X3**3)), rel=1e-6)
    np.testing.assert_allclose(np.asarray(g2), 3 * X3**2, rtol=1e-6)
    _check_aux(aux2)


def test_jvp_linearize_vjp_and_jacobians_give_back_any_aux() -> None:
    _, t, aux = ad.jvp(with_aux, (X3,), (np.ones(3, np.float32),), has_aux=True)
    assert float(t) == pytest.approx(float(np.sum(3 * X3**2)), rel=1e-6)
    _check_aux(aux)
    _, f_jvp, aux = ad.linearize(with_aux, X3, has_aux=True)
    _check_aux(aux)
    assert float(f_jvp(np.ones(3, np.float32))) == pytest.approx(float(np.sum(3 * X3**2)), rel=1e-6)
    _, pullback, aux = ad.vjp(with_aux, X3, has_aux=True)
    _check_aux(aux)
    np.testing.assert_allclose(np.asarray(pullback(np.float32(1.0))[0]), 3 * X3**2, rtol=1e-6)
    for jac in (ad.jacfwd, ad.jacrev):
        j, aux = jac(with_aux, has_aux=True)(X3)
        np.testing.assert_allclose(np.asarray(j), 3 * X3**2, rtol=1e-6)
        _check_aux(aux)


def test_a_string_output_that_is_not_aux_is_still_refused() -> None:
    with pytest.raises(TypeError, match=r"leaf 1 of type str.*only arrays and scalars can be differentiated"):
        ad.jvp(lambda x: (x, "hi"), (X3,), (X3,))
