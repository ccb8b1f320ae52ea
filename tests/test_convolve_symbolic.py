"""``convolve``/``correlate`` of a symbolic length (found by the fuzzer: they
refused any symbolic ``a``): ``mask`` against the logical slice, piles
against a loop over the elements, under ``jit`` and ``grad``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait_core import InconclusiveDimensionOperation

W = np.array([0.5, -1.0, 2.0], np.float32)
DATA = np.arange(1.0, 6.0, dtype=np.float32)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
def test_full_mode_of_a_masked_length(name: str) -> None:
    fn, ref = getattr(pnp, name), getattr(np, name)
    masked = plait.jit(plait.mask(lambda x: fn(x, W, mode="full"), ["n"], "n + 2"))
    for n in (5, 3, 1):
        got = np.asarray(masked([DATA], {"n": n}))[: n + 2]
        np.testing.assert_allclose(got, ref(DATA[:n], W, mode="full"), rtol=1e-6)


@pytest.mark.parametrize("mode", ["same", "valid"])
def test_a_kernel_of_one_entry_keeps_every_mode(mode: str) -> None:
    masked = plait.mask(lambda x: pnp.correlate(x, W[:1], mode=mode), ["n"], "n")
    got = np.asarray(masked([DATA], {"n": 3}))[:3]
    np.testing.assert_allclose(got, np.correlate(DATA[:3], W[:1], mode=mode), rtol=1e-6)


@pytest.mark.parametrize("mode", ["same", "valid"])
def test_a_mode_whose_shape_needs_a_comparison_is_refused_by_name(mode: str) -> None:
    with pytest.raises(InconclusiveDimensionOperation, match=f"convolve: mode '{mode}' of a of symbolic length n "
                       "and v of length 3 depends on whether n >= 3"):
        plait.mask(lambda x: pnp.convolve(x, W, mode=mode), ["n"], "n")([DATA], {"n": 4})


def test_convolve_over_a_pile_and_its_gradient() -> None:
    lengths = (5, 2, 4)
    pile = plait.Pile.from_arrays([DATA[:k] for k in lengths])
    conv = plait.vmap(lambda x: pnp.convolve(x, W), in_axes=plait.pile_axis, out_axes=plait.pile_axis)
    got = [np.asarray(a).tolist() for a in plait.jit(conv)(pile).unpack()]
    assert got == [np.convolve(DATA[:k], W).tolist() for k in lengths]

    def loss(x: Any) -> Any:
        return plait.mask(lambda x: pnp.sum(pnp.convolve(x, W) ** 2), ["n"], "")([x], {"n": 4})

    c = np.convolve(DATA[:4], W)
    want = np.concatenate([2 * np.correlate(c, W, "valid"), [0.0]])  # d sum(c^2) / dx, nothing for the padding
    np.testing.assert_allclose(np.asarray(plait.grad(loss)(DATA)), want, rtol=1e-6)
