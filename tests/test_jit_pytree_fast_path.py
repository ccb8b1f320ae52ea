"""The cached jit call's C++-keyed fast path on node types other packages
register with core (piles from plait-batching)."""

from __future__ import annotations

import sys

import numpy as np

import plait
from plait import Pile


def test_pile_argument_and_result_on_the_fast_path() -> None:
    p = plait.device_put(Pile.from_arrays([np.arange(3, dtype=np.float32), np.arange(5, dtype=np.float32)]))
    f = plait.jit(lambda p, s: Pile(p.data * s, p.lengths))
    for s in (2.0, 2.0, 3.0):
        out = f(p, s)
        assert isinstance(out, Pile)
        got = [np.asarray(a).tolist() for a in out.unpack()]
        assert got == [[0.0, s, 2 * s], [0.0, s, 2 * s, 3 * s, 4 * s]]
    state = sys.modules["plait_dispatch.jit"].jit_state(f)
    assert state is not None and len(state.tree_fast) == 1
    assert f._cache_size() == 1
