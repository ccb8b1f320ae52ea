"""conv_general_dilated_local and conv_general_dilated_patches take a
ConvDimensionNumbers as JAX does (flax's LocallyConnected passes one) (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import lax

_DN = lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))  # NHWC, HWIO, NHWC
_STRINGS = ("NHWC", "HWIO", "NHWC")


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 6, 5, 3)).astype(np.float32)
    w = rng.standard_normal((5, 4, 3 * 2 * 2, 4)).astype(np.float32)
    return x, w


def test_local_conv_with_conv_dimension_numbers_is_the_string_form() -> None:
    x, w = _inputs()
    by_numbers = np.asarray(lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2), dimension_numbers=_DN))
    by_strings = np.asarray(lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2), dimension_numbers=_STRINGS))
    assert by_numbers.shape == (2, 5, 4, 4)
    np.testing.assert_array_equal(by_numbers, by_strings)
    # output position (0, 0) of batch 0: the 2x2x3 patch against that position's weights
    patch = x[0, 0:2, 0:2, :].transpose(2, 0, 1).reshape(-1)  # channel-major, as the patches' features
    np.testing.assert_allclose(by_numbers[0, 0, 0], patch @ w[0, 0], rtol=1e-5)


def test_patches_with_conv_dimension_numbers() -> None:
    x, _ = _inputs()
    p = np.asarray(lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID", dimension_numbers=_DN))
    q = np.asarray(lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID", dimension_numbers=_STRINGS))
    assert p.shape == (2, 5, 4, 12)
    np.testing.assert_array_equal(p, q)


def test_other_dimension_numbers_are_refused() -> None:
    x, w = _inputs()
    with pytest.raises(TypeError, match="dimension_numbers must be three strings, a ConvDimensionNumbers or None"):
        lax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2), dimension_numbers=(0, 1, 2))
