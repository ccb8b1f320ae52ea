"""The narrow ML number types in core: the lattice, limits, and NumPy evaluation.

JAX 0.10.2's behaviour is the reference (``tests/test_narrow_dtypes.py`` and the
promotion table at the top level compare with it value by value); these tests
pin core's own part without JAX or XLA: promotion (the narrow types are leaves
of the lattice), ``finfo``/``iinfo``, ``issubdtype``, and the NumPy reference
implementations, whose conversions must round exactly as ml_dtypes does.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
import plait_core.numpy as pnp
from plait_core import dtypes as d
from plait_core import lax
from plait_core.config import enable_x64

NARROW_FLOAT_NAMES = [t.name for t in d.NARROW_FLOATS]
NARROW_INT_NAMES = [t.name for t in d.NARROW_SIGNED + d.NARROW_UNSIGNED]
STANDARD = (d.bool_, d.int8, d.int16, d.int32, d.int64, d.uint8, d.uint16, d.uint32, d.uint64, d.float16,
            d.bfloat16, d.float32, d.float64, d.complex64, d.complex128)


def test_every_jax_name_is_a_scalar_type_of_its_ml_dtypes_dtype() -> None:
    assert len(d.NARROW) == 17
    for t in d.NARROW:
        scalar = getattr(pnp, t.name)
        assert scalar == np.dtype(getattr(ml_dtypes, t.name)) == t
        assert np.dtype(scalar) == t and pnp.dtype(scalar) == t


@pytest.mark.parametrize("t", d.NARROW, ids=lambda t: t.name)
def test_narrow_types_are_lattice_leaves(t: np.dtype) -> None:
    for s in STANDARD:
        if s == d.bool_ or (d.is_float(t) and d.is_int(s)):
            assert d.promote_types(t, s) == t and d.promote_types(s, t) == t
        else:
            with pytest.raises(d.TypePromotionError, match=f"no implicit promotion between {t.name} and {s.name}"):
                d.promote_types(t, s)
    for other in d.NARROW:
        if other != t:
            with pytest.raises(ValueError, match="convert explicitly"):
                d.promote_types(t, other)
    assert d.promote_types(t, t) == t


@pytest.mark.parametrize("t", d.NARROW, ids=lambda t: t.name)
def test_weak_scalars_take_a_narrow_type_of_their_kind(t: np.dtype) -> None:
    assert d.result_type_and_weakness(np.zeros(2, t), 3) == (t, False)
    assert d.result_type_and_weakness(np.zeros(2, t), True) == (t, False)
    if d.is_float(t):
        assert d.result_type_and_weakness(np.zeros(2, t), 1.5) == (t, False)
    else:
        with pytest.raises(d.TypePromotionError, match=f"between {t.name} and a weakly typed float"):
            d.result_type(np.zeros(2, t), 1.5)
    with pytest.raises(d.TypePromotionError, match="a weakly typed complex"):
        d.result_type(np.zeros(2, t), 1j)


def test_limits_and_categories() -> None:
    assert float(pnp.finfo(pnp.float8_e4m3fn).max) == 448.0
    assert float(pnp.finfo(pnp.float8_e5m2).max) == 57344.0
    assert float(pnp.finfo(pnp.float4_e2m1fn).max) == 6.0
    assert float(pnp.finfo(pnp.float6_e3m2fn).max) == 28.0
    assert (int(pnp.iinfo(pnp.int4).min), int(pnp.iinfo(pnp.int4).max)) == (-8, 7)
    assert (int(pnp.iinfo(pnp.uint2).min), int(pnp.iinfo(pnp.uint2).max)) == (0, 3)
    assert [d.has_inf(t) for t in (d.float8_e5m2, d.float8_e4m3, d.float8_e4m3fn, d.float8_e5m2fnuz)] == [
        True, True, False, False]
    assert d.lowest(d.float8_e4m3fn) == -448.0 and d.highest(d.float8_e5m2) == np.inf
    assert d.lowest(d.int2) == -2 and d.highest(d.uint4) == 15
    assert pnp.issubdtype(pnp.float8_e8m0fnu, pnp.inexact) and pnp.issubdtype(pnp.uint1, pnp.unsignedinteger)
    assert not pnp.issubdtype(pnp.int4, pnp.unsignedinteger) and not pnp.issubdtype(pnp.float8_e5m2, pnp.integer)
    assert pnp.issubdtype(pnp.int4, "integer") and not pnp.issubdtype(pnp.int4, pnp.complexfloating)
    assert d.dtype_short_name(d.float8_e4m3fn) == "f8_e4m3fn" and d.dtype_short_name(d.uint4) == "u4"


EDGES = np.array([0.0, -0.0, 0.3, 1.3, 1.0625, 2.5, 3.5, 5.0, 17.0, 250.0, 464.0, 500.0, 61440.0, 1e6, 2.0**-9,
                  2.0**-17, np.inf, -np.inf, np.nan], np.float32)


@pytest.mark.parametrize("name", NARROW_FLOAT_NAMES)
def test_numpy_reference_conversions_round_as_ml_dtypes(name: str) -> None:
    t = getattr(ml_dtypes, name)
    got = np.asarray(lax.convert_element_type(EDGES, getattr(pnp, name)))
    with np.errstate(all="ignore"):
        want = EDGES.astype(t)
    assert got.dtype == np.dtype(t)
    assert got.view(np.uint8).tolist() == want.view(np.uint8).tolist()
    back = np.asarray(lax.convert_element_type(got, np.float32))
    assert back.view(np.uint32).tolist() == want.astype(np.float32).view(np.uint32).tolist()


@pytest.mark.parametrize("name", NARROW_INT_NAMES)
def test_numpy_reference_integers_saturate_from_floats_and_wrap_in_arithmetic(name: str) -> None:
    t = getattr(pnp, name)
    info = ml_dtypes.iinfo(getattr(ml_dtypes, name))
    got = np.asarray(lax.convert_element_type(np.array([-100.5, -1.7, 0.9, 100.0, np.nan], np.float32), t))
    assert got.astype(np.int64).tolist() == [int(info.min), max(-1, int(info.min)), 0, int(info.max), 0]
    x = np.array([int(info.max)], getattr(ml_dtypes, name))
    total = np.asarray(lax.add(x, x)).astype(np.int64).tolist()
    span = int(info.max) - int(info.min) + 1
    assert total == [(2 * int(info.max) - int(info.min)) % span + int(info.min)]


def test_numpy_reference_arithmetic_computes_in_float32_and_rounds() -> None:
    x = np.array([0.3, 1.7, -2.2, 5.0], np.float32).astype(ml_dtypes.float8_e4m3fn)
    y = np.array([1.1, 0.4, 0.7, -3.0], np.float32).astype(ml_dtypes.float8_e4m3fn)
    for f, ref in ((lax.add, np.add), (lax.mul, np.multiply), (lax.div, np.divide)):
        want = ref(x.astype(np.float32), y.astype(np.float32)).astype(ml_dtypes.float8_e4m3fn)
        assert np.asarray(f(x, y)).view(np.uint8).tolist() == want.view(np.uint8).tolist()
    want_sin = np.sin(x.astype(np.float32)).astype(ml_dtypes.float8_e4m3fn)
    assert np.asarray(lax.sin(x)).view(np.uint8).tolist() == want_sin.view(np.uint8).tolist()
    # max over a float without infinities starts from its most negative finite value, not NaN
    assert float(np.asarray(pnp.max(x)).astype(np.float32)) == 5.0
    assert float(np.asarray(pnp.min(x)).astype(np.float32)) == -2.25


def test_staging_names_the_narrow_types() -> None:
    text = str(pc.make_jaxpr(lambda v: v.astype(pnp.float8_e4m3fn) * 2)(np.ones(2, np.float32)))
    assert "f8_e4m3fn[2] = convert_element_type[new_dtype=float8_e4m3fn" in text
    out = pc.eval_shape(lambda v: v.astype(pnp.int4) + 1, pc.ShapeDtypeStruct((3,), np.float32))
    assert out.dtype == d.int4 and not out.weak_type
    with pytest.raises(d.TypePromotionError, match="between float8_e5m2 and bfloat16"):
        pc.eval_shape(lambda v: v.astype(pnp.float8_e5m2) + v.astype(pnp.bfloat16),
                      pc.ShapeDtypeStruct((3,), np.float32))


def test_float64_values_round_once_as_xla_does() -> None:
    # Just off halfway points and range limits; the expected bits are JAX 0.10.2's (x64 on), which rounds
    # once, where ml_dtypes' own float64 conversion rounds twice (1.0625 + 2**-40 would give 1.0, not 1.125).
    vals = np.array([1.0625 + 2**-40, 1.0625 - 2**-40, 1.1875 + 2**-30, 3.5 + 1e-12, 2.0**-9 + 2**-60, 464 + 1e-9])
    want = {"float8_e4m3fn": "39383a46017f", "float8_e5m2": "3c3c3d43185f", "float4_e2m1fn": "020202060007"}
    for name, bits in want.items():
        with enable_x64():
            got = np.asarray(lax.convert_element_type(vals, getattr(pnp, name)))
        assert got.view(np.uint8).tobytes().hex() == bits, name
