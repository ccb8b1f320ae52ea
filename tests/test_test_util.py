"""plait.test_util: check_grads, check_jvp and check_vjp accept correct
derivatives and raise AssertionError on wrong ones."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait.test_util import check_grads, check_jvp, check_vjp

X = np.array([0.3, -1.2, 2.0], np.float32)


def test_correct_functions_pass_to_second_order() -> None:
    check_grads(lambda x: pnp.sin(x) * pnp.exp(x), (X,), order=2)
    check_grads(lambda x, y: {"s": pnp.sum(x * y), "t": pnp.tanh(x) - y}, (X, X[::-1].copy()), order=2)
    check_grads(lambda x: pnp.log1p(x * x), (np.float64(0.7),), order=3, modes=["rev"])
    check_grads(lambda z: z * pnp.conj(z) + pnp.sin(z), (np.array([1 + 2j, -0.5j], np.complex64),), order=1)


def _wrong_rule(scale: float) -> Any:
    @plait.custom_jvp
    def f(x: Any) -> Any:
        return pnp.sin(x)

    @f.defjvp
    def f_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return pnp.sin(x), scale * pnp.cos(x) * t

    return f


def test_a_wrong_custom_jvp_is_reported() -> None:
    check_grads(_wrong_rule(1.0), (X,), order=1)
    with pytest.raises(AssertionError, match="JVP tangent"):
        check_grads(_wrong_rule(1.5), (X,), order=1, modes=["fwd"])
    with pytest.raises(AssertionError, match="VJP cotangent projection"):
        check_grads(_wrong_rule(1.5), (X,), order=1, modes=["rev"])


def test_second_order_error_is_named() -> None:
    @plait.custom_jvp
    def square(x: Any) -> Any:
        return x * x

    @square.defjvp
    def square_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return x * x, 3 * x * t  # wrong: the derivative of x * x is 2 x

    @plait.custom_jvp
    def g(x: Any) -> Any:
        return x * x * x

    @g.defjvp
    def g_jvp(primals: Any, tangents: Any) -> Any:
        (x,), (t,) = primals, tangents
        return x * x * x, 3 * square(x) * t  # right, but its own derivative uses the wrong rule

    check_grads(g, (X,), order=1, modes=["fwd"])
    with pytest.raises(AssertionError, match="JVP of JVP"):
        check_grads(g, (X,), order=2, modes=["fwd"])


def test_check_jvp_and_check_vjp_directly() -> None:
    f = pnp.cos
    check_jvp(f, lambda p, t: plait.jvp(f, p, t), (X,))
    check_vjp(f, lambda *a: plait.vjp(f, *a), (X,))
    with pytest.raises(AssertionError, match="tangent"):
        check_jvp(f, lambda p, t: (f(*p), 2.0 * plait.jvp(f, p, t)[1]), (X,))
    with pytest.raises(AssertionError, match="primal"):
        check_vjp(f, lambda *a: (pnp.sin(*a), plait.vjp(f, *a)[1]), (X,))


def test_tolerances_and_bad_arguments() -> None:
    check_grads(_wrong_rule(1.01), (X,), order=1, atol=0.5, rtol=0.5)
    with pytest.raises(ValueError, match="order must be a positive integer"):
        check_grads(pnp.sin, (X,), order=0)
    with pytest.raises(ValueError, match="modes must be 'fwd' and/or 'rev'"):
        check_grads(pnp.sin, (X,), order=1, modes=["forward"])
