"""Shared inputs of the meta-package's bucket tests (tests/test_pile_buckets*.py)."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_core import nn


def random_seqs(lengths: list[int], width: int = 4, seed: int = 0) -> list[np.ndarray]:
    """One random float32 sequence of ``width`` features per length."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, width)).astype(np.float32) for n in lengths]


def attention(x: Any, w: Any) -> Any:
    """A small self-attention of one sequence: mixes positions along its ragged axis."""
    s = (x @ w) @ x.T / 2.0
    return nn.softmax(s, axis=-1) @ x + pnp.tanh(x @ w)
