"""Random draws compile once, not once per reader (issue 26): the Threefry
cipher reaches XLA as one rolled loop, so XLA cannot copy its twenty rounds
into every fusion that reads the draw (a grid of images built from samples
compiled ten times slower than on JAX)."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_dispatch as pd
from plait_core import numpy as pnp
from plait_core import random


def _grid(images: Any, n: int) -> Any:
    """``n`` x ``n`` images tiled as the issue's ``grid`` does."""
    it = iter(images)
    return pnp.vstack([pnp.hstack([next(it).T for _ in range(n)][::-1]) for _ in range(n)]).T


def _sample_grid(key: Any, p: Any) -> Any:
    return _grid(random.bernoulli(key, p).reshape((-1, 8, 8)), 4)


def test_the_cipher_is_one_rolled_loop_in_the_module() -> None:
    text = pd.jit(lambda k: random.bits(k, (100, 784))).lower(random.key(0)).as_text()
    assert text.count("stablehlo.while") == 1
    assert text.count("stablehlo.shift_left") == 4  # one block of four rounds
    main = next(line for line in text.splitlines() if "@main" in line)
    assert main.count("tensor<") == 2  # the key in, the bits out: no constant operands


def test_slices_of_a_draw_do_not_copy_the_cipher() -> None:
    p = np.full((16, 64), 0.5, np.float32)
    compiled = pd.jit(_sample_grid).lower(random.key(3), p).compile()
    hlo = compiled.as_text()
    # Twenty rounds copied into each of the 16 slices' fusions would be
    # hundreds of shifts; the rolled loop has its four, plus a few of XLA's own.
    assert hlo.count("shift-left") < 30, hlo.count("shift-left")  # 21 rolled, 60 unrolled
    got = np.asarray(compiled(random.key(3), p))
    draws = np.asarray(random.bernoulli(random.key(3), p)).reshape(16, 8, 8)
    rows = [np.hstack([draws[4 * r + c].T for c in range(4)][::-1]) for r in range(4)]
    np.testing.assert_array_equal(got, np.vstack(rows).T)
