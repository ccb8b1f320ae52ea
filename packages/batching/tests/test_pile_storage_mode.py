"""The pile test modes store what they say (see conftest.py): in the
``stored*`` modes ``Pile.from_arrays`` stores piles of one ragged axis packed
and ``vmap`` returns their results packed, under the mode's layout; in the
others piles are stored padded."""

from __future__ import annotations

import numpy as np

from plait_batching import Pile, pile_axis, vmap
from plait_batching.packed import default_layout


def test_the_mode_sets_the_storage(layout_of_piles: str) -> None:
    stored = layout_of_piles.startswith("stored")
    p = Pile.from_arrays([np.ones((2, 3), np.float32), np.ones((5, 3), np.float32)])
    assert p.storage == ("packed" if stored else "padded")
    assert np.shape(p.values) == (7, 3) and np.shape(p.data) == (2, 5, 3)
    out = vmap(lambda x: x * 2, in_axes=pile_axis, out_axes=pile_axis)(p)
    assert out.storage == ("packed" if stored else "padded")
    for got, n in zip(out.unpack(), (2, 5)):
        np.testing.assert_array_equal(np.asarray(got), np.full((n, 3), 2, np.float32))
    if stored:
        assert default_layout() == (layout_of_piles.partition("-")[2] or None)
    # Several ragged axes stay padded in every mode.
    assert Pile.from_arrays([np.ones((2, 2), np.float32), np.ones((3, 3), np.float32)]).storage == "padded"
