"""Host callbacks under differentiation: a debug callback runs on the primal
values (once, in the forward pass of reverse mode) and does not change the
derivative; pure and io callbacks refuse a nonzero tangent with JAX's
ValueError and run as they are when nothing is differentiated through them."""

from __future__ import annotations

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
from plait_core import host_callbacks as hc


def test_debug_callback_sees_primals_and_keeps_the_derivative() -> None:
    seen: list[np.ndarray] = []

    def f(x: np.ndarray) -> object:
        hc.debug_callback(lambda v: seen.append(np.array(v)), x)
        return pc.lax.mul(x, x)

    x = np.array([1.0, 2.0, 3.0], np.float32)
    primal, tangent = ad.jvp(f, (x,), (np.ones(3, np.float32),))
    np.testing.assert_array_equal(np.asarray(primal), x * x)
    np.testing.assert_array_equal(np.asarray(tangent), 2 * x)
    g = ad.grad(lambda v: pc.lax.reduce_sum(f(v), (0,)))(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * x)
    assert len(seen) == 2
    for s in seen:
        np.testing.assert_array_equal(s, x)


def test_pure_and_io_callbacks_are_not_differentiable() -> None:
    sd = pc.ShapeDtypeStruct((), np.float32)
    with pytest.raises(ValueError, match=r"Pure callbacks \(pure_callback\) do not support differentiation"):
        ad.grad(lambda v: hc.pure_callback(np.sin, sd, v))(np.float32(1.0))
    with pytest.raises(ValueError, match=r"IO callbacks \(io_callback\) do not support differentiation"):
        ad.jvp(lambda v: hc.io_callback(np.cos, sd, v), (np.float32(1.0),), (np.float32(1.0),))


def test_callback_on_a_constant_inside_grad_runs() -> None:
    sd = pc.ShapeDtypeStruct((), np.float32)

    def f(x: object) -> object:
        scale = hc.pure_callback(lambda: np.float32(3.0), sd)
        return pc.lax.mul(scale, x)

    np.testing.assert_allclose(np.asarray(ad.grad(f)(np.float32(2.0))), 3.0)
