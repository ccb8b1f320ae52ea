"""The complex-number primitives and ``fft`` under vmap over piles: a ragged
leading axis is a batch of transforms; a ragged transformed axis is refused."""

from __future__ import annotations

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, vmap
from plait_core import lax

P = pile_axis
f32 = np.float32


def signals() -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [rng.standard_normal((n, 6)).astype(f32) for n in (2, 5, 3)]


def test_fft_over_the_last_axis_of_ragged_rows() -> None:
    out = vmap(lambda x: lax.fft(lax.complex(x, lax.neg(x)), "fft", (6,)), in_axes=P, out_axes=P)(
        Pile.from_arrays(signals())
    )
    for got, x in zip(out.unpack(), signals()):
        np.testing.assert_allclose(np.asarray(got), np.fft.fft(x - 1j * x, axis=-1), rtol=1e-5, atol=1e-5)


def test_rfft_magnitudes_of_ragged_rows() -> None:
    out = vmap(lambda x: pnp.abs(pnp.fft.rfft(x)), in_axes=P, out_axes=P)(Pile.from_arrays(signals()))
    for got, x in zip(out.unpack(), signals()):
        np.testing.assert_allclose(np.asarray(got), np.abs(np.fft.rfft(x)), rtol=1e-5, atol=1e-5)


def test_complex_parts_of_ragged_values() -> None:
    out = vmap(lambda x: lax.imag(lax.conj(lax.complex(x, 2.0 * x))), in_axes=P, out_axes=P)(
        Pile.from_arrays(signals())
    )
    for got, x in zip(out.unpack(), signals()):
        np.testing.assert_allclose(np.asarray(got), -2 * x, rtol=1e-6)


def test_fft_along_a_ragged_axis_is_refused() -> None:
    columns = Pile.from_arrays([x.T.copy() for x in signals()])  # ragged last axis
    with pytest.raises(ValueError, match=r"numpy.fft.fft: axis 1 has the symbolic size _pile\d+; .* not supported over a masked or ragged axis"):
        vmap(lambda x: pnp.fft.fft(x), in_axes=P, out_axes=P)(columns)
    with pytest.raises(ValueError, match=r"vmap over piles: fft transforms a ragged axis, which is not supported"):
        vmap(lambda x: lax.fft(x, "rfft", (8,)), in_axes=P, out_axes=P)(columns)
