"""Differentiating a ``custom_vjp`` function with respect to a value it closes over
raises ``CustomVJPException`` (JAX's ``jax._src.interpreters.ad.CustomVJPException``,
which diffrax's tests catch), eagerly and when the call is staged; it is also a
``TypeError``.  The same for ``custom_jvp`` stays a plain ``TypeError``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
from plait_core.custom_derivatives import CustomVJPException, custom_jvp, custom_vjp

Y = np.float32(3.0)


def _closes_vjp(x: Any) -> Any:
    @custom_vjp
    def g(v: Any) -> Any:
        return v * x

    g.defvjp(lambda v: (g(v), None), lambda _, ct: (ct * 2.0,))
    return g(Y)


def _closes_jvp(x: Any) -> Any:
    @custom_jvp
    def g(v: Any) -> Any:
        return v * x

    g.defjvp(lambda p, t: (p[0] * x, t[0] * x))
    return g(Y)


@pytest.mark.parametrize("staged", [False, True])
def test_custom_vjp_closure_is_a_custom_vjp_exception(staged: bool) -> None:
    f = (lambda x: pc.eval_jaxpr(pc.make_jaxpr(_closes_vjp)(x).jaxpr, [], x)[0]) if staged else _closes_vjp
    with pytest.raises(CustomVJPException, match="custom_vjp function g was differentiated with respect to a value it closes over"):
        ad.grad(f)(np.float32(2.0))
    assert issubclass(CustomVJPException, TypeError)


def test_custom_jvp_closure_stays_a_type_error() -> None:
    with pytest.raises(TypeError, match="custom_jvp function g was differentiated") as info:
        ad.grad(_closes_jvp)(np.float32(2.0))
    assert type(info.value) is TypeError


def test_the_rule_runs_when_the_closure_is_not_differentiated() -> None:
    assert float(ad.grad(lambda v: _closes_vjp(np.float32(5.0)) * v)(np.float32(1.0))) == pytest.approx(15.0)
