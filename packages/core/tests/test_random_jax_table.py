"""plait_core.random against draws recorded from JAX 0.10.2 (``tests/random_cases.py``
writes the table): keys, bits and integer samples bit for bit; floats, which
core evaluates with NumPy rather than XLA, to a few units in the last place."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from plait_core import enable_x64, random

_TESTS = Path(__file__).resolve().parents[3] / "tests"
_spec = importlib.util.spec_from_file_location("random_cases", _TESTS / "random_cases.py")
assert _spec is not None and _spec.loader is not None
cases: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)
TABLE = json.loads(cases.TABLE.read_text())


def test_table_is_from_jax_0_10_2_and_covers_every_case() -> None:
    assert TABLE["jax_version"] == "0.10.2"
    assert set(TABLE["cases"]) == {name for name, _ in cases.CASES}
    assert set(TABLE["x64_cases"]) == {name for name, _ in cases.X64_CASES}


def _compare(got: Any, want: Any, name: str) -> None:
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), name
        for g, w in zip(got, want):
            _compare(g, w, name)
        return
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, want.dtype, got.shape)
    if np.issubdtype(want.dtype, np.inexact):
        np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-30, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


@pytest.mark.parametrize("name,expr", cases.CASES, ids=[name for name, _ in cases.CASES])
def test_draws_match_jax(name: str, expr: str) -> None:
    got = cases.decode(cases.encode(eval(expr, {"random": random, "np": np})))
    _compare(got, cases.decode(TABLE["cases"][name]), name)


@pytest.mark.parametrize("name,expr", cases.X64_CASES, ids=[name for name, _ in cases.X64_CASES])
def test_draws_match_jax_with_x64(name: str, expr: str) -> None:
    with enable_x64():
        got = cases.decode(cases.encode(eval(expr, {"random": random, "np": np})))
    _compare(got, cases.decode(TABLE["x64_cases"][name]), name)
