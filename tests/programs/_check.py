"""Shared by the corpus programs: print a labelled value (so a run on plait and a
run on JAX can be compared number by number) and check it against a NumPy
float64 oracle when one is given."""

from __future__ import annotations

import json
from typing import Any

import numpy as np


def show(label: str, value: Any, expected: Any = None, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """Print ``label: [numbers] shape=[...]`` and, with ``expected``, assert closeness."""
    arr = np.asarray(value, dtype=np.float64)
    print(f"{label}: {json.dumps(arr.ravel().tolist())} shape={list(arr.shape)}")
    if expected is not None:
        np.testing.assert_allclose(arr, np.asarray(expected, np.float64), rtol=rtol, atol=atol, err_msg=label)
