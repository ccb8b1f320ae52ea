"""One or more example programs per primitive of core's catalog, for the
vmap-against-a-loop tests.  Each case binds primitives directly (so the
rule, not a wrapper, is what is tested) on per-element argument generators.

Control flow, calls and collectives have their own test files; the names in
:data:`TESTED_ELSEWHERE` say where.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np
from batching_checks import Gen, arr, perm

from plait_core import ShapeDtypeStruct, host_callbacks, lax, primitive_by_name
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from plait_core.primitives.linalg import ConvDimensionNumbers
from plait_core.sharding import Mesh, NamedSharding, PartitionSpec

f32, i32, u8, bf16 = np.float32, np.int32, np.uint8, np.dtype("bfloat16")


class Case(NamedTuple):
    name: str
    fun: Callable[..., Any]
    gens: Sequence[Gen]
    prims: tuple[str, ...]


def bind(name: str, *args: Any, **params: Any) -> Any:
    return primitive_by_name(name).bind(*args, **params)


CASES: list[Case] = []


def case(name: str, fun: Callable[..., Any], gens: Sequence[Gen], *prims: str) -> None:
    CASES.append(Case(name, fun, gens, prims or (name.split("-")[0],)))


# ---------------------------------------------------------------------------
# elementwise

UNARY_FLOAT = [
    "neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic",
    "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "sqrt", "rsqrt",
    "cbrt", "abs", "erf", "erf_inv", "lgamma", "digamma",
]  # fmt: skip
for _n in UNARY_FLOAT:
    for _shape in [(), (2, 3)]:
        case(f"{_n}-{_shape}", lambda x, _n=_n: bind(_n, x), [arr(_shape)])
case("neg-bf16", lambda x: bind("neg", x), [arr((3,), bf16)])
case("abs-i32", lambda x: bind("abs", x), [arr((3,), i32)])
case("sign-i32", lambda x: bind("sign", x), [arr((4,), i32)])
case("round", lambda x: bind("round", x, rounding_method=1), [arr((4,))])
case("not-bool", lambda x: bind("not", x), [arr((3,), bool)])
case("not-i32", lambda x: bind("not", x), [arr((2, 2), i32)])
case("integer_pow", lambda x: bind("integer_pow", x, y=3), [arr((3,))])
case("integer_pow-i32", lambda x: bind("integer_pow", x, y=2), [arr((2, 2), i32)])
case("convert_element_type", lambda x: bind("convert_element_type", x, new_dtype=np.dtype(i32), weak_type=False),
     [arr((3,))])  # fmt: skip
case("convert_element_type-weak", lambda x: bind("convert_element_type", x, new_dtype=np.dtype(f32), weak_type=True),
     [arr((2, 2), i32)])  # fmt: skip
case("bitcast_convert_type", lambda x: bind("bitcast_convert_type", x, new_dtype=np.dtype(i32)), [arr((3,))])
case("bitcast_convert_type-narrow", lambda x: bind("bitcast_convert_type", x, new_dtype=np.dtype(u8)), [arr((2,))])
case("bitcast_convert_type-wide", lambda x: bind("bitcast_convert_type", x, new_dtype=np.dtype(f32)),
     [arr((3, 4), u8, 0, 255)])  # fmt: skip

BINARY_FLOAT = ["add", "sub", "mul", "div", "pow", "max", "min", "atan2", "nextafter", "eq", "ne", "lt", "le",
                "gt", "ge", "rem"]  # fmt: skip
for _n in BINARY_FLOAT:
    for _sx, _sy in [((3,), (3,)), ((), (2, 3)), ((2, 3), ())]:
        case(f"{_n}-{_sx}-{_sy}", lambda x, y, _n=_n: bind(_n, x, y), [arr(_sx, lo=0.5), arr(_sy, lo=0.5)])
for _n in ["and", "or", "xor"]:
    case(f"{_n}-bool", lambda x, y, _n=_n: bind(_n, x, y), [arr((3,), bool), arr((3,), bool)])
    case(f"{_n}-i32", lambda x, y, _n=_n: bind(_n, x, y), [arr((2, 2), i32, -9, 9), arr((), i32, -9, 9)])
for _n in ["shift_left", "shift_right_arithmetic", "shift_right_logical"]:
    case(_n, lambda x, y, _n=_n: bind(_n, x, y), [arr((4,), i32, -50, 50), arr((4,), i32, 0, 40)])
case("div-i32", lambda x, y: bind("div", x, y), [arr((3,), i32, -9, 9), arr((3,), i32, 1, 4)])
case("rem-i32", lambda x, y: bind("rem", x, y), [arr((3,), i32, -9, 9), arr((), i32, 1, 4)])
case("add-i32", lambda x, y: bind("add", x, y), [arr((2, 3), i32), arr((2, 3), i32)])
case("select_n-bool", lambda p, a, b: bind("select_n", p, a, b), [arr((3,), bool), arr((3,)), arr((3,))])
case("select_n-scalar", lambda p, a, b: bind("select_n", p, a, b), [arr((), bool), arr((2, 3)), arr((2, 3))])
case("select_n-scalars", lambda p, a, b: bind("select_n", p, a, b), [arr((), bool), arr(()), arr(())])
case("select_n-i32", lambda p, a, b, c: bind("select_n", p, a, b, c),
     [arr((4,), i32, 0, 3), arr((4,)), arr((4,)), arr((4,))])  # fmt: skip
case("clamp", lambda lo, x, hi: bind("clamp", lo, x, hi), [arr((), hi=0), arr((3,)), arr((), lo=0)])
case("clamp-full", lambda lo, x, hi: bind("clamp", lo, x, hi), [arr((2, 2), hi=0), arr((2, 2)), arr((2, 2), lo=0)])

# ---------------------------------------------------------------------------
# structural

case("broadcast_in_dim", lambda x: bind("broadcast_in_dim", x, shape=(2, 3), broadcast_dimensions=(1,)), [arr((3,))])
case("broadcast_in_dim-ones", lambda x: bind("broadcast_in_dim", x, shape=(3, 4, 2), broadcast_dimensions=(0, 1)),
     [arr((3, 1))])  # fmt: skip
case("broadcast_in_dim-scalar", lambda x: bind("broadcast_in_dim", x, shape=(2, 2), broadcast_dimensions=()), [arr(())])
case("reshape", lambda x: bind("reshape", x, new_sizes=(3, 2), dimensions=None), [arr((2, 3))])
case("reshape-dims", lambda x: bind("reshape", x, new_sizes=(6,), dimensions=(1, 0)), [arr((2, 3))])
case("squeeze", lambda x: bind("squeeze", x, dimensions=(0, 2)), [arr((1, 3, 1))])
case("expand_dims", lambda x: bind("expand_dims", x, dimensions=(0, 2)), [arr((2, 3))])
case("transpose", lambda x: bind("transpose", x, permutation=(2, 0, 1)), [arr((2, 3, 4))])
case("rev", lambda x: bind("rev", x, dimensions=(1,)), [arr((2, 3))])
case("pad", lambda x, v: bind("pad", x, v, padding_config=((1, 2, 1),)), [arr((3,)), arr(())])
case("pad-crop", lambda x, v: bind("pad", x, v, padding_config=((0, 0, 0), (-1, 2, 0))), [arr((2, 3)), arr(())])
case("concatenate", lambda x, y: bind("concatenate", x, y, dimension=0), [arr((2, 3)), arr((1, 3))])
case("concatenate-1", lambda x, y, z: bind("concatenate", x, y, z, dimension=1),
     [arr((2, 1)), arr((2, 3)), arr((2, 2))])  # fmt: skip
case("slice", lambda x: bind("slice", x, start_indices=(1, 0), limit_indices=(4, 4), strides=(2, 1)), [arr((5, 4))])
case("slice-nostride", lambda x: bind("slice", x, start_indices=(1,), limit_indices=(3,), strides=None), [arr((4,))])
case("dynamic_slice", lambda x, i, j: bind("dynamic_slice", x, i, j, slice_sizes=(2, 3)),
     [arr((5, 4)), arr((), i32, -1, 6), arr((), i32, -1, 3)])  # fmt: skip
case("dynamic_update_slice", lambda x, u, i, j: bind("dynamic_update_slice", x, u, i, j),
     [arr((5, 4)), arr((2, 3)), arr((), i32, -1, 6), arr((), i32, -1, 3)])  # fmt: skip

_TAKE = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
for _mode in (GatherScatterMode.FILL_OR_DROP, GatherScatterMode.CLIP):
    case(f"gather-{_mode.name}",
         lambda x, i, _m=_mode: bind("gather", x, i, dimension_numbers=_TAKE, slice_sizes=(1, 3),
                                     indices_are_sorted=False, unique_indices=False, mode=_m, fill_value=None),
         [arr((5, 3)), arr((4, 1), i32, -1, 6)])  # fmt: skip
_BATCHED_TAKE = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                                       operand_batching_dims=(0,), start_indices_batching_dims=(0,))  # fmt: skip
case("gather-batching_dims",
     lambda x, i: bind("gather", x, i, dimension_numbers=_BATCHED_TAKE, slice_sizes=(1, 1), indices_are_sorted=False,
                       unique_indices=False, mode=GatherScatterMode.CLIP, fill_value=None),
     [arr((2, 5)), arr((2, 1), i32, 0, 5)])  # fmt: skip
_WINDOW = GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
case("gather-window",
     lambda x, i: bind("gather", x, i, dimension_numbers=_WINDOW, slice_sizes=(2, 2), indices_are_sorted=False,
                       unique_indices=False, mode=GatherScatterMode.FILL_OR_DROP, fill_value=-1.0),
     [arr((4, 5)), arr((3, 2), i32, -1, 5)])  # fmt: skip

# bijective_gather: rows 5 -> 4 (and back), and a (2, 3, d) padded value to 4 packed rows (and back).
for _masked in (True, False):
    case(f"bijective_gather-rows-{_masked}",
         lambda x, i, v, j, w, _m=_masked: bind(
             "bijective_gather", x, i, v, j, w, dimension_numbers=_TAKE, slice_sizes=(1, 3),
             inverse_dimension_numbers=_TAKE, inverse_slice_sizes=(1, 3), indices_are_sorted=False, masked=_m),
         [arr((5, 3)), arr((4, 1), i32, 0, 5), arr((4,), bool), arr((5, 1), i32, 0, 4), arr((5,), bool)])  # fmt: skip
_PACK = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0, 1), start_index_map=(0, 1))
_UNPACK = GatherDimensionNumbers(offset_dims=(2,), collapsed_slice_dims=(0,), start_index_map=(0,))
case("bijective_gather-pack",
     lambda x, i, v, j, w: bind(
         "bijective_gather", x, i, v, j, w, dimension_numbers=_PACK, slice_sizes=(1, 1, 2),
         inverse_dimension_numbers=_UNPACK, inverse_slice_sizes=(1, 2), indices_are_sorted=True, masked=True),
     [arr((2, 3, 2)), arr((4, 2), i32, 0, 3), arr((4,), bool), arr((2, 3, 1), i32, 0, 4), arr((2, 3), bool)])  # fmt: skip

_SCATTER = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
for _n in ["scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max"]:
    case(_n,
         lambda x, i, u, _n=_n: bind(_n, x, i, u, dimension_numbers=_SCATTER, indices_are_sorted=False,
                                     unique_indices=_n == "scatter", mode=GatherScatterMode.FILL_OR_DROP),
         [arr((5, 3)), perm(5, 4), arr((4, 3))])  # fmt: skip
case("scatter_add-dupes",
     lambda x, i, u: bind("scatter_add", x, i, u, dimension_numbers=_SCATTER, indices_are_sorted=False,
                          unique_indices=False, mode=GatherScatterMode.CLIP),
     [arr((5, 3)), arr((4, 1), i32, -2, 7), arr((4, 3))])  # fmt: skip
case("iota", lambda x: bind("add", x, bind("iota", dtype=np.dtype(i32), shape=(4,), dimension=0)), [arr((4,), i32)],
     "iota", "add")  # fmt: skip
case("copy", lambda x: bind("copy", x), [arr((2, 3))])

# ---------------------------------------------------------------------------
# reductions

for _n in ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"]:
    case(f"{_n}-1", lambda x, _n=_n: bind(_n, x, axes=(1,)), [arr((2, 3))])
    case(f"{_n}-all", lambda x, _n=_n: bind(_n, x, axes=(0, 2)), [arr((2, 3, 2))])
for _n in ["reduce_and", "reduce_or"]:
    case(f"{_n}-bool", lambda x, _n=_n: bind(_n, x, axes=(0,)), [arr((3, 2), bool)])
    case(f"{_n}-i32", lambda x, _n=_n: bind(_n, x, axes=(1,)), [arr((2, 3), i32, 0, 16)])
for _n in ["argmax", "argmin"]:
    case(_n, lambda x, _n=_n: bind(_n, x, axes=(1,), index_dtype=np.dtype(i32)), [arr((2, 5))])
for _n in ["cumsum", "cumprod", "cummax", "cummin"]:
    for _rev in (False, True):
        case(f"{_n}-{_rev}", lambda x, _n=_n, _r=_rev: bind(_n, x, axis=1, reverse=_r), [arr((2, 4))])
case("sort", lambda x: bind("sort", x, dimension=1, is_stable=True, num_keys=1), [arr((2, 5))])
case("sort-keyval", lambda k, v: bind("sort", k, v, dimension=0, is_stable=True, num_keys=1),
     [arr((6,), i32, 0, 3), arr((6,))])  # fmt: skip
case("sort-2keys", lambda k, j, v: bind("sort", k, j, v, dimension=0, is_stable=True, num_keys=2),
     [arr((6,), i32, 0, 2), arr((6,), i32, 0, 2), arr((6,))])  # fmt: skip

# ---------------------------------------------------------------------------
# AD helpers

case("stop_gradient", lambda x: bind("stop_gradient", x), [arr((3,))])
case("zeros_like", lambda x: bind("zeros_like", x), [arr((2, 2), i32)])
case("add_any", lambda x, y: bind("add_any", x, y), [arr((3,)), arr((3,))])

# ---------------------------------------------------------------------------
# linalg

_DOT = {"precision": None, "preferred_element_type": None}
case("dot_general-matmul", lambda a, b: bind("dot_general", a, b, dimension_numbers=(((1,), (0,)), ((), ())), **_DOT),
     [arr((2, 3)), arr((3, 4))], "dot_general")  # fmt: skip
case("dot_general-batch",
     lambda a, b: bind("dot_general", a, b, dimension_numbers=(((2,), (1,)), ((0,), (0,))), **_DOT),
     [arr((2, 3, 4)), arr((2, 4, 5))], "dot_general")  # fmt: skip
case("dot_general-vec", lambda a, b: bind("dot_general", a, b, dimension_numbers=(((0,), (0,)), ((), ())), **_DOT),
     [arr((3,)), arr((3,))], "dot_general")  # fmt: skip
case("dot_general-outer", lambda a, b: bind("dot_general", a, b, dimension_numbers=(((), ()), ((), ())), **_DOT),
     [arr((2,)), arr((3,))], "dot_general")  # fmt: skip
case("dot_general-i32", lambda a, b: bind("dot_general", a, b, dimension_numbers=(((1,), (1,)), ((), ())), **_DOT),
     [arr((2, 3), i32), arr((4, 3), i32)], "dot_general")  # fmt: skip


def _conv(
    spec: tuple[tuple[int, ...], ...], strides: tuple[int, ...], padding: tuple[tuple[int, int], ...],
    ldil: tuple[int, ...], rdil: tuple[int, ...], fgc: int = 1, bgc: int = 1,
) -> Callable[..., Any]:  # fmt: skip
    dn = ConvDimensionNumbers(*spec)

    def conv(lhs: Any, rhs: Any) -> Any:
        return bind(
            "conv_general_dilated", lhs, rhs, window_strides=strides, padding=padding, lhs_dilation=ldil,
            rhs_dilation=rdil, dimension_numbers=dn, feature_group_count=fgc, batch_group_count=bgc, **_DOT,
        )  # fmt: skip

    return conv


_NCH = ((0, 1, 2), (0, 1, 2), (0, 1, 2))
_NCHW = ((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3))
_NHWC = ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
case("conv-1d", _conv(_NCH, (1,), ((0, 0),), (1,), (1,)), [arr((1, 2, 5)), arr((3, 2, 2))], "conv_general_dilated")
case("conv-2d", _conv(_NCHW, (2, 1), ((1, 1), (0, 1)), (1, 1), (1, 2)), [arr((2, 3, 5, 5)), arr((4, 3, 3, 2))],
     "conv_general_dilated")  # fmt: skip
case("conv-nhwc", _conv(_NHWC, (1, 1), ((1, 0), (0, 0)), (2, 1), (1, 1)), [arr((1, 4, 4, 2)), arr((2, 2, 2, 3))],
     "conv_general_dilated")  # fmt: skip
case("conv-fgc", _conv(_NCH, (1,), ((1, 1),), (1,), (1,), fgc=2), [arr((2, 4, 6)), arr((6, 2, 3))],
     "conv_general_dilated")  # fmt: skip
case("conv-bgc", _conv(_NCH, (1,), ((0, 0),), (1,), (1,), bgc=2), [arr((4, 2, 6)), arr((4, 2, 3))],
     "conv_general_dilated")  # fmt: skip

# Any objects stand for devices: the constraint only lays values out (the batch axis unsharded).
_MESH = Mesh(np.array([object(), object()]), ("d",))
case("sharding_constraint",
     lambda x: bind("mul", bind("sharding_constraint", x, sharding=NamedSharding(_MESH, PartitionSpec("d", None))), x),
     [arr((2, 3))])
case("optimization_barrier", lambda x, y: lax.optimization_barrier((x, y)), [arr((3,)), arr((2, 2), i32)])

# ---------------------------------------------------------------------------
# host callbacks

_SD = ShapeDtypeStruct((3,), np.dtype(f32))
for _m in ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all"):
    case(f"callback-pure-{_m}", lambda x, y, _m=_m: host_callbacks.pure_callback(
        lambda a, b: (a * 2 + b).astype(a.dtype), ShapeDtypeStruct(np.shape(x), np.dtype(f32)), x, y, vmap_method=_m),
         [arr((3,)), arr((3,))], "callback")  # fmt: skip
case("callback-io", lambda x: host_callbacks.io_callback(lambda a: np.cumsum(a).astype(a.dtype), _SD, x), [arr((3,))],
     "callback")  # fmt: skip

# ---------------------------------------------------------------------------
# windows

_WIN = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (1, 1)), base_dilation=(1, 2),
            window_dilation=(2, 1))  # fmt: skip
_SCATTER_WIN = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((1, 0), (1, 1)))
for _n in ("reduce_window_sum", "reduce_window_max", "reduce_window_min"):
    case(_n, lambda x, _n=_n: bind(_n, x, **_WIN), [arr((4, 5))])
case("reduce_window", lambda x: lax.reduce_window(x, np.float32(1), lax.mul, (2, 2), (1, 2), "SAME"), [arr((3, 4))])
case("select_and_gather_add", lambda t, x: bind("select_and_gather_add", t, x, select="ge", **_WIN),
     [arr((4, 5)), arr((4, 5))])  # fmt: skip
case("select_and_scatter_add", lambda s, x: bind("select_and_scatter_add", s, x, select="le", **_SCATTER_WIN),
     [arr((4, 3)), arr((4, 5))])  # fmt: skip

# ---------------------------------------------------------------------------
# complex numbers and fft


def _cplx(x: Any, y: Any) -> Any:
    return bind("complex", x, y)


case("complex", _cplx, [arr((2, 3)), arr((2, 3))])
case("complex-rank0", _cplx, [arr((3,)), arr(())], "complex")
for _n in ["real", "imag", "conj"]:
    case(_n, lambda x, y, _n=_n: bind(_n, _cplx(x, y)), [arr((2, 3)), arr((2, 3))], _n, "complex")
for _k, _lengths in [(0, (4,)), (1, (3, 4))]:
    case(f"fft-fft{_k}", lambda x, y, _l=_lengths: bind("fft", _cplx(x, y), fft_type=0, fft_lengths=_l),
         [arr((3, 4)), arr((3, 4))], "fft")  # fmt: skip
    case(f"fft-ifft{_k}", lambda x, y, _l=_lengths: bind("fft", _cplx(x, y), fft_type=1, fft_lengths=_l),
         [arr((3, 4)), arr((3, 4))], "fft")  # fmt: skip
    case(f"fft-rfft{_k}", lambda x, _l=_lengths: bind("fft", x, fft_type=2, fft_lengths=_l), [arr((3, 4))], "fft")
    case(f"fft-irfft{_k}", lambda x, y, _l=_lengths: bind("fft", _cplx(x, y), fft_type=3, fft_lengths=_l),
         [arr((3, 3)), arr((3, 3))], "fft")  # fmt: skip

# ---------------------------------------------------------------------------
# shapes

case("dim_as_value", lambda x: bind("add", x, bind("dim_as_value", dim=5)), [arr((3,), i32)], "dim_as_value", "add")

#: Primitives whose batching is tested in another file (not by :data:`CASES`).
TESTED_ELSEWHERE = {
    **dict.fromkeys(["custom_lin", "invertible_lin"], "test_ad_linear.py"),
    **dict.fromkeys(["cond", "while", "scan"], "test_control_flow.py"),
    **dict.fromkeys(["cholesky", "triangular_solve", "lu", "qr", "eigh", "svd", "eig"], "test_factorizations.py"),
    **dict.fromkeys(["psum", "pmax", "pmin", "pmean", "all_gather", "axis_index", "ppermute", "psum_scatter",
                     "all_to_all", "pvary"], "test_collectives.py"),
    # shard_map runs on a mesh of real devices: vmap of it is checked on 8 CPU devices.
    "shard_map": "tests/multidevice_program_checks.py (test_vmap_of_shard_map)",
    **dict.fromkeys(
        ["closed_call", "custom_jvp_call", "custom_vjp_call", "checkpoint", "invertible_call", "custom_ivjp_call",
         "custom_vmap_call"], "test_calls.py"),
}
