"""``nn.initializers`` with complex dtypes (flax's complex Dense), as JAX 0.10.2's:
``variance_scaling``'s three distributions and ``normal`` draw complex values of
the requested variance; ``zeros``/``ones`` take any dtype (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import random
from plait_core.nn_initializers import normal, ones, uniform, variance_scaling, zeros

SHAPE = (400, 300)  # fan_in 400


@pytest.mark.parametrize("distribution", ["normal", "uniform", "truncated_normal"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_variance_scaling_complex(distribution: str, dtype: type) -> None:
    z = np.asarray(variance_scaling(2.0, "fan_in", distribution, dtype=dtype)(random.key(3), SHAPE))
    assert z.dtype == np.complex64 and z.shape == SHAPE  # complex128 canonicalizes to complex64 (x64 off)
    variance = 2.0 / 400
    assert abs(np.mean(np.abs(z) ** 2) / variance - 1) < 0.03
    assert abs(np.mean(z)) < 0.01  # centred
    assert abs(np.mean(z.real ** 2) - np.mean(z.imag ** 2)) < 0.05 * variance  # no preferred direction
    if distribution == "uniform":  # uniform on the disk of radius sqrt(2 variance)
        assert np.max(np.abs(z)) <= np.sqrt(2 * variance) * (1 + 1e-6)
        inner = np.mean(np.abs(z) < np.sqrt(variance))  # the inner disk of half the area
        assert abs(inner - 0.5) < 0.01
    if distribution == "truncated_normal":
        assert np.max(np.abs(z)) <= 2 * np.sqrt(variance) / 0.95311164380491208 * (1 + 1e-6)


def test_variance_scaling_real_draws_are_unchanged_by_complex_support() -> None:
    real = np.asarray(variance_scaling(1.0, "fan_avg", "uniform")(random.key(0), (50, 40)))
    assert real.dtype == np.float32
    limit = np.sqrt(3 / 45)
    assert np.max(np.abs(real)) <= limit and np.min(real) < -0.9 * limit


def test_normal_complex_and_zeros_ones_any_dtype() -> None:
    z = np.asarray(normal(0.5)(random.key(1), (500, 400), np.complex64))
    assert z.dtype == np.complex64
    assert abs(np.var(z.real) - 0.125) < 0.01 and abs(np.var(z.imag) - 0.125) < 0.01
    assert np.asarray(zeros(None, (2,), np.int32)).tolist() == [0, 0]
    assert np.asarray(ones(None, (2,), np.complex64)).tolist() == [1 + 0j, 1 + 0j]


def test_non_inexact_dtypes_are_refused_with_the_reason() -> None:
    with pytest.raises(TypeError, match="variance_scaling: dtype must be a floating or complex type, got int32"):
        variance_scaling(1.0, "fan_in", "normal", dtype=np.int32)(random.key(0), (2, 2))
    with pytest.raises(TypeError, match="uniform: dtype must be a floating type, got complex64"):
        uniform()(random.key(0), (2,), np.complex64)
