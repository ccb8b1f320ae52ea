"""The narrow ML number types on XLA: element types, constants, host transfers
of sub-byte values, and the refusals (6-bit floats, 1-bit integers) with why.

Values against JAX are the top-level ``tests/test_narrow_dtypes.py``'s; here
the XLA backend's own pieces are checked against ml_dtypes."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import plait_core.numpy as pnp
import plait_dispatch as pd
from plait_core import ShapedArray, dtypes
from plait_dispatch import _jaxlib
from plait_dispatch.lowering import LoweringError
from plait_dispatch.lowering.module import dense_attr, element_type

CARRIED = {
    "float8_e3m4": "f8E3M4", "float8_e4m3": "f8E4M3", "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e4m3fn": "f8E4M3FN", "float8_e4m3fnuz": "f8E4M3FNUZ", "float8_e5m2": "f8E5M2",
    "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e8m0fnu": "f8E8M0FNU", "float4_e2m1fn": "f4E2M1FN",
    "int2": "i2", "int4": "i4", "uint2": "ui2", "uint4": "ui4",
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CARRIED))
def test_values_go_to_the_device_and_back_exactly(name: str) -> None:
    t = np.dtype(getattr(ml_dtypes, name))
    assert element_type(t) == CARRIED[name]
    if dtypes.is_int(t):
        info = ml_dtypes.iinfo(t)
        host = np.arange(int(info.min), int(info.max) + 1).astype(t)
    else:  # every value of the type (bit patterns 0 .. 2**bits - 1)
        bits = 4 if name.startswith("float4") else 8
        host = np.arange(2**bits, dtype=np.uint8).view(t) if bits == 8 else np.arange(16, dtype=np.uint8).astype(
            np.float32).astype(t)
    x = pd.device_put(host)
    assert x.dtype == t
    back = np.asarray(x)
    assert back.dtype == t and back.view(np.uint8).tolist() == host.view(np.uint8).tolist()
    # ... and through a compiled program that embeds them as a constant
    y = np.asarray(pd.jit(lambda v: pnp.where(v == v, pnp.asarray(host), v))(pnp.asarray(host)))
    number = ~np.isnan(host.astype(np.float32))
    assert y.view(np.uint8)[number].tolist() == host.view(np.uint8)[number].tolist()


def test_sub_byte_constants_are_written_element_by_element() -> None:
    text = dense_attr(np.array([1, -2, 7], ml_dtypes.int4), ShapedArray((3,), dtypes.int4))
    assert text == "dense<[1, -2, 7]> : tensor<3xi4>"
    text = dense_attr(np.array([0.5, -6], ml_dtypes.float4_e2m1fn), ShapedArray((2,), dtypes.float4_e2m1fn))
    assert text == "dense<[0.5, -6.0]> : tensor<2xf4E2M1FN>"


@pytest.mark.parametrize("name", ["float6_e2m3fn", "float6_e3m2fn"])
def test_six_bit_floats_are_refused_with_jax_runtime_error(name: str) -> None:
    t = np.dtype(getattr(ml_dtypes, name))
    with pytest.raises(_jaxlib.XlaRuntimeError, match=f"cannot hold {name} values: jaxlib 0.10.2's XLA has no"):
        pd.device_put(np.zeros(2, t))
    with pytest.raises(_jaxlib.XlaRuntimeError, match=f"cannot compute with {name} values"):
        element_type(t)


@pytest.mark.parametrize("name", ["int1", "uint1"])
def test_one_bit_integers_are_refused_with_lowering_error(name: str) -> None:
    t = np.dtype(getattr(ml_dtypes, name))
    with pytest.raises(LoweringError, match=f"cannot hold {name} values: StableHLO has no 1-bit integer type"):
        pd.device_put(np.zeros(2, t))
    with pytest.raises(ValueError, match=f"cannot compute with {name} values"):
        element_type(t)
