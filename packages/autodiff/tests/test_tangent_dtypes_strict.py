"""A tangent's dtype must be its primal's tangent dtype exactly, as in JAX 0.10.2:
a weakly typed value (``jnp.array(5)``, a Python scalar) is not converted
(equinox's ``filter_jvp`` tests expect the TypeError)."""

from __future__ import annotations

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core.numpy as pnp


@pytest.mark.parametrize(
    ("primal", "tangent", "says"),
    [
        (np.float32(1.0), pnp.array(5), "tangent leaf 0 has dtype int32, but its primal has type f32"),
        (np.float32(1.0), 2, "tangent leaf 0 has dtype int32, but its primal has type f32"),
        (np.float16(1.0), 1.0, "tangent leaf 0 has dtype float32, but its primal has type f16"),
        (np.float32(1.0), True, "tangent leaf 0 has dtype bool, but its primal has type f32"),
    ],
)
def test_a_tangent_of_another_dtype_is_refused(primal: object, tangent: object, says: str) -> None:
    with pytest.raises(TypeError, match=says):
        ad.jvp(lambda x: x * 2, (primal,), (tangent,))


def test_a_tangent_of_the_primals_dtype_is_used() -> None:
    out, t = ad.jvp(lambda x: x * 2, (1.0,), (1.5,))
    assert (float(out), float(t)) == (2.0, 3.0)
    out, t = ad.jvp(lambda x: x * x, (np.float16(3.0),), (np.float16(1.0),))
    assert (float(out), float(t), np.asarray(t).dtype) == (9.0, 6.0, np.float16)


def test_a_cotangent_of_another_dtype_is_refused() -> None:
    _, pullback = ad.vjp(lambda x: x * 2, np.float16(1.0))
    with pytest.raises(TypeError, match="cotangent leaf 0 has dtype float32, but its primal has type f16"):
        pullback(1.0)
    assert float(pullback(np.float16(1.0))[0]) == 2.0
