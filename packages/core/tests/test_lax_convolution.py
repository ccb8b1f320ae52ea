"""lax.conv_transpose, conv_with_general_padding, the conv shape helpers and
lax.Precision, against NumPy loops written from the definitions."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import lax


def _transpose_1d(x: np.ndarray, k: np.ndarray, stride: int, lo: int, hi: int) -> np.ndarray:
    """x (N, W, C), k (K, C, O): dilate x by ``stride``, pad, correlate."""
    n, w, c = x.shape
    dil = np.zeros((n, (w - 1) * stride + 1, c), x.dtype)
    dil[:, ::stride] = x
    padded = np.pad(dil, ((0, 0), (lo, hi), (0, 0)))
    taps = k.shape[0]
    out = np.stack([np.einsum("nkc,kco->no", padded[:, i : i + taps], k) for i in range(padded.shape[1] - taps + 1)], 1)
    return out


@pytest.mark.parametrize(
    ("padding", "stride", "pads"),
    [("SAME", 2, (2, 1)), ("VALID", 2, (2, 2)), ("SAME", 4, (2, 3)), ([(1, 0)], 2, (1, 0))],
)
def test_conv_transpose_matches_dilated_correlation(padding: object, stride: int, pads: tuple[int, int]) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    k = rng.standard_normal((3, 3, 4)).astype(np.float32)
    y = np.asarray(lax.conv_transpose(x, k, (stride,), padding))  # type: ignore[arg-type]
    np.testing.assert_allclose(y, _transpose_1d(x, k, stride, *pads), rtol=1e-5, atol=1e-5)
    if padding == "SAME":
        assert y.shape[1] == 5 * stride


def test_conv_transpose_consistent_padding_and_kernel_transpose() -> None:
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 4, 2)).astype(np.float32)
    k = rng.standard_normal((3, 5, 2)).astype(np.float32)  # (K, O, I) read as HIO after the swap
    y = np.asarray(lax.conv_transpose(x, k, (2,), [(1, 1)], transpose_kernel=True, use_consistent_padding=True))
    # Forward padding (1, 1) with a 3-tap kernel pads the dilated input by (1, 1).
    flipped = k[::-1].transpose(0, 2, 1)
    np.testing.assert_allclose(y, _transpose_1d(x, flipped, 2, 1, 1), rtol=1e-5, atol=1e-5)


def test_conv_transpose_errors() -> None:
    x = np.zeros((1, 4, 2), np.float32)
    with pytest.raises(ValueError, match="unknown padding 'FULL'"):
        lax.conv_transpose(x, np.zeros((3, 2, 2), np.float32), (1,), "FULL")
    with pytest.raises(ValueError, match="same rank"):
        lax.conv_transpose(x, np.zeros((3, 2), np.float32), (1,), "SAME")
    with pytest.raises(ValueError, match="no default dimension_numbers for operands of rank 6"):
        lax.conv_transpose(np.zeros((1,) * 6), np.zeros((1,) * 6), (1,) * 4, "SAME")


def test_conv_with_general_padding_is_conv_general_dilated() -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 6)).astype(np.float32)
    k = rng.standard_normal((3, 2, 2)).astype(np.float32)
    got = lax.conv_with_general_padding(x, k, (1,), [(1, 2)], (2,), (2,), precision=lax.Precision.HIGHEST)
    want = lax.conv_general_dilated(x, k, (1,), [(1, 2)], (2,), (2,))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert np.asarray(got).shape == (1, 3, 12)


def test_conv_shape_tuples() -> None:
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((2, 5, 6, 3), (3, 3, 3, 4), (2, 1), "SAME", dn) == (2, 3, 6, 4)
    assert lax.conv_general_shape_tuple((2, 5, 6, 3), (3, 3, 3, 4), (1, 1), "VALID", dn) == (2, 3, 4, 4)
    assert lax.conv_transpose_shape_tuple((2, 5, 6, 3), (3, 3, 3, 4), (2, 1), "SAME", dn) == (2, 10, 6, 4)
    assert lax.conv_transpose_shape_tuple((2, 5, 6, 3), (3, 3, 3, 4), (2, 1), "VALID", dn) == (2, 11, 8, 4)
    assert lax.conv_shape_tuple((1, 2, 7), (4, 2, 3), (2,), [(1, 1)], batch_group_count=1) == (1, 4, 4)
    with pytest.raises(ValueError, match="negative padding"):
        lax.conv_shape_tuple((1, 2, 3), (4, 2, 3), (1,), [(-2, -2)])
    # The shape helpers agree with the convolutions themselves.
    x, k = np.zeros((2, 5, 6, 3), np.float32), np.zeros((3, 3, 3, 4), np.float32)
    assert np.asarray(lax.conv_transpose(x, k, (2, 1), "VALID")).shape == (2, 11, 8, 4)


def test_precision_enum_and_aliases() -> None:
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("float32") is lax.Precision.HIGHEST
    assert lax.Precision("tensorfloat32") is lax.Precision.HIGH
    assert lax.Precision("fastest") is lax.Precision.DEFAULT
    assert lax.Precision(None) is lax.Precision.DEFAULT
    assert repr(lax.Precision.HIGH) == "Precision.HIGH" and str(lax.Precision.HIGH) == "HIGH"
    with pytest.raises(ValueError, match="Precision"):
        lax.Precision("sloppy")
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for p in (lax.Precision.HIGHEST, (lax.Precision.HIGH, lax.Precision.DEFAULT), "bfloat16_3x"):
        np.testing.assert_allclose(np.asarray(lax.dot(a, a.T, precision=p)), a @ a.T)
