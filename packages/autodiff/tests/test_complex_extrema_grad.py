"""Derivatives of ``max``/``min`` of complex arrays (issue 25): as JAX's rule
for ``reduce_max``, the result's tangent is the mean of the tangents of the
elements equal to it, so the gradient lands on the lexicographic extreme."""

from __future__ import annotations

import numpy as np

import plait_autodiff as ad
from plait_core import numpy as pnp

C = np.array([[1 + 5j, 2 + 0j], [2 - 1j, 1 + 9j]], np.complex64)


def test_gradient_lands_on_the_lexicographic_maximum() -> None:
    g = np.asarray(ad.grad(lambda c: pnp.real(pnp.max(c)))(C))
    np.testing.assert_array_equal(g, np.array([[0, 1], [0, 0]], np.complex64))
    g = np.asarray(ad.grad(lambda c: pnp.sum(pnp.imag(pnp.min(c, axis=0))))(C))
    # JAX's convention for real-valued functions of complex inputs: d(imag z)/dz gives -1j.
    np.testing.assert_array_equal(g, np.array([[-1j, 0], [0, -1j]], np.complex64))


def test_ties_share_the_tangent() -> None:
    x = np.array([2 + 1j, 2 + 1j, 1 + 0j], np.complex64)
    _, tangent = ad.jvp(pnp.max, (x,), (np.array([1, 3, 100], np.complex64),))
    assert complex(tangent) == 2 + 0j
