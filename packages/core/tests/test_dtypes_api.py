"""``jax.dtypes``' names over plait's dtype kernel (issue 25): extended dtypes
(typed keys) in ``issubdtype``, JAX's keyword arguments, ``scalar_type_of``
and ``itemsize_bits``."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
from plait_core import dtypes_api as d
from plait_core import numpy as pnp
from plait_core import random


def test_key_dtypes_are_extended() -> None:
    kd = random.key(0).dtype
    assert d.issubdtype(kd, d.prng_key) and d.issubdtype(kd, d.extended) and d.issubdtype(kd, np.generic)
    assert d.issubdtype(kd, kd) and pnp.issubdtype(kd, d.prng_key)
    assert not d.issubdtype(kd, np.floating) and not d.issubdtype(kd, "float32") and not d.issubdtype(kd, np.uint32)
    assert not d.issubdtype(np.float32, d.extended) and not d.issubdtype(np.uint32, kd)
    assert d.issubdtype(d.prng_key, d.extended) and not d.issubdtype(d.extended, d.prng_key)
    assert issubclass(d.prng_key, d.extended) and issubclass(d.extended, np.generic)


def test_canonicalize_dtype_and_result_type() -> None:
    assert d.canonicalize_dtype(np.float64) == np.float32 and d.canonicalize_dtype(int) == np.int32
    with pc.enable_x64():
        assert d.canonicalize_dtype("int64") == np.int64
    kd = random.key(0).dtype
    assert d.canonicalize_dtype(kd, allow_extended_dtype=True) is kd
    with pytest.raises(ValueError, match=r"canonicalize_dtype: key<fry> is an extended dtype; pass "
                       r"allow_extended_dtype=True"):
        d.canonicalize_dtype(kd)
    assert d.result_type(1, np.float16) == np.float16
    assert d.result_type(np.int8, 1.0, return_weak_type_flag=True) == (np.dtype(np.float32), True)
    assert d.result_type(np.int8, np.float16, return_weak_type_flag=True) == (np.dtype(np.float16), False)
    with pytest.raises(ValueError, match=r"result_type: at least one array or dtype is required"):
        d.result_type()
    with pytest.raises(TypeError, match=r"result_type: cannot promote the extended dtype key<fry>"):
        d.result_type(kd)


def test_scalar_type_of_and_itemsize_bits() -> None:
    assert d.scalar_type_of(np.float32(1)) is float and d.scalar_type_of(np.uint8(1)) is int
    assert d.scalar_type_of(1) is int and d.scalar_type_of(np.zeros(2, bool)) is bool
    assert d.scalar_type_of(np.zeros(2, ml_dtypes.bfloat16)) is float and d.scalar_type_of(1j) is complex
    with pytest.raises(TypeError, match=r"scalar_type_of: key<fry> \(an extended dtype\) has no Python scalar type"):
        d.scalar_type_of(random.key(0))
    assert [d.itemsize_bits(t) for t in (bool, np.float64, "int4", "float4_e2m1fn", d.bfloat16)] == [8, 64, 4, 4, 16]
    with pytest.raises(ValueError, match=r"itemsize_bits: unexpected input: dtype=.*float0"):
        d.itemsize_bits(d.float0)
    assert d.bfloat16 is ml_dtypes.bfloat16 and d.TypePromotionError.__mro__[1] is ValueError
