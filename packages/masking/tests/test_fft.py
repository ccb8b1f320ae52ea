"""``fft`` and the complex-number primitives under ``mask``: a masked leading
axis is a batch of transforms; a masked transformed axis is refused."""

from __future__ import annotations

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import lax
from plait_masking import mask

rng = np.random.default_rng(3)


def test_rfft_of_masked_rows_matches_the_logical_rows() -> None:
    padded = rng.standard_normal((7, 8)).astype(np.float32)
    masked = mask(lambda x: pnp.abs(pnp.fft.rfft(x)) ** 2, ["(n, 8)"], "(n, 5)")
    for n in (1, 4, 7):
        got = np.asarray(masked([padded], {"n": n}))[:n]
        np.testing.assert_allclose(got, np.abs(np.fft.rfft(padded[:n])) ** 2, rtol=1e-4, atol=1e-4)


def test_complex_parts_pass_through_mask() -> None:
    padded = rng.standard_normal((6,)).astype(np.float32)
    masked = mask(lambda x: lax.real(lax.fft(lax.complex(x, x), "ifft", (6,)) * lax.conj(lax.complex(x, 1.0))),
                  ["(6,)"], "(6,)")  # fmt: skip
    want = np.real(np.fft.ifft(padded + 1j * padded) * (padded - 1j))
    np.testing.assert_allclose(np.asarray(masked([padded], {})), want, rtol=1e-5, atol=1e-5)


def test_fft_over_a_masked_axis_is_refused() -> None:
    padded = np.ones((3, 8), np.float32)
    with pytest.raises(ValueError, match=r"numpy.fft.fft: axis 1 has the symbolic size n; .* not supported over a masked or ragged axis"):
        mask(lambda x: pnp.fft.fft(x), ["(3, n)"], "(3, n)")([padded], {"n": 5})
    with pytest.raises(ValueError, match=r"fft: fft_lengths \(n,\) has the symbolic size n; .* not supported over a masked or ragged axis"):
        mask(lambda x: lax.fft(x, "rfft", (x.shape[1],)), ["(3, n)"], "(3, n)")([padded], {"n": 5})
    with pytest.raises(ValueError, match=r"fft: the operand f32\[3,n\] has the symbolic size n in a transformed axis; .* not supported over a masked or ragged axis"):
        mask(lambda x: lax.fft(x, "rfft", (8,)), ["(3, n)"], "(3, 5)")([padded], {"n": 5})
