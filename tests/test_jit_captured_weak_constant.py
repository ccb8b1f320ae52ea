"""A weakly typed array a jitted function closes over keeps its weak type, as in JAX
0.10.2: returned from ``jit`` it is still weak, and it still promotes as a weak value
(diffrax's solutions store ``direction = jnp.where(t0 < t1, 1, -1)`` computed from
static times; ``t * direction`` on float64 times is then allowed under strict
promotion)."""

from __future__ import annotations

import numpy as np
import pytest

import plait
import plait.numpy as jnp


def test_a_closed_over_weak_array_is_returned_weak() -> None:
    d = jnp.where(True, 1, -1)
    assert plait.typeof(d).weak_type
    out = plait.jit(lambda: d)()
    assert plait.typeof(out).weak_type and out.dtype == np.int32 and int(out) == 1
    out = plait.jit(lambda x: (x * d, d))(np.float32(2.0))
    assert plait.typeof(out[1]).weak_type and plait.typeof(out[0]).dtype == np.float32


def test_a_closed_over_strong_array_stays_strong() -> None:
    s = jnp.asarray(np.int32(3))
    assert not plait.typeof(plait.jit(lambda: s)()).weak_type


def test_the_returned_weak_constant_promotes_as_weak_under_strict_promotion() -> None:
    d = plait.jit(lambda: jnp.where(True, 1, -1))()
    with plait.numpy_dtype_promotion("strict"):
        out = plait.jit(lambda t, d: t * d)(jnp.linspace(0.0, 1.0, 3), d)
        np.testing.assert_allclose(np.asarray(out), [0.0, 0.5, 1.0])
        with pytest.raises(Exception, match="no implicit promotion"):
            plait.jit(lambda t, s: t * s)(jnp.linspace(0.0, 1.0, 3), jnp.asarray(np.int32(1)))
