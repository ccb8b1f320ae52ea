"""Every differentiation rule checked numerically, primitive by primitive.

For each primitive of core's catalog (control flow, calls and collectives
have their own test files) a few functions that use it are checked with x64
on: the JVP against central differences, the VJP against the JVP by the
dot-product test, ``linearize`` against ``jvp``, and both modes staged with
``make_jaxpr`` against eager.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from autodiff_checks import check_all

from plait_core import all_primitives, dtypes
from plait_core.primitives import ad_helpers as adp
from plait_core.primitives import bijective_gather as bg
from plait_core.primitives import complex_numbers as cx
from plait_core.primitives import elementwise as ew
from plait_core.primitives import linalg as la
from plait_core.primitives import optimization_barrier as ob
from plait_core.primitives import reduce_window as rw
from plait_core.primitives import reductions as red
from plait_core.primitives import sharding as sh
from plait_core.primitives import structural as st
from plait_core.primitives.fft import FftType, fft_p
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from plait_core.primitives.linalg import ConvDimensionNumbers
from plait_core.primitives.shapes import dim_as_value_p
from plait_core.sharding import Mesh, NamedSharding, P

R = np.random.default_rng(0)
f64 = np.float64


def normal(*shape: int) -> np.ndarray:
    return R.standard_normal(shape).astype(f64)


def uniform(lo: float, hi: float, *shape: int) -> np.ndarray:
    return R.uniform(lo, hi, shape).astype(f64)


def bind(prim: Any, **params: Any) -> Callable[..., Any]:
    def f(*xs: Any) -> Any:
        return prim.bind(*xs, **params)

    f.__name__ = prim.name
    return f


def cvt(x: Any, dtype: Any) -> Any:
    return ew.convert_element_type_p.bind(x, new_dtype=np.dtype(dtype), weak_type=False)


Case = tuple[str, Callable[..., Any], tuple[Any, ...], dict[str, float]]
CASES: dict[str, list[Case]] = {}


def case(prim_name: str, label: str, f: Callable[..., Any], *args: Any, **tol: float) -> None:
    """A function exercising ``prim_name``'s rules on ``args``; ``tol``
    overrides the central-difference step and tolerances (``eps``, ``rtol``)."""
    CASES.setdefault(prim_name, []).append((f"{prim_name}-{label}", f, args, tol))


# ---------------------------------------------------------------------------
# Elementwise: unary

UNARY_DOMAINS: dict[str, tuple[float, float]] = {
    "neg": (-2, 2), "exp": (-2, 2), "exp2": (-2, 2), "log": (0.3, 3), "log1p": (-0.5, 2), "expm1": (-2, 2),
    "tanh": (-2, 2), "logistic": (-3, 3), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1, 1), "asin": (-0.8, 0.8),
    "acos": (-0.8, 0.8), "atan": (-3, 3), "sinh": (-2, 2), "cosh": (-2, 2), "asinh": (-3, 3), "acosh": (1.2, 3),
    "atanh": (-0.8, 0.8), "sqrt": (0.3, 3), "rsqrt": (0.3, 3), "cbrt": (0.3, 3), "abs": (0.2, 2),
    "erf": (-2, 2), "erf_inv": (-0.8, 0.8), "lgamma": (0.3, 4), "digamma": (0.3, 4),
}  # fmt: skip
for _name, (_lo, _hi) in UNARY_DOMAINS.items():
    _p = getattr(ew, f"{_name}_p")
    case(_name, "vector", bind(_p), uniform(_lo, _hi, 5))
    case(_name, "matrix", bind(_p), uniform(_lo, _hi, 2, 3))
case("abs", "negative", bind(ew.abs_p), uniform(-2, -0.2, 4))
case("cbrt", "negative", bind(ew.cbrt_p), uniform(-3, -0.3, 4))
case("lgamma", "negative", bind(ew.lgamma_p), np.array([-0.5, -1.3, -2.7], f64))
case("digamma", "negative", bind(ew.digamma_p), np.array([-0.5, -1.3, -2.7, 0.1, 7.5, 30.0], f64))
case("sin", "scalar", bind(ew.sin_p), f64(0.7))
for _y in (0, 1, 2, 3, -2):
    case("integer_pow", f"y{_y}", bind(ew.integer_pow_p, y=_y), uniform(0.5, 2, 4))


def _times_piecewise(prim: Any, **params: Any) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        return ew.mul_p.bind(x, prim.bind(x, **params))

    f.__name__ = prim.name
    return f


for _p in (ew.sign_p, ew.floor_p, ew.ceil_p):
    case(_p.name, "times_x", _times_piecewise(_p), np.array([-1.7, -0.3, 0.4, 2.6], f64))
case("round", "times_x", _times_piecewise(ew.round_p, rounding_method=0), np.array([-1.7, -0.3, 0.4, 2.6], f64))
case("round", "even", _times_piecewise(ew.round_p, rounding_method=1), np.array([-1.7, -0.3, 0.4, 2.6], f64))
case(
    "is_finite", "select",
    lambda x: ew.select_n_p.bind(ew.is_finite_p.bind(x), ew.neg_p.bind(x), ew.sin_p.bind(x)), normal(4),
)  # fmt: skip
case(
    "nextafter", "times_x",
    lambda x: ew.mul_p.bind(x, ew.nextafter_p.bind(x, ew.add_p.bind(x, f64(1.0)))), normal(4),
)  # fmt: skip

# ---------------------------------------------------------------------------
# Elementwise: binary and n-ary

for _name in ("add", "sub", "mul", "div", "atan2", "max", "min"):
    _p = getattr(ew, f"{_name}_p")
    case(_name, "same_shape", bind(_p), normal(3, 2), uniform(0.5, 2, 3, 2))
    case(_name, "scalar_left", bind(_p), f64(0.7), uniform(0.5, 2, 4))
    case(_name, "scalar_right", bind(_p), normal(4), f64(1.3))
case("rem", "same_shape", bind(ew.rem_p), uniform(1, 5, 5), uniform(0.6, 0.9, 5))
case("rem", "scalar", bind(ew.rem_p), uniform(1, 5, 5), f64(0.7))
case("pow", "same_shape", bind(ew.pow_p), uniform(0.5, 2, 5), normal(5))
case("pow", "scalar_exponent", bind(ew.pow_p), uniform(0.5, 2, 5), f64(1.7))
case("pow", "scalar_base", bind(ew.pow_p), f64(1.5), normal(3))
case("max", "ties", bind(ew.max_p), np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 4.0]))


def _compare(prim: Any) -> Callable[..., Any]:
    def f(x: Any, y: Any) -> Any:
        return ew.select_n_p.bind(prim.bind(x, y), ew.mul_p.bind(x, y), ew.sin_p.bind(x))

    f.__name__ = prim.name
    return f


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    case(_name, "select", _compare(getattr(ew, f"{_name}_p")), normal(5), normal(5))


def _integer_op(prim: Any, *ints: Any) -> Callable[..., Any]:
    """A float function whose value depends on an integer primitive (derivative: the float part)."""

    def f(x: Any) -> Any:
        k = prim.bind(*ints)
        return ew.mul_p.bind(x, cvt(k, np.float64))

    f.__name__ = prim.name
    return f


_I = np.array([3, 5, 12], np.int64)
_J = np.array([1, 2, 1], np.int64)
for _p, _ops in (
    (ew.not_p, (_I,)), (ew.and_p, (_I, _J)), (ew.or_p, (_I, _J)), (ew.xor_p, (_I, _J)),
    (ew.shift_left_p, (_I, _J)), (ew.shift_right_arithmetic_p, (_I, _J)), (ew.shift_right_logical_p, (_I, _J)),
):  # fmt: skip
    case(_p.name, "int", _integer_op(_p, *_ops), normal(3))


def _int_of_x(x: Any) -> Any:
    return cvt(ew.floor_p.bind(ew.mul_p.bind(x, f64(3.0))), np.int64)


case("and", "traced_int", lambda x: ew.mul_p.bind(x, cvt(ew.and_p.bind(_int_of_x(x), np.int64(6)), f64)), uniform(1, 4, 4))

case("select_n", "bool", lambda p, a, b: ew.select_n_p.bind(np.array([True, False, True]), p, ew.mul_p.bind(a, b)),
     normal(3), normal(3), normal(3))  # fmt: skip
case("select_n", "int32_3way", lambda a, b, c: ew.select_n_p.bind(np.array([0, 2, 1, 2], np.int32), a, b, c),
     normal(4), normal(4), normal(4))  # fmt: skip
case("select_n", "scalar_which", lambda a, b: ew.select_n_p.bind(np.bool_(True), a, b), normal(2, 2), normal(2, 2))
case("clamp", "arrays", bind(ew.clamp_p), normal(6) - 1, normal(6), normal(6) + 1)
case("clamp", "scalar_bounds", bind(ew.clamp_p), f64(-0.5), np.array([-1.0, -0.2, 0.3, 0.9]), f64(0.5))
case("convert_element_type", "f32_roundtrip",
     lambda x: cvt(ew.mul_p.bind(cvt(x, np.float32), np.float32(2.0)), f64), np.array([0.5, 1.5, -2.25]),
     eps=1e-3, rtol=1e-3, atol=5e-4, vjp_rtol=1e-5)  # fmt: skip
case("convert_element_type", "to_int", lambda x: ew.mul_p.bind(x, cvt(cvt(x, np.int32), f64)), uniform(1.1, 3.9, 4))
case("bitcast_convert_type", "sign_bit",
     lambda x: ew.select_n_p.bind(
         ew.lt_p.bind(ew.bitcast_convert_type_p.bind(x, new_dtype=np.dtype(np.int64)), np.int64(0)),
         ew.sin_p.bind(x), ew.neg_p.bind(x)),
     np.array([0.5, -1.5, 2.0]))  # fmt: skip


# ---------------------------------------------------------------------------
# Structural

case("broadcast_in_dim", "new_axes", bind(st.broadcast_in_dim_p, shape=(2, 3, 4), broadcast_dimensions=(1,)), normal(3))
case("broadcast_in_dim", "stretch", bind(st.broadcast_in_dim_p, shape=(2, 3, 4), broadcast_dimensions=(0, 2)), normal(1, 4))
case("broadcast_in_dim", "scalar", bind(st.broadcast_in_dim_p, shape=(2, 3), broadcast_dimensions=()), f64(1.5))
case("reshape", "plain", bind(st.reshape_p, new_sizes=(3, 4), dimensions=None), normal(2, 6))
case("reshape", "dimensions", bind(st.reshape_p, new_sizes=(6, 4), dimensions=(2, 0, 1)), normal(2, 3, 4))
case("squeeze", "plain", bind(st.squeeze_p, dimensions=(0, 2)), normal(1, 3, 1, 2))
case("expand_dims", "plain", bind(st.expand_dims_p, dimensions=(0, 3)), normal(3, 2))
case("transpose", "plain", bind(st.transpose_p, permutation=(2, 0, 1)), normal(2, 3, 4))
case("rev", "plain", bind(st.rev_p, dimensions=(0, 2)), normal(2, 3, 4))
case("copy", "plain", bind(st.copy_p), normal(3))
case("pad", "edges_and_interior", bind(st.pad_p, padding_config=((1, 2, 1), (0, -1, 0))), normal(3, 4), f64(0.5))
case("pad", "negative", bind(st.pad_p, padding_config=((-1, -1, 2),)), normal(5), f64(-1.0))
case("concatenate", "three", bind(st.concatenate_p, dimension=1), normal(2, 1), normal(2, 3), normal(2, 2))
case("slice", "strided", bind(st.slice_p, start_indices=(1, 0), limit_indices=(6, 3), strides=(2, 2)), normal(7, 4))
case("slice", "plain", bind(st.slice_p, start_indices=(1,), limit_indices=(3,), strides=None), normal(5))
case("dynamic_slice", "clamped",
     lambda x: st.dynamic_slice_p.bind(x, np.int32(3), np.int32(-1), slice_sizes=(2, 2)), normal(4, 3))  # fmt: skip
case("dynamic_update_slice", "both",
     lambda x, u: st.dynamic_update_slice_p.bind(x, u, np.int32(1), np.int32(1)), normal(4, 3), normal(2, 2))  # fmt: skip

_GDN = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_GIDX = np.array([[2], [0], [2], [5]], np.int32)  # a repeat, and an out-of-bounds row


def _gather(mode: GatherScatterMode) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        return st.gather_p.bind(
            x, _GIDX, dimension_numbers=_GDN, slice_sizes=(1, 3), indices_are_sorted=False,
            unique_indices=False, mode=mode, fill_value=2.5,
        )  # fmt: skip

    f.__name__ = f"gather_{mode.name}"
    return f


case("gather", "clip", _gather(GatherScatterMode.CLIP), normal(4, 3))
case("gather", "fill", _gather(GatherScatterMode.FILL_OR_DROP), normal(4, 3))

# Five rows, two of them not valid, to four (the last not valid): see test_bijective_gather.py.
_BIJ = dict(dimension_numbers=_GDN, slice_sizes=(1, 3), inverse_dimension_numbers=_GDN, inverse_slice_sizes=(1, 3),
            indices_are_sorted=False, masked=True)  # fmt: skip
case("bijective_gather", "masked",
     lambda x: bg.bijective_gather_p.bind(x, np.array([[3], [0], [1], [4]], np.int32), np.array([1, 1, 1, 0], bool),
                                          np.array([[1], [2], [3], [0], [3]], np.int32),
                                          np.array([1, 1, 0, 1, 0], bool), **_BIJ), normal(5, 3))  # fmt: skip

_SDN = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
_SIDX = np.array([[1], [3], [1], [7]], np.int32)
_UIDX = np.array([[2], [0], [3]], np.int32)


def _scatter(prim: Any, idx: np.ndarray, unique: bool, mode: GatherScatterMode = GatherScatterMode.FILL_OR_DROP) -> Callable[..., Any]:
    def f(x: Any, u: Any) -> Any:
        return prim.bind(x, idx, u, dimension_numbers=_SDN, indices_are_sorted=False, unique_indices=unique, mode=mode)

    f.__name__ = prim.name
    return f


for _p in (st.scatter_p, st.scatter_add_p, st.scatter_min_p, st.scatter_max_p):
    case(_p.name, "repeats", _scatter(_p, _SIDX, False), normal(5, 2), normal(4, 2))
    case(_p.name, "unique", _scatter(_p, _UIDX, True), normal(5, 2), normal(3, 2))
case("scatter", "clip", _scatter(st.scatter_p, _SIDX, False, GatherScatterMode.CLIP), normal(5, 2), normal(4, 2))
case("scatter_mul", "unique", _scatter(st.scatter_mul_p, _UIDX, True), normal(5, 2), normal(3, 2))
case("scatter_mul", "operand_only", lambda x: _scatter(st.scatter_mul_p, _SIDX, False)(x, np.full((4, 2), 1.5)), normal(5, 2))
case("scatter_mul", "repeats", _scatter(st.scatter_mul_p, _SIDX, False), normal(5, 2), normal(4, 2))
# Zeros among repeated updates: a position with one zero update, one with two, one whose only update is 0.
_MUL_ZEROS = np.array([[0.0, 1.2], [0.5, 0.0], [0.0, 0.0], [2.0, 3.0]])
case("scatter_mul", "repeats_zeros", _scatter(st.scatter_mul_p, _SIDX, False), normal(5, 2), _MUL_ZEROS)
case("scatter_mul", "repeats_clip", _scatter(st.scatter_mul_p, _SIDX, False, GatherScatterMode.CLIP), normal(5, 2), normal(4, 2))
case("dim_as_value", "times_x", lambda x: ew.mul_p.bind(x, cvt(dim_as_value_p.bind(dim=3), f64)), normal(2))
case("iota", "times_x", lambda x: ew.mul_p.bind(x, st.iota_p.bind(dtype=np.dtype(f64), shape=(3,), dimension=0)), normal(3))


# ---------------------------------------------------------------------------
# Reductions, scans, sort

case("reduce_sum", "axes", bind(red.reduce_sum_p, axes=(0, 2)), normal(2, 3, 4))
case("reduce_sum", "all", bind(red.reduce_sum_p, axes=(0,)), normal(5))
for _p in (red.reduce_max_p, red.reduce_min_p):
    case(_p.name, "axes", bind(_p, axes=(1,)), normal(3, 4))
    case(_p.name, "ties", bind(_p, axes=(0,)), np.array([1.0, 3.0, 3.0, -2.0]))
case("reduce_prod", "axes", bind(red.reduce_prod_p, axes=(0, 2)), uniform(0.5, 1.5, 2, 3, 2))
case("reduce_prod", "zeros", bind(red.reduce_prod_p, axes=(1,)), np.array([[1.5, 0.0, 2.0], [0.0, 0.0, 3.0], [1.0, 2.0, 0.5]]))
case("reduce_prod", "no_axes", bind(red.reduce_prod_p, axes=()), normal(3))
case("reduce_and", "bools", lambda x: ew.mul_p.bind(x, cvt(red.reduce_and_p.bind(ew.gt_p.bind(x, f64(0)), axes=(0,)), f64)), normal(3))
case("reduce_or", "bools", lambda x: ew.mul_p.bind(x, cvt(red.reduce_or_p.bind(ew.gt_p.bind(x, f64(0)), axes=(0,)), f64)), normal(3))
for _p in (red.argmax_p, red.argmin_p):
    case(_p.name, "times_x",
         lambda x, _p=_p: ew.mul_p.bind(x, cvt(_p.bind(x, axes=(0,), index_dtype=np.dtype(np.int32)), f64)),
         normal(4))  # fmt: skip
for _p in (red.cumsum_p, red.cumprod_p, red.cummax_p, red.cummin_p):
    for _rev in (False, True):
        case(_p.name, f"rev{_rev}", bind(_p, axis=1, reverse=_rev), uniform(0.5, 1.5, 2, 5) * np.array([1, -1, 1, -1, 1]))
case("cumprod", "zero", bind(red.cumprod_p, axis=0, reverse=False), np.array([1.5, 0.0, 2.0, -1.0]))
case("sort", "one", bind(red.sort_p, dimension=0, is_stable=True, num_keys=1), normal(6))
case("sort", "key_value", bind(red.sort_p, dimension=1, is_stable=True, num_keys=1), normal(2, 5), normal(2, 5))
case("sort", "two_keys",
     lambda b, c: red.sort_p.bind(np.array([1.0, 0.0, 1.0, 0.0]), b, c, dimension=0, is_stable=True, num_keys=2),
     normal(4), normal(4))  # fmt: skip


# ---------------------------------------------------------------------------
# Linear algebra


def _dot(dn: Any, preferred: Any = None) -> Callable[..., Any]:
    return bind(la.dot_general_p, dimension_numbers=dn, precision=None, preferred_element_type=preferred)


case("dot_general", "matmul", _dot((((1,), (0,)), ((), ()))), normal(2, 3), normal(3, 4))
case("dot_general", "vector", _dot((((0,), (0,)), ((), ()))), normal(3), normal(3))
case("dot_general", "batched", _dot((((2,), (1,)), ((0,), (0,)))), normal(2, 3, 4), normal(2, 4, 5))
case("dot_general", "odd_layout", _dot((((0, 2), (2, 1)), ((1,), (0,)))), normal(3, 2, 4), normal(2, 4, 3, 5))
case("dot_general", "outer", _dot((((), ()), ((), ()))), normal(2), normal(3))
case("dot_general", "preferred",
     lambda a, b: _dot((((1,), (0,)), ((), ())), np.dtype(np.float64))(cvt(a, np.float32), cvt(b, np.float32)),
     normal(2, 3), normal(3, 2), eps=1e-3, rtol=1e-3, atol=5e-4, vjp_rtol=1e-5)  # fmt: skip


def _conv(
    strides: tuple[int, ...] = (1, 1), padding: Any = ((0, 0), (0, 0)), lhs_dil: tuple[int, ...] = (1, 1),
    rhs_dil: tuple[int, ...] = (1, 1), dn: Any = None, groups: int = 1, bgroups: int = 1,
) -> Callable[..., Any]:  # fmt: skip
    dn = dn or ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
    return bind(
        la.conv_general_dilated_p, window_strides=strides, padding=padding, lhs_dilation=lhs_dil,
        rhs_dilation=rhs_dil, dimension_numbers=dn, feature_group_count=groups, batch_group_count=bgroups,
        precision=None, preferred_element_type=None,
    )  # fmt: skip


case("conv_general_dilated", "plain", _conv(), normal(2, 3, 5, 4), normal(4, 3, 2, 2))
case("conv_general_dilated", "strided_padded", _conv((2, 1), ((1, 2), (0, 1))), normal(1, 2, 7, 5), normal(3, 2, 3, 2))
case("conv_general_dilated", "dilated", _conv((1, 2), ((1, 0), (2, 1)), (2, 1), (1, 2)), normal(1, 2, 4, 6), normal(2, 2, 2, 3))
case("conv_general_dilated", "negative_pad", _conv((1, 1), ((-1, 1), (0, -1))), normal(1, 1, 6, 5), normal(2, 1, 2, 2))
case("conv_general_dilated", "feature_groups", _conv(groups=2), normal(2, 4, 4, 4), normal(6, 2, 2, 2))
case("conv_general_dilated", "batch_groups", _conv(bgroups=2), normal(4, 3, 4, 4), normal(4, 3, 2, 2))
case("conv_general_dilated", "nhwc",
     _conv((2, 1), ((1, 1), (0, 0)), dn=ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))),
     normal(2, 5, 4, 3), normal(3, 2, 3, 4))  # fmt: skip
case("conv_general_dilated", "one_d", _conv((1,), ((1, 1),), (1,), (1,), ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))),
     normal(2, 3, 6), normal(4, 3, 3))  # fmt: skip


# ---------------------------------------------------------------------------
# Complex numbers and FFT, with real inputs and outputs (so that the checks'
# real inner products apply); the complex values in between exercise JAX's
# pairing of complex cotangents.


def _z(x: Any, y: Any) -> Any:
    return cx.complex_p.bind(x, y)


def _parts(z: Any) -> tuple[Any, Any]:
    return cx.real_p.bind(z), cx.imag_p.bind(z)


case("complex", "parts", lambda x, y: _parts(ew.mul_p.bind(_z(x, y), _z(y, x))), normal(2, 3), normal(2, 3))
case("complex", "rank0", lambda x, y: _parts(_z(x, y)), normal(3), np.float64(0.7))
case("real", "of_square", lambda x, y: cx.real_p.bind(ew.mul_p.bind(_z(x, y), _z(x, y))), normal(4), normal(4))
case("imag", "of_exp", lambda x, y: cx.imag_p.bind(ew.exp_p.bind(_z(x, y))), normal(4), normal(4))
case("conj", "times_z", lambda x, y: _parts(ew.mul_p.bind(cx.conj_p.bind(_z(x, y)), ew.sin_p.bind(_z(y, x)))),
     normal(4), normal(4))  # fmt: skip
case("abs", "complex", lambda x, y: ew.abs_p.bind(_z(x, y)), normal(5), normal(5))


def _fft(kind: FftType, lengths: tuple[int, ...]) -> Callable[..., Any]:
    def f(*xs: Any) -> Any:
        operand = xs[0] if kind == FftType.RFFT else _z(*xs)
        out = fft_p.bind(operand, fft_type=kind, fft_lengths=lengths)
        return out if kind == FftType.IRFFT else _parts(out)

    return f


for _lengths in [(6,), (3, 4), (2, 3, 4)]:
    _shape = (2, *_lengths)
    _label = f"{len(_lengths)}d"
    case("fft", f"fft_{_label}", _fft(FftType.FFT, _lengths), normal(*_shape), normal(*_shape))
    case("fft", f"ifft_{_label}", _fft(FftType.IFFT, _lengths), normal(*_shape), normal(*_shape))
    case("fft", f"rfft_{_label}", _fft(FftType.RFFT, _lengths), normal(*_shape))
    for _n in (_lengths[-1], _lengths[-1] + 1):  # even and odd output lengths
        _half = (2, *_lengths[:-1], _n // 2 + 1)
        case("fft", f"irfft_{_label}_n{_n}", _fft(FftType.IRFFT, (*_lengths[:-1], _n)), normal(*_half), normal(*_half))

# Any objects stand for devices: the constraint only lays the value out.
_MESH = Mesh(np.array([object(), object()]), ("d",))
case("sharding_constraint", "rows",
     lambda x: ew.mul_p.bind(sh.sharding_constraint_p.bind(ew.sin_p.bind(x), sharding=NamedSharding(_MESH, P("d", None))),
                             x), normal(2, 3))  # fmt: skip
case("optimization_barrier", "two_operands",
     lambda x, y: ew.mul_p.bind(*ob.optimization_barrier_p.bind(ew.sin_p.bind(x), y)), normal(3), normal(3))  # fmt: skip

# ---------------------------------------------------------------------------
# Windows

_WIN = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (1, 1)), base_dilation=(1, 2),
            window_dilation=(1, 1))  # fmt: skip
_DIL = {**_WIN, "base_dilation": (1, 1), "window_dilation": (2, 1)}
_SCATTER = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (1, 1)))
for _n in ("sum", "max", "min"):
    _p = getattr(rw, f"reduce_window_{_n}_p")
    case(_p.name, "strided_padded_base_dilated", bind(_p, **_WIN), normal(4, 5))
case("reduce_window_sum", "window_dilated", bind(rw.reduce_window_sum_p, **_DIL), normal(5, 4))
_X = normal(4, 5)
case("select_and_gather_add", "ge", lambda t: rw.select_and_gather_add_p.bind(t, _X, select="ge", **_WIN), normal(4, 5))
case("select_and_scatter_add", "le", lambda s: rw.select_and_scatter_add_p.bind(s, _X, select="le", **_SCATTER),
     normal(4, 3))  # fmt: skip

# ---------------------------------------------------------------------------
# AD helpers

case("add_any", "plain", bind(adp.add_any_p), normal(3), normal(3))
case("zeros_like", "plus_x", lambda x: ew.add_p.bind(x, adp.zeros_like_p.bind(ew.sin_p.bind(x))), normal(3))
case("stop_gradient", "constant", lambda x: ew.add_p.bind(x, adp.stop_gradient_p.bind(ew.sin_p.bind(np.float64(0.3)))), normal(3))

# ---------------------------------------------------------------------------
# The walk over the catalog

#: Primitives tested in other files, and why.
ELSEWHERE = {
    "cond": "test_control_flow.py", "while": "test_control_flow.py", "scan": "test_control_flow.py",
    "closed_call": "test_calls.py", "checkpoint": "test_calls.py", "custom_jvp_call": "test_calls.py",
    "custom_vjp_call": "test_calls.py", "invertible_call": "test_calls.py", "custom_ivjp_call": "test_calls.py",
    "custom_vmap_call": "test_custom_vmap.py", "custom_lin": "test_calls.py", "invertible_lin": "test_invertible.py",
    "psum": "test_collectives.py", "pmax": "test_collectives.py", "pmin": "test_collectives.py",
    "pmean": "test_collectives.py", "all_gather": "test_collectives.py", "axis_index": "test_collectives.py",
    "reduce_window": "test_reduce_window.py",
    # Need a mesh of real devices: checked on 8 CPU devices (grad of shard_map, the dot-product test of
    # each collective's transpose) in tests/multidevice_program_checks.py.
    **{name: "tests/multidevice_program_checks.py" for name in ("shard_map", "ppermute", "psum_scatter", "all_to_all")},
    # pvary's transpose (a psum over the devices) is checked on 8 CPU devices.
    "pvary": "tests/shard_map_vma_checks.py",
    "callback": "test_callbacks.py",
    **{name: "test_factorizations.py" for name in ("cholesky", "triangular_solve", "lu", "qr", "eigh", "svd", "eig")},
}  # fmt: skip


def test_every_primitive_has_a_numerical_case() -> None:
    missing = sorted(p.name for p in all_primitives() if p.name not in CASES and p.name not in ELSEWHERE)
    assert missing == [], f"no numerical derivative check for: {', '.join(missing)}"


ALL = [c for cases in CASES.values() for c in cases]


@pytest.mark.parametrize("label,f,args,tol", ALL, ids=[c[0] for c in ALL])
def test_rule(label: str, f: Callable[..., Any], args: tuple[Any, ...], tol: dict[str, float]) -> None:
    check_all(f, args, seed=label, **tol)


def test_float32_gradients_keep_their_dtype() -> None:
    from plait_autodiff import grad

    x = np.array([0.5, 1.0, 2.0], np.float32)
    g = grad(lambda v: red.reduce_sum_p.bind(ew.mul_p.bind(ew.exp_p.bind(v), v), axes=(0,)))(x)
    assert g.dtype == dtypes.float32
    np.testing.assert_allclose(g, np.exp(x) * (1 + x), rtol=1e-6)
