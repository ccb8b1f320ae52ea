"""``ShapedArray.to_tangent_aval`` as JAX 0.10.2's (equinox's custom-vjp zeros use it):
inexact dtypes keep their aval, other dtypes become ``float0``; the weak type is kept."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import dtypes
from plait_core.abstract import ShapedArray


@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16, np.complex64])
@pytest.mark.parametrize("weak", [False, True])
def test_inexact_avals_are_their_own_tangent_avals(dtype: object, weak: bool) -> None:
    aval = ShapedArray((2, 3), dtype, weak)
    t = aval.to_tangent_aval()
    assert (t.shape, t.dtype, t.weak_type) == ((2, 3), np.dtype(dtype), weak)
    assert t == aval


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
@pytest.mark.parametrize("weak", [False, True])
def test_integer_and_boolean_tangent_avals_are_float0(dtype: object, weak: bool) -> None:
    t = ShapedArray((4,), dtype, weak).to_tangent_aval()
    assert (t.shape, t.dtype, t.weak_type) == ((4,), dtypes.float0, weak)
