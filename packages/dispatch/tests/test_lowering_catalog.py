"""Every primitive of core's catalog, lowered to StableHLO, compiled and run
by XLA, against core's NumPy implementation of the same jaxpr.

``CASES`` holds, per primitive, programs that use it on inputs like those
of core's own tests (several dtypes and shapes, and the edges where XLA's
and NumPy's conventions could part); a test checks that every primitive with
a lowering rule has cases, and that each case really contains its primitive.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from test_lowering_harness import BF16, BOOL, C64, F16, F32, I8, I32, U8, U32, bind, check, sample

import plait_core as pc
from plait_core import host_callbacks, lax
from plait_core.jaxpr import Jaxpr, sub_jaxprs
from plait_core.primitives.indexing_prims import GatherDimensionNumbers as GDN
from plait_core.primitives.indexing_prims import GatherScatterMode
from plait_core.primitives.indexing_prims import ScatterDimensionNumbers as SDN
from plait_core.primitives.linalg import ConvDimensionNumbers
from plait_dispatch.lowering import lowering_rules

Case = Any
CASES: list[Case] = []


def case(name: str, fn: Callable[..., Any], *args: Any, rtol: float | None = None, id: str = "") -> None:
    """Register a program ``fn(*args)`` exercising the primitive ``name``."""
    k = sum(1 for c in CASES if c.values[0] == name)
    CASES.append(pytest.param(name, fn, args, rtol, id=f"{name}-{id or k}"))


def dname(dt: np.dtype[Any]) -> str:
    return str(dt.name)


SHAPES = [(), (2, 3)]
FLOATS = [F32, F16, BF16]

# ---------------------------------------------------------------------------
# Elementwise

UNARY_DOMAINS: dict[str, tuple[float, float]] = {
    "neg": (-3, 3), "sign": (-3, 3), "floor": (-3, 3), "ceil": (-3, 3), "is_finite": (-3, 3),
    "exp": (-3, 3), "exp2": (-3, 3), "log": (0.1, 5), "log1p": (-0.5, 5), "expm1": (-3, 3), "tanh": (-3, 3),
    "logistic": (-6, 6), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2), "asin": (-0.9, 0.9),
    "acos": (-0.9, 0.9), "atan": (-3, 3), "sinh": (-3, 3), "cosh": (-3, 3), "asinh": (-3, 3),
    "acosh": (1.1, 5), "atanh": (-0.9, 0.9), "sqrt": (0.1, 5), "rsqrt": (0.1, 5), "cbrt": (-3, 3),
    "abs": (-3, 3), "erf": (-2.5, 2.5), "erf_inv": (-0.95, 0.95), "lgamma": (0.1, 5), "digamma": (0.1, 5),
}
COMPLEX_UNARY = ["neg", "sign", "exp", "exp2", "log", "log1p", "expm1", "sin", "cos", "tan", "tanh", "logistic",
                 "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt", "abs"]

for _name, (_lo, _hi) in UNARY_DOMAINS.items():
    for _dt in FLOATS:
        for _shape in SHAPES:
            case(_name, bind(_name), sample(_dt, _shape, _lo, _hi, seed=len(CASES)), id=f"{dname(_dt)}-{len(_shape)}d")
for _name in COMPLEX_UNARY:
    case(_name, bind(_name), sample(C64, (2, 3), 0.2, 0.8, seed=3), rtol=1e-4, id="complex64")
for _name in ["neg", "sign", "abs"]:
    for _dt in [I32, I8]:
        case(_name, bind(_name), sample(_dt, (2, 3), -50, 50), id=dname(_dt))
for _dt in [U8, U32]:
    case("neg", bind("neg"), np.array([0, 1, 200], _dt), id=dname(_dt))
    case("sign", bind("sign"), np.array([0, 1, 200], _dt), id=dname(_dt))
case("sign", bind("sign"), np.array([-0.0, 0.0, np.nan, -3.0, 2.0], F32), id="signed-zero-nan")
for _dt in [BOOL, I32, U8, U32]:
    case("not", bind("not"), sample(_dt, (2, 3), 0, 200), id=dname(_dt))
for _dt in FLOATS:
    _x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.2, 3.7]).astype(_dt)
    case("round", bind("round", rounding_method=0), _x, id=f"away-{dname(_dt)}")
    case("round", bind("round", rounding_method=1), _x, id=f"even-{dname(_dt)}")
    case("is_finite", bind("is_finite"), np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3.0]).astype(_dt),
         id=f"edges-{dname(_dt)}")
    case("logistic", bind("logistic"), np.array([-1e4, -100.0, -20.0, 0.0, 20.0, 100.0, 1e4]).astype(_dt),
         id=f"stable-{dname(_dt)}")
case("erf_inv", bind("erf_inv"), np.array([0.0, 1.0, -1.0, 1.5, -2.0, np.nan, 0.999, -0.999, 1e-30], F32),
     rtol=1e-4, id="edges")
case("lgamma", bind("lgamma"), np.array([-0.5, -2.5, 0.0, -1.0, -3.0, np.inf, -np.inf, np.nan, 30.0], F32),
     id="poles")
case("digamma", bind("digamma"), np.array([-0.5, -2.3, 0.0, -1.0, -7.0, np.nan, np.inf, 30.0], F32),
     rtol=1e-4, id="poles")
for _dt in [F32, F16, BF16, I32, I8]:
    for _y in [0, 1, 2, 3, 7]:
        case("integer_pow", bind("integer_pow", y=_y), sample(_dt, (2, 3), -3, 3), id=f"{dname(_dt)}-{_y}")
case("integer_pow", bind("integer_pow", y=-3), sample(F32, (3,), 0.5, 3), id="negative")
case("integer_pow", bind("integer_pow", y=3), sample(C64, (3,), -1, 1), rtol=2e-5, id="complex")

NUMERIC = FLOATS + [I32, U8, U32]
for _name in ["add", "sub", "mul"]:
    for _dt in NUMERIC + [C64]:
        for _shape in SHAPES:
            case(_name, bind(_name), sample(_dt, _shape, 0, 50, 1), sample(_dt, _shape, 0, 50, 2),
                 id=f"{dname(_dt)}-{len(_shape)}d")
    case(_name, bind(_name), sample(F32, (2, 3)), np.float32(1.25), id="rank0-right")
    case(_name, bind(_name), np.float32(1.25), sample(F32, (2, 3)), id="rank0-left")
for _dt in FLOATS + [C64]:
    case("div", bind("div"), sample(_dt, (2, 3), -3, 3, 1), sample(_dt, (2, 3), 0.5, 3, 2), id=dname(_dt))
for _dt in FLOATS:
    case("rem", bind("rem"), np.array([-7.5, 7.5, -7.5, 7.5, 1.0]).astype(_dt),
         np.array([2.0, -2.0, -2.0, 2.0, 0.0]).astype(_dt), id=dname(_dt))
    case("pow", bind("pow"), sample(_dt, (2, 3), 0.1, 3, 1), sample(_dt, (2, 3), -2, 2, 2), id=dname(_dt))
    case("atan2", bind("atan2"), sample(_dt, (2, 3), -3, 3, 1), sample(_dt, (2, 3), -3, 3, 2), id=dname(_dt))
    case("nextafter", bind("nextafter"), np.array([0.0, 1.0, 1.0, -2.0, np.nan, 3.0]).astype(_dt),
         np.array([1.0, 2.0, 0.0, -2.0, 1.0, np.inf]).astype(_dt), id=dname(_dt))
    for _name in ["max", "min"]:
        case(_name, bind(_name), np.array([np.nan, 1.0, np.nan, -1.0, 0.0]).astype(_dt),
             np.array([0.0, np.nan, np.nan, 2.0, -0.0]).astype(_dt), id=f"nan-{dname(_dt)}")
case("pow", bind("pow"), sample(C64, (3,), 0.5, 2, 1), sample(C64, (3,), -1, 1, 2), rtol=1e-4, id="complex")
for _name in ["max", "min"]:
    for _dt in [I32, U8, BOOL]:
        case(_name, bind(_name), sample(_dt, (2, 3), 0, 50, 1), sample(_dt, (2, 3), 0, 50, 2), id=dname(_dt))


def _int_div_operands(dt: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray]:
    if dt.kind == "i":
        lo = np.iinfo(dt).min
        return np.array([-7, 7, -8, 9, 0, 5, lo, lo, 3], dt), np.array([2, -2, -3, 3, 3, 0, -1, 1, 0], dt)
    return np.array([7, 200, 9, 0, 5, 255], dt), np.array([2, 3, 255, 1, 0, 7], dt)


for _dt in [I32, I8, U8, U32]:
    case("div", bind("div"), *_int_div_operands(_dt), id=f"int-{dname(_dt)}")
    case("rem", bind("rem"), *_int_div_operands(_dt), id=f"int-{dname(_dt)}")
for _name in ["and", "or", "xor"]:
    for _dt in [BOOL, I32, U8, U32]:
        case(_name, bind(_name), sample(_dt, (2, 3), 0, 200, 1), sample(_dt, (2, 3), 0, 200, 2), id=dname(_dt))
for _name in ["eq", "ne", "lt", "le", "gt", "ge"]:
    for _dt in FLOATS + [I32, U8, U32, BOOL]:
        _a, _b = sample(_dt, (2, 3), 0, 5, 1), sample(_dt, (2, 3), 0, 5, 2)
        _b.flat[0] = _a.flat[0]
        case(_name, bind(_name), _a, _b, id=dname(_dt))
    case(_name, bind(_name), np.array([np.nan, 1.0, np.nan, -0.0], F32), np.array([np.nan, np.nan, 0.0, 0.0], F32),
         id="nan")
    case(_name, bind(_name), np.array([-1, 5], I32), np.int32(0), id="rank0")
for _name in ["eq", "ne"]:
    case(_name, bind(_name), np.array([1 + 2j, 3j, 1], C64), np.array([1 + 2j, 3, 1], C64), id="complex")


def _shift_operands(dt: np.dtype[Any]) -> tuple[np.ndarray, np.ndarray]:
    bits = dt.itemsize * 8
    info = np.iinfo(dt)
    amounts = [0, 1, 3, bits - 1, bits, bits + 5] + ([-1, -bits] if dt.kind == "i" else [])
    xs = [int(info.min), int(info.max), 1, 5]
    return np.array([xs[i % 4] for i in range(len(amounts))], dt), np.array(amounts, dt)


for _name in ["shift_left", "shift_right_logical", "shift_right_arithmetic"]:
    for _dt in [I32, I8, U8, U32]:
        case(_name, bind(_name), *_shift_operands(_dt), id=dname(_dt))

for _dt in [F32, I32, BOOL, BF16]:
    case("select_n", bind("select_n"), sample(BOOL, (2, 3), seed=4), sample(_dt, (2, 3), 0, 9, 5),
         sample(_dt, (2, 3), 0, 9, 6), id=f"bool-{dname(_dt)}")
case("select_n", bind("select_n"), np.array([[0, 1, 2], [2, 7, -1]], I32), *[sample(F32, (2, 3), seed=s) for s in (8, 9, 10)],
     id="int32-out-of-range")
case("select_n", bind("select_n"), np.bool_(True), sample(F32, (2, 3), seed=1), sample(F32, (2, 3), seed=2),
     id="scalar-bool")
case("select_n", bind("select_n"), np.int32(1), sample(F32, (2, 3), seed=1), sample(F32, (2, 3), seed=2),
     sample(F32, (2, 3), seed=3), id="scalar-int")
case("select_n", bind("select_n"), np.int32(0), sample(F32, (3,), seed=1), id="one-case")
for _dt in [F32, I32, U8, BF16]:
    _x = sample(_dt, (2, 3), 0, 9)
    case("clamp", bind("clamp"), np.array(1, _dt), _x, np.array(4, _dt), id=f"scalar-{dname(_dt)}")
    case("clamp", bind("clamp"), np.full((2, 3), 2, _dt), _x, np.array(6, _dt), id=f"array-{dname(_dt)}")
case("clamp", bind("clamp"), np.float32(0.0), np.array([-1.0, 0.5, 2.0, np.nan], F32), np.float32(1.0), id="nan")
case("clamp", bind("clamp"), np.array([0.0, np.nan, 0.0, 0.0], F32), np.array([-1.0, 0.5, 2.0, 0.5], F32),
     np.array([1.0, 1.0, np.nan, 0.25], F32), id="nan-bounds")

_SATURATING = np.array([np.nan, 3e9, -3e9, -1.7, 2.9, np.inf, -np.inf, 200.0, -200.0, 127.5, -128.9, 0.99])
for _src in FLOATS:
    for _dst in [I32, U8, I8, U32]:
        with np.errstate(all="ignore"):
            _x = _SATURATING.astype(_src)
        case("convert_element_type", bind("convert_element_type", new_dtype=_dst, weak_type=False), _x,
             id=f"saturate-{dname(_src)}-{dname(_dst)}")
for _src in [F32, F16, BF16, I32, U8, BOOL, C64]:
    for _dst in [F32, F16, BF16, I32, U8, BOOL, C64]:
        if _src != _dst and not (_src == C64 and _dst in (I32, U8)):
            case("convert_element_type", bind("convert_element_type", new_dtype=_dst, weak_type=False),
                 sample(_src, (2, 3), 0, 100 if _src.kind in "iu" else 3), id=f"{dname(_src)}-{dname(_dst)}")
case("convert_element_type", bind("convert_element_type", new_dtype=I32, weak_type=False),
     np.array([1.5 + 2j, -2.7 + 1j, 0j], C64), id="complex-int32")
case("convert_element_type", bind("convert_element_type", new_dtype=BOOL, weak_type=False),
     np.array([np.nan, 0.0, -0.0, 1e-30], F32), id="nan-bool")
case("convert_element_type", bind("convert_element_type", new_dtype=I8, weak_type=False),
     np.array([300, -300, 127, 128], I32), id="int-wraps")
for _src, _dst, _shape in [
    (F32, U8, (2, 3)), (F32, I32, (2, 3)), (U8, F32, (3, 4)), (BF16, np.dtype(np.uint16), (3,)),
    (F32, np.dtype(np.uint16), ()), (np.dtype(np.uint16), F16, (2,)),
]:
    case("bitcast_convert_type", bind("bitcast_convert_type", new_dtype=_dst), sample(_src, _shape, 0, 9),
         id=f"{dname(_src)}-{dname(_dst)}")

# ---------------------------------------------------------------------------
# Structural

_X23 = sample(F32, (2, 3))
case("broadcast_in_dim", bind("broadcast_in_dim", shape=(2, 3), broadcast_dimensions=(1,)), sample(F32, (3,)))
case("broadcast_in_dim", bind("broadcast_in_dim", shape=(4, 3), broadcast_dimensions=(0, 1)), sample(I32, (1, 3), 0, 9))
case("broadcast_in_dim", bind("broadcast_in_dim", shape=(2, 2), broadcast_dimensions=()), np.bool_(True))
case("reshape", bind("reshape", new_sizes=(3, 2), dimensions=None), _X23)
case("reshape", bind("reshape", new_sizes=(6,), dimensions=(1, 0)), _X23)
case("reshape", bind("reshape", new_sizes=(0, 4), dimensions=None), np.zeros((2, 0), F32))
case("squeeze", bind("squeeze", dimensions=(0, 2)), sample(F32, (1, 3, 1)))
case("expand_dims", bind("expand_dims", dimensions=(0, 2)), sample(BF16, (3,)))
case("transpose", bind("transpose", permutation=(2, 0, 1)), sample(F32, (2, 3, 4)))
case("rev", bind("rev", dimensions=(0, 1)), _X23)
case("rev", bind("rev", dimensions=()), _X23)
case("pad", bind("pad", padding_config=((1, 2, 1),)), sample(F32, (3,)), np.float32(-1))
case("pad", bind("pad", padding_config=((-1, 2, 1),)), sample(I32, (4,), 0, 9), np.int32(7))
case("pad", bind("pad", padding_config=((0, -1, 0), (2, 1, 2))), _X23, np.float32(0.5))
case("pad", bind("pad", padding_config=((-2, -1, 3),)), sample(F32, (3,)), np.float32(9))
case("concatenate", bind("concatenate", dimension=1), _X23, sample(F32, (2, 1)), sample(F32, (2, 4)))
case("concatenate", bind("concatenate", dimension=0), sample(BOOL, (2,)), sample(BOOL, (3,)))
case("slice", bind("slice", start_indices=(0, 1), limit_indices=(2, 3), strides=None), _X23)
case("slice", bind("slice", start_indices=(1, 0), limit_indices=(5, 5), strides=(2, 3)), sample(F32, (5, 5)))
_X54 = sample(F32, (5, 4))
for _i, _j in [(3, -2), (10, 1), (0, 0), (-5, 9)]:
    case("dynamic_slice", bind("dynamic_slice", slice_sizes=(2, 3)), _X54, np.int32(_i), np.int32(_j),
         id=f"start-{_i}-{_j}")
    case("dynamic_update_slice", bind("dynamic_update_slice"), _X54, sample(F32, (2, 3), seed=7), np.int32(_i),
         np.int32(_j), id=f"start-{_i}-{_j}")
case("dynamic_slice", bind("dynamic_slice", slice_sizes=(2, 3)), _X54, np.uint8(200), np.int8(-1), id="mixed-types")
case("dynamic_slice", bind("dynamic_slice", slice_sizes=(2,)), sample(F32, (5,)), np.uint32(4000000000),
     id="large-unsigned")
case("dynamic_update_slice", bind("dynamic_update_slice"), _X54, sample(F32, (2, 3), seed=7), np.uint8(3),
     np.int32(1), id="mixed-types")
for _dt in [I32, F32, U8, C64]:
    case("iota", bind("iota", dtype=_dt, shape=(2, 3), dimension=1), id=dname(_dt))
case("iota", bind("iota", dtype=F32, shape=(4,), dimension=0), id="1d")
case("copy", bind("copy"), _X23)

_OPERAND53 = sample(F32, (5, 3))
_ROWS = np.array([[0], [4], [-1], [7]], I32)
for _mode in GatherScatterMode:
    _dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    case("gather", bind("gather", dimension_numbers=_dn, slice_sizes=(1, 3), indices_are_sorted=False,
                        unique_indices=False, mode=_mode, fill_value=None), _OPERAND53, _ROWS, id=f"rows-{_mode.name}")
    _dn = GDN(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
    case("gather", bind("gather", dimension_numbers=_dn, slice_sizes=(3,), indices_are_sorted=False,
                        unique_indices=False, mode=_mode, fill_value=None), sample(I32, (6,), 0, 50),
         np.array([[0], [4], [5], [-2]], I32), id=f"windows-{_mode.name}")
    _dn = GDN(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,), operand_batching_dims=(0,),
              start_indices_batching_dims=(0,))
    case("gather", bind("gather", dimension_numbers=_dn, slice_sizes=(1, 1), indices_are_sorted=False,
                        unique_indices=False, mode=_mode, fill_value=None), sample(F32, (3, 4)),
         np.array([[1], [3], [9]], I32), id=f"batching-{_mode.name}")
_dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
case("gather", bind("gather", dimension_numbers=_dn, slice_sizes=(1, 3), indices_are_sorted=False,
                    unique_indices=False, mode=GatherScatterMode.FILL_OR_DROP, fill_value=-5.0),
     _OPERAND53, _ROWS, id="fill-value")
for _dt in [U8, BOOL, BF16]:
    case("gather", bind("gather", dimension_numbers=_dn, slice_sizes=(1, 3), indices_are_sorted=False,
                        unique_indices=False, mode=GatherScatterMode.FILL_OR_DROP, fill_value=None),
         sample(_dt, (5, 3), 0, 9), np.array([[1], [5]], I8), id=f"default-fill-{dname(_dt)}")
_dn = GDN(offset_dims=(0,), collapsed_slice_dims=(0,), start_index_map=(0, 1))
case("gather", bind("gather", dimension_numbers=_dn, slice_sizes=(1, 2), indices_are_sorted=False, unique_indices=False,
                    mode=GatherScatterMode.FILL_OR_DROP, fill_value=None), _OPERAND53,
     np.array([1, 2], np.uint32), id="two-coordinates-rank1-indices")

# bijective_gather: five rows (2 and 4 not valid) to four (3 not valid), and a (2, 3, 2) value to four rows.
_dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_BIJ_ROWS = (np.array([[3], [0], [1], [4]], I32), np.array([1, 1, 1, 0], BOOL), np.array([[1], [2], [3], [0], [3]], I32),
             np.array([1, 1, 0, 1, 0], BOOL))  # fmt: skip
for _m in (True, False):
    case("bijective_gather", bind("bijective_gather", dimension_numbers=_dn, slice_sizes=(1, 3),
                                  inverse_dimension_numbers=_dn, inverse_slice_sizes=(1, 3), indices_are_sorted=True,
                                  masked=_m), _OPERAND53, *_BIJ_ROWS, id=f"rows-masked-{_m}")  # fmt: skip
case("bijective_gather", bind("bijective_gather", dimension_numbers=GDN(offset_dims=(1,), collapsed_slice_dims=(0, 1),
                                                                        start_index_map=(0, 1)),
                              slice_sizes=(1, 1, 2), inverse_dimension_numbers=GDN(offset_dims=(2,),
                                                                                   collapsed_slice_dims=(0,),
                                                                                   start_index_map=(0,)),
                              inverse_slice_sizes=(1, 2), indices_are_sorted=True, masked=True),
     sample(F32, (2, 3, 2)), np.array([[0, 0], [0, 1], [1, 0], [1, 2]], I32), np.array([1, 1, 1, 0], BOOL),
     np.array([[[0], [1], [3]], [[2], [3], [3]]], I32), np.array([[1, 1, 0], [1, 0, 0]], BOOL), id="pack")  # fmt: skip

_SC_IDX = np.array([[0], [4], [5], [-1], [0]], I32)
_SC_DN = SDN(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
_PT_DN = SDN(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_BT_DN = SDN(update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
             operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
for _name in ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]:
    for _mode in GatherScatterMode:
        _p = dict(indices_are_sorted=False, unique_indices=False, mode=_mode)
        case(_name, bind(_name, dimension_numbers=_SC_DN, **_p), sample(F32, (6,), 0.5, 2), _SC_IDX,
             sample(F32, (5, 2), 0.5, 2, 1), id=f"windows-{_mode.name}")
        case(_name, bind(_name, dimension_numbers=_PT_DN, **_p), sample(I32, (5, 3), 1, 9), np.array([[1], [3], [1]], I32),
             sample(I32, (3, 3), 1, 9, 2), id=f"rows-{_mode.name}")
        case(_name, bind(_name, dimension_numbers=_BT_DN, **_p), sample(F32, (3, 4), 0.5, 2),
             np.array([[1], [3], [9]], I32), sample(F32, (3,), 0.5, 2, 3), id=f"batching-{_mode.name}")
    case(_name, bind(_name, dimension_numbers=_PT_DN, indices_are_sorted=False, unique_indices=False,
                     mode=GatherScatterMode.FILL_OR_DROP), sample(BOOL, (4, 2)), np.array([[1], [1], [2]], U8),
         sample(BOOL, (3, 2), seed=5), id="bool")

# ---------------------------------------------------------------------------
# Reductions

for _name in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]:
    for _dt in FLOATS + [I32, U8]:
        for _axes in [(0,), (1,), (0, 1), ()]:
            case(_name, bind(_name, axes=_axes), sample(_dt, (3, 4), 0.5 if _dt.kind == "f" else 1, 2 if _dt.kind == "f" else 5),
                 rtol=2e-2 if _dt == BF16 else None, id=f"{dname(_dt)}-{_axes}")
    case(_name, bind(_name, axes=(0,)), np.zeros((0, 3), F32), id="empty")
    if _name in ("reduce_sum", "reduce_prod"):
        case(_name, bind(_name, axes=(1,)), sample(C64, (2, 3), 0.5, 1.5), rtol=2e-5, id="complex")
for _name in ["reduce_max", "reduce_min"]:
    case(_name, bind(_name, axes=(1,)), np.array([[1.0, np.nan, 3.0], [-0.0, 0.0, -1.0]], F32), id="nan")
    case(_name, bind(_name, axes=(0,)), sample(BOOL, (3, 4)), id="bool")
    case(_name, bind(_name, axes=(0,)), np.zeros((0, 2), I32), id="empty-int")
for _name in ["reduce_and", "reduce_or"]:
    for _dt in [BOOL, I32, U8, U32]:
        case(_name, bind(_name, axes=(1,)), sample(_dt, (3, 4), 0, 255), id=dname(_dt))
    case(_name, bind(_name, axes=(0,)), np.zeros((0, 2), I32), id="empty")
for _name in ["argmax", "argmin"]:
    for _dt in FLOATS + [I32, U8, BOOL]:
        case(_name, bind(_name, axes=(1,), index_dtype=I32), sample(_dt, (3, 5), 0, 3), id=dname(_dt))
    _x = np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 2.0, 1.0, 1.0], [np.inf, -np.inf, np.inf, 0.0],
                   [-np.inf, -np.inf, -np.inf, -np.inf]], F32)
    case(_name, bind(_name, axes=(1,), index_dtype=I32), _x, id="nan-and-ties")
    case(_name, bind(_name, axes=(0,), index_dtype=U8), _x, id="axis0-uint8")
for _name in ["cumsum", "cumprod", "cummax", "cummin"]:
    for _n in [1, 2, 5, 8, 9]:
        for _rev in [False, True]:
            case(_name, bind(_name, axis=0, reverse=_rev), sample(F32, (_n, 2), 0.5, 1.5), id=f"n{_n}-rev{_rev}")
    for _dt in [F16, BF16, I32, U8]:
        case(_name, bind(_name, axis=1, reverse=False), sample(_dt, (2, 7), 1, 3), rtol=2e-2 if _dt == BF16 else None,
             id=dname(_dt))
    case(_name, bind(_name, axis=1, reverse=True), np.zeros((3, 0), F32), id="empty")
case("cummax", bind("cummax", axis=0, reverse=False), np.array([1.0, np.nan, 3.0, 0.0], F32), id="nan")
case("cummax", bind("cummax", axis=0, reverse=False), sample(BOOL, (6,)), id="bool")
case("cumsum", bind("cumsum", axis=0, reverse=False), sample(C64, (5,)), rtol=2e-5, id="complex")
for _dt in FLOATS + [I32, U8, BOOL]:
    case("sort", bind("sort", dimension=1, is_stable=True, num_keys=1), sample(_dt, (3, 6), 0, 4), id=dname(_dt))
_KEYS = np.array([3.0, np.nan, -0.0, 1.0, 0.0, -np.nan, -np.inf, 1.0, np.inf], F32)
case("sort", bind("sort", dimension=0, is_stable=True, num_keys=1), _KEYS, np.arange(9, dtype=I32), id="nan-zero-stable")
case("sort", bind("sort", dimension=0, is_stable=True, num_keys=2), np.array([1, 0, 1, 0, 1], I32),
     np.array([2.0, 5.0, np.nan, 1.0, 0.5], F32), np.arange(5, dtype=U8), id="two-keys")
case("sort", bind("sort", dimension=0, is_stable=False, num_keys=1), sample(I32, (7, 2), 0, 3),
     sample(F32, (7, 2)), id="axis0-payload")
case("sort", bind("sort", dimension=0, is_stable=True, num_keys=1), np.array([1 + 1j, 1 - 1j, -2 + 0j, 0j], C64),
     id="complex")

# ---------------------------------------------------------------------------
# Linear algebra

_MM = (((1,), (0,)), ((), ()))
for _dt in FLOATS + [I32, I8, BOOL, C64]:
    case("dot_general", bind("dot_general", dimension_numbers=_MM, precision=None, preferred_element_type=None),
         sample(_dt, (3, 4), -3, 3, 1), sample(_dt, (4, 2), -3, 3, 2), rtol=2e-2 if _dt == BF16 else None,
         id=dname(_dt))
case("dot_general", bind("dot_general", dimension_numbers=(((2,), (1,)), ((0,), (0,))), precision="highest",
                         preferred_element_type=None), sample(F32, (2, 3, 4), seed=1), sample(F32, (2, 4, 5), seed=2),
     id="batched")
case("dot_general", bind("dot_general", dimension_numbers=(((0, 2), (2, 0)), ((), ())), precision=("high", None),
                         preferred_element_type=None), sample(F32, (3, 2, 4), seed=1), sample(F32, (4, 5, 3), seed=2),
     id="two-contracting")
for _src, _dst in [(I8, I32), (I8, F32), (F16, F32), (BF16, F32), (BOOL, I32), (U8, np.dtype(np.uint32))]:
    case("dot_general", bind("dot_general", dimension_numbers=_MM, precision=None, preferred_element_type=_dst),
         sample(_src, (3, 4), 0, 100, 1), sample(_src, (4, 2), 0, 100, 2), id=f"{dname(_src)}-to-{dname(_dst)}")
case("dot_general", bind("dot_general", dimension_numbers=(((0,), (0,)), ((), ())), precision=None,
                         preferred_element_type=None), sample(F32, (0, 2)), sample(F32, (0, 3)), id="empty-contraction")


def _conv(**kw: Any) -> Callable[..., Any]:
    params = dict(window_strides=(1,), padding=((0, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
                  dimension_numbers=ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)), feature_group_count=1,
                  batch_group_count=1, precision=None, preferred_element_type=None)
    params.update(kw)
    return bind("conv_general_dilated", **params)


_NCW = sample(F32, (2, 3, 9), seed=1)
_OIW = sample(F32, (4, 3, 3), seed=2)
case("conv_general_dilated", _conv(), _NCW, _OIW, id="plain")
case("conv_general_dilated", _conv(window_strides=(2,), padding=((2, -1),), lhs_dilation=(2,), rhs_dilation=(3,)),
     _NCW, _OIW, id="strides-padding-dilations")
case("conv_general_dilated", _conv(feature_group_count=3), _NCW, sample(F32, (6, 1, 3), seed=3), id="feature-groups")
case("conv_general_dilated", _conv(batch_group_count=2), sample(F32, (4, 3, 9)), sample(F32, (4, 3, 3)), id="batch-groups")
case("conv_general_dilated", _conv(padding=((0, 0),)), sample(F32, (1, 1, 2)), sample(F32, (1, 1, 3)), id="empty-output")
case("conv_general_dilated", _conv(window_strides=(2, 1), padding=((1, 1), (0, 2)), lhs_dilation=(1, 1),
                                   rhs_dilation=(1, 2), dimension_numbers=ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))),
     sample(F32, (2, 6, 5, 3), seed=4), sample(F32, (3, 2, 3, 4), seed=5), id="2d-nhwc-hwio")
for _dt, _pref in [(BF16, None), (F16, F32), (I32, None), (I8, I32), (BOOL, None)]:
    case("conv_general_dilated", _conv(preferred_element_type=_pref), sample(_dt, (2, 3, 9), -3, 3, 1),
         sample(_dt, (4, 3, 3), -3, 3, 2), rtol=2e-2 if _dt == BF16 else None, id=f"{dname(_dt)}-{_pref}")

case("optimization_barrier", lambda x, y: lax.optimization_barrier((x, y)), sample(F32, (2, 3)), sample(I32, (4,)))
case("optimization_barrier", lambda: lax.optimization_barrier(()), id="no-operands")

# ---------------------------------------------------------------------------
# Host callbacks


def _pure_sin(x: Any) -> Any:
    return host_callbacks.pure_callback(lambda v: np.sin(v).astype(v.dtype), pc.ShapeDtypeStruct(x.shape, x.dtype), x)


case("callback", _pure_sin, sample(F32, (2, 3)), id="pure")
case("callback", lambda x, y: host_callbacks.io_callback(lambda a, b: (a + b, a * b), (pc.ShapeDtypeStruct((3,), I32),) * 2,
                                                        x, y, ordered=True), sample(I32, (3,), 0, 5, 1),
     sample(I32, (3,), 0, 5, 2), id="io-ordered-two-results")  # fmt: skip

# ---------------------------------------------------------------------------
# Windows

_WIN = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (1, 1)), base_dilation=(1, 2),
            window_dilation=(2, 1))
_PLAIN = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding=((0, 0), (0, 0)), base_dilation=(1, 1),
              window_dilation=(1, 1))
for _n in ("reduce_window_sum", "reduce_window_max", "reduce_window_min"):
    for _dt in (F32, BF16, I32):
        case(_n, bind(_n, **_WIN), sample(_dt, (4, 5), -3, 3, 1), rtol=2e-2 if _dt == BF16 else None, id=dname(_dt))
    case(_n, bind(_n, **_PLAIN), sample(F32, (1, 1)), id="empty-output")
case("reduce_window", lambda x: lax.reduce_window(x, np.float32(1), lax.mul, (2, 2), (1, 2), "SAME", (2, 1)),
     sample(F32, (3, 4)), id="mul")
case("reduce_window", lambda x, y: lax.reduce_window((x, y), (np.float32(-np.inf), np.int32(0)),
                                                     lambda a, b: (lax.max(a[0], b[0]), lax.add(a[1], b[1])), (3,)),
     sample(F32, (6,)), sample(I32, (6,), 0, 5), id="variadic")
case("select_and_gather_add", bind("select_and_gather_add", select="ge", **_WIN), sample(F32, (4, 5), seed=1),
     sample(F32, (4, 5), seed=2))
case("select_and_scatter_add", bind("select_and_scatter_add", select="le", window_dimensions=(2, 3),
                                    window_strides=(1, 2), padding=((1, 0), (1, 1))),
     sample(F32, (4, 3), seed=1), sample(F32, (4, 5), seed=2))

# ---------------------------------------------------------------------------
# Control flow


def _branches(i: Any, x: Any) -> Any:
    return lax.switch(i, [lambda v: lax.neg(v), lambda v: lax.mul(v, v), lambda v: lax.add(v, 1.0)], x)


for _i in [0, 1, 2, 5, -3]:
    case("cond", _branches, np.int32(_i), _X23, id=f"index{_i}")
case("cond", lambda p, x, y: lax.cond(p, lambda a, b: (a, lax.add(a, b)), lambda a, b: (b, a), x, y),
     np.bool_(True), _X23, sample(F32, (2, 3), seed=9), id="pred-two-outputs")


def _collatz(n: Any) -> Any:
    def body(c: Any) -> Any:
        k, steps = c
        odd = lax.eq(lax.rem(k, 2), 1)
        return lax.select(odd, lax.add(lax.mul(k, 3), 1), lax.div(k, 2)), lax.add(steps, 1)

    return lax.while_loop(lambda c: lax.gt(c[0], 1), body, (n, np.int32(0)))


case("while", _collatz, np.int32(27), id="collatz")
case("while", lambda x, w, n: lax.fori_loop(0, n, lambda i, v: lax.add(lax.mul(v, w), lax.convert_element_type(i, np.float32)), x),
     sample(F32, (3,)), np.float32(0.5), np.int32(5), id="fori-consts")
case("while", lambda x: lax.while_loop(lambda v: lax.lt(v, 0.0), lambda v: lax.add(v, 1.0), x), np.float32(3.0),
     id="zero-trips")


def _scan_case(reverse: bool, unroll: int) -> Callable[..., Any]:
    def f(c0: Any, xs: Any, w: Any) -> Any:
        def body(c: Any, x: Any) -> Any:
            c2 = lax.add(lax.mul(c, w), lax.reduce_sum(x[0], (0,)))
            return c2, (c2, lax.convert_element_type(lax.sign(x[1]), np.int32))

        return lax.scan(body, c0, xs, reverse=reverse, unroll=unroll)

    return f


for _rev in [False, True]:
    for _unroll in [1, 2, 3, 7, 9]:
        case("scan", _scan_case(_rev, _unroll), np.float32(0.5), (sample(F32, (7, 2)), sample(F32, (7,), seed=3)),
             np.float32(0.9), id=f"rev{_rev}-unroll{_unroll}")
case("scan", lambda c, xs: lax.scan(lambda a, x: (lax.add(a, x), a), c, xs), np.float32(1), np.zeros((0,), F32),
     id="length0")
case("scan", lambda xs: lax.map(lambda x: lax.reduce_sum(x, (0,)), xs), sample(F32, (4, 3)), id="map")
case("scan", lambda c: lax.scan(lambda a, _: (lax.mul(a, 2.0), None), c, None, length=5), np.float32(1.5),
     id="no-xs")

# ---------------------------------------------------------------------------
# Calls


def _named(x: Any, y: Any) -> Any:
    f = lax.named_call(lambda a, b: lax.add(lax.sin(a), b), name="my fn!")
    return f(f(x, y), y)


case("closed_call", _named, _X23, sample(F32, (2, 3), seed=5))
case("closed_call", lambda x: lax.named_call(lambda a: (a, lax.neg(a)), name="pair")(x), sample(I32, (3,), 0, 9),
     id="passthrough")


@pc.custom_jvp
def _softplus(x: Any) -> Any:
    return lax.log1p(lax.exp(x))


_softplus.defjvp(lambda primals, tangents: (_softplus(primals[0]), lax.mul(tangents[0], lax.logistic(primals[0]))))


@pc.custom_vjp
def _clip_grad(x: Any) -> Any:
    return lax.mul(x, 2.0)


_clip_grad.defvjp(lambda x: (_clip_grad(x), None), lambda _, g: (lax.clamp(-1.0, g, 1.0),))


@pc.custom_vmap
def _vmapped(x: Any, y: Any) -> Any:
    return lax.add(lax.sin(x), y)


_vmapped.def_vmap(lambda axis_size, in_batched, x, y: (lax.add(lax.sin(x), y), in_batched[0] or in_batched[1]))


@pc.custom_ivjp
def _ivjp_mul(x: Any, y: Any) -> Any:
    return lax.mul(x, y)


_ivjp_mul.defivjp(lambda xs, ys, dys: ((lax.div(ys, xs[1]), xs[1]), (lax.mul(dys, xs[1]), lax.mul(dys, xs[0]))))

_W = sample(F32, (2, 3), seed=11)
case("custom_jvp_call", _softplus, _X23)
case("custom_vjp_call", _clip_grad, _X23)
case("custom_vmap_call", _vmapped, _X23, sample(F32, (2, 3), seed=6))
case("custom_ivjp_call", _ivjp_mul, _X23, sample(F32, (2, 3), seed=6))
case("checkpoint", pc.checkpoint(lambda x: lax.mul(lax.sin(x), _W)), _X23)
case("invertible_call", pc.invertible(lambda x, y: (lax.add(x, y), lax.mul(y, _W))), _X23, sample(F32, (2, 3), seed=6))

# ---------------------------------------------------------------------------
# Complex numbers and FFT

_C128 = np.dtype(np.complex128)
for _cdt in [C64, _C128]:
    for _name in ["real", "imag", "conj"]:
        case(_name, bind(_name), sample(_cdt, (2, 3), -3, 3, 4), id=dname(_cdt))
for _fdt in [F32, np.dtype(np.float64)]:
    case("complex", bind("complex"), sample(_fdt, (2, 3), seed=1), sample(_fdt, (2, 3), seed=2), id=dname(_fdt))
case("complex", bind("complex"), sample(F32, (2, 3), seed=1), np.float32(-1.5), id="rank0")
_SIG = sample(F32, (3, 4, 6), seed=5)
_SPEC = sample(C64, (3, 4, 6), seed=6)
for _k in (1, 2, 3):
    _lengths = (3, 4, 6)[3 - _k :]
    case("fft", bind("fft", fft_type=0, fft_lengths=_lengths), _SPEC, rtol=1e-4, id=f"fft-{_k}d")
    case("fft", bind("fft", fft_type=1, fft_lengths=_lengths), _SPEC, rtol=1e-4, id=f"ifft-{_k}d")
    case("fft", bind("fft", fft_type=2, fft_lengths=_lengths), _SIG, rtol=1e-4, id=f"rfft-{_k}d")
    case("fft", bind("fft", fft_type=3, fft_lengths=(*_lengths[:-1], 10)), _SPEC, rtol=1e-4, id=f"irfft-{_k}d")
case("fft", bind("fft", fft_type=2, fft_lengths=(7,)), sample(F32, (2, 7)), rtol=1e-4, id="rfft-odd")

# ---------------------------------------------------------------------------
# AD helpers and shapes

case("stop_gradient", bind("stop_gradient"), _X23)
case("add_any", bind("add_any"), _X23, sample(F32, (2, 3), seed=8))
case("add_any", bind("add_any"), sample(I32, (3,), 0, 9), sample(I32, (3,), 0, 9, 1), id="int")
case("zeros_like", bind("zeros_like"), sample(BF16, (2, 3)))
case("zeros_like", bind("zeros_like"), sample(BOOL, (4,)), id="bool")
if "dim_as_value" in {p.name for p in pc.all_primitives()}:
    case("dim_as_value", lambda x: lax.add(x, bind("dim_as_value", dim=3)()), sample(I32, (2,), 0, 9))


# ---------------------------------------------------------------------------
# The tests


def _uses(jaxpr: Jaxpr, name: str) -> bool:
    return any(e.primitive.name == name or any(_uses(j, name) for j in sub_jaxprs(e)) for e in jaxpr.eqns)


@functools.cache
def _covered() -> frozenset[str]:
    return frozenset(str(c.values[0]) for c in CASES)


#: Lowered primitives tested elsewhere: they need plait-autodiff, or cannot run forwards at all.
ELSEWHERE = {"custom_lin": "test_lowering_linearized.py", "invertible_lin": "test_lowering_linearized.py",
             **dict.fromkeys(("cholesky", "triangular_solve", "lu", "qr", "eigh", "svd", "eig"),
                             "test_lowering_factorizations.py"),
             **dict.fromkeys(("all_gather", "all_to_all", "axis_index", "pmax", "pmean", "pmin", "ppermute", "psum",
                              "psum_scatter", "pvary", "shard_map", "sharding_constraint"), "multidevice_checks.py")}


def test_every_lowered_primitive_has_cases() -> None:
    lowered = {p.name for p in pc.all_primitives() if p in lowering_rules}
    assert sorted(lowered - _covered() - set(ELSEWHERE)) == []
    assert len(lowered) > 100


@pytest.mark.parametrize("name,fn,args,rtol", CASES)
def test_primitive_matches_numpy(name: str, fn: Callable[..., Any], args: tuple[Any, ...], rtol: float | None) -> None:
    closed = check(fn, *args, rtol=rtol)
    assert _uses(closed.jaxpr, name), f"the case does not use {name}:\n{closed}"
