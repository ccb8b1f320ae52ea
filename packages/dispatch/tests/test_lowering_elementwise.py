"""Elementwise semantics where XLA and NumPy conventions meet, on random
values: integer division and remainder (zero divisors, ``INT_MIN / -1``),
shifts by any amount, float-to-integer conversion (truncation, saturation,
NaN), rounding of halves, ``nextafter`` and comparisons with NaN."""

from __future__ import annotations

from typing import Any

import hypothesis.extra.numpy as hnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_lowering_harness import bind, check

import plait_core as pc

INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)]
FLOATS = [np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)]
SETTINGS = settings(max_examples=10, deadline=None)


def _ints(dtype: np.dtype[Any]) -> st.SearchStrategy[np.ndarray]:
    info = np.iinfo(dtype)
    edges = st.sampled_from([int(info.min), int(info.max), 0, 1, -1 if dtype.kind == "i" else 2])
    elements = st.one_of(edges, st.integers(int(info.min), int(info.max)))
    return hnp.arrays(dtype, (8,), elements=elements)


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: d.name)
@pytest.mark.parametrize("name", ["div", "rem", "shift_left", "shift_right_logical", "shift_right_arithmetic"])
@SETTINGS
@given(data=st.data())
def test_integer_binary(dtype: np.dtype[Any], name: str, data: st.DataObject) -> None:
    x = data.draw(_ints(dtype))
    if name.startswith("shift"):
        bits = 8 * dtype.itemsize
        lo = -bits if dtype.kind == "i" else 0
        y = data.draw(hnp.arrays(dtype, (8,), elements=st.integers(lo, bits + 3)))
    else:
        y = data.draw(_ints(dtype))
    with pc.enable_x64():
        check(bind(name), x, y)


@pytest.mark.parametrize("src", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("dst", INTS, ids=lambda d: d.name)
@SETTINGS
@given(data=st.data())
def test_float_to_int(src: np.dtype[Any], dst: np.dtype[Any], data: st.DataObject) -> None:
    info = np.iinfo(dst)
    span = float(info.max) * 1.5 + 10
    values = data.draw(st.lists(
        st.one_of(st.floats(-span, span), st.sampled_from([np.nan, np.inf, -np.inf, -0.5, 0.5, -1.0])),
        min_size=8, max_size=8))
    with np.errstate(all="ignore"):
        x = np.array(values).astype(src)
    with pc.enable_x64():
        check(bind("convert_element_type", new_dtype=dst, weak_type=False), x)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: d.name)
@SETTINGS
@given(data=st.data())
def test_rounding_and_neighbours(dtype: np.dtype[Any], data: st.DataObject) -> None:
    # XLA on the CPU flushes subnormals to zero (a documented difference from
    # NumPy), so the drawn values stay normal in every float type tested.
    normal = st.floats(-1e4, 1e4).filter(lambda v: v == 0.0 or abs(v) >= 1e-4)
    halves = st.integers(-2000, 2000).map(lambda k: k / 2)
    values = data.draw(st.lists(st.one_of(halves, normal), min_size=8, max_size=8))
    x = np.array(values).astype(dtype)
    specials = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0])
    y = np.array(data.draw(st.lists(st.one_of(specials, normal), min_size=8, max_size=8)))
    with pc.enable_x64(), np.errstate(all="ignore"):
        check(bind("round", rounding_method=0), x)
        check(bind("round", rounding_method=1), x)
        check(bind("nextafter"), x, y.astype(dtype))
        for cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
            check(bind(cmp), x, y.astype(dtype))
