"""Every masking rule against NumPy on the logical slices, at several logical
sizes per padded shape, eagerly and staged (one staged program for all sizes).

The cases below are walked by :func:`test_every_rule_has_a_case`, which
stages each case's function on symbolic inputs and checks that every
primitive of core's catalog that has a masking rule occurs in some case.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from masking_testing import Case, check_case, integers, primitives_of, spread, uniform

import plait_core.numpy as pnp
from plait_core import ShapeDtypeStruct, all_primitives, host_callbacks, lax
from plait_core import dtypes as pdt
from plait_core.lax import dimension_as_value
from plait_core.primitives import ad_helpers as adh
from plait_core.primitives import complex_numbers as cx
from plait_core.primitives import elementwise as ew
from plait_core.primitives import structural as st
from plait_core.primitives.fft import fft_p
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from plait_core.primitives.linalg import ConvDimensionNumbers
from plait_core.sharding import Mesh, NamedSharding, PartitionSpec
from plait_masking import masking_rules

F32, I32, BOOL = np.float32, np.int32, np.bool_
ENVS_2D = [{"n": 6, "m": 5}, {"n": 3, "m": 2}, {"n": 1, "m": 4}]
ENVS_1D = [{"n": 8}, {"n": 5}, {"n": 1}]


# ---------------------------------------------------------------------------
# Elementwise: one case per primitive, bound directly.

UNIT = uniform(0.1, 0.9)
UNARY: dict[str, tuple[Any, dict[str, Any], Any]] = {
    "neg": (F32, {}, None), "sign": (F32, {}, None), "floor": (F32, {}, None), "ceil": (F32, {}, None),
    "round": (F32, {"rounding_method": 0}, None), "is_finite": (F32, {}, None), "exp": (F32, {}, None),
    "exp2": (F32, {}, None), "log": (F32, {}, UNIT), "log1p": (F32, {}, UNIT), "expm1": (F32, {}, None),
    "tanh": (F32, {}, None), "logistic": (F32, {}, None), "sin": (F32, {}, None), "cos": (F32, {}, None),
    "tan": (F32, {}, UNIT), "asin": (F32, {}, UNIT), "acos": (F32, {}, UNIT), "atan": (F32, {}, None),
    "sinh": (F32, {}, None), "cosh": (F32, {}, None), "asinh": (F32, {}, None),
    "acosh": (F32, {}, uniform(1.1, 3.0)), "atanh": (F32, {}, UNIT), "sqrt": (F32, {}, UNIT),
    "rsqrt": (F32, {}, UNIT), "cbrt": (F32, {}, None), "abs": (F32, {}, None),
    "integer_pow": (F32, {"y": 3}, None), "erf": (F32, {}, None), "erf_inv": (F32, {}, UNIT),
    "lgamma": (F32, {}, UNIT), "digamma": (F32, {}, UNIT), "not": (I32, {}, None),
    "convert_element_type": (F32, {"new_dtype": np.dtype(np.int32), "weak_type": False}, None),
    "bitcast_convert_type": (F32, {"new_dtype": np.dtype(np.int32)}, None),
}
BINARY: dict[str, tuple[Any, Any]] = {
    "add": (F32, None), "sub": (F32, None), "mul": (F32, None), "div": (F32, uniform(0.5, 2.0)),
    "rem": (F32, uniform(0.5, 2.0)), "pow": (F32, UNIT), "max": (F32, None), "min": (F32, None),
    "atan2": (F32, None), "nextafter": (F32, None), "and": (I32, None), "or": (I32, None), "xor": (I32, None),
    "eq": (I32, None), "ne": (I32, None), "lt": (F32, None), "le": (F32, None), "gt": (F32, None),
    "ge": (F32, None), "shift_left": (I32, integers(0, 8)), "shift_right_arithmetic": (I32, integers(0, 8)),
    "shift_right_logical": (I32, integers(0, 8)),
}
PRIMS = {p.name: p for p in all_primitives()}


def _unary_case(name: str) -> Case:
    dtype, params, maker = UNARY[name]
    prim = PRIMS[name]
    return Case(f"elementwise {name}", lambda x: prim.bind(x, **params), ["(n, m)"], "(n, m)",
                [((6, 5), dtype)], ENVS_2D, {0: maker} if maker else {})


def _binary_case(name: str) -> Case:
    dtype, maker = BINARY[name]
    prim = PRIMS[name]
    makers = {0: maker, 1: maker} if maker else {}
    if name == "pow":
        makers = {0: UNIT}
    if name.startswith("shift"):
        makers = {1: maker}
    return Case(f"elementwise {name}", lambda x, y: prim.bind(x, y), ["(n, m)", "(n, m)"], "(n, m)",
                [((6, 5), dtype), ((6, 5), dtype)], ENVS_2D, makers)


ELEMENTWISE = [_unary_case(n) for n in UNARY] + [_binary_case(n) for n in BINARY] + [
    Case("elementwise select_n", lambda p, x, y: ew.select_n_p.bind(p, x, y), ["(n, m)"] * 3, "(n, m)",
         [((6, 5), BOOL), ((6, 5), F32), ((6, 5), F32)], ENVS_2D),
    Case("elementwise clamp with scalar bounds", lambda x: ew.clamp_p.bind(np.float32(-0.5), x, np.float32(0.5)),
         ["(n, m)"], "(n, m)", [((6, 5), F32)], ENVS_2D),
    Case("elementwise with a scalar operand", lambda x, s: x * s + 1.0, ["(n, m)", ""], "(n, m)",
         [((6, 5), F32), ((), F32)], ENVS_2D),
]


# ---------------------------------------------------------------------------
# Reductions, argmax/argmin, cumulative reductions, sort


def _reduce(prim: str, axes: tuple[int, ...]) -> Any:
    return lambda x: PRIMS[prim].bind(x, axes=axes)


REDUCTIONS = [
    Case(f"{prim} over {axes} of {np.dtype(dt).name}", _reduce(prim, axes), ["(n, m)"], out, [((6, 5), dt)], ENVS_2D)
    for prim, dt in [("reduce_sum", F32), ("reduce_sum", I32), ("reduce_prod", F32), ("reduce_max", F32),
                     ("reduce_max", I32), ("reduce_min", F32), ("reduce_min", BOOL), ("reduce_and", I32),
                     ("reduce_and", BOOL), ("reduce_or", I32)]
    for axes, out in [((0,), "m"), ((1,), "n"), ((0, 1), "")]
] + [
    Case(f"{prim} along {axis}", lambda x, prim=prim, axis=axis: PRIMS[prim].bind(
        x, axes=(axis,), index_dtype=np.dtype(np.int32)), ["(n, m)"], out, [((6, 5), dt)], ENVS_2D)
    for prim in ("argmax", "argmin") for axis, out in ((0, "m"), (1, "n")) for dt in (F32, I32, BOOL)
] + [
    Case(f"{prim} along {axis} reverse={rev}", lambda x, prim=prim, axis=axis, rev=rev: PRIMS[prim].bind(
        x, axis=axis, reverse=rev), ["(n, m)"], "(n, m)", [((6, 5), dt)], ENVS_2D, {0: uniform(0.5, 1.5)}
         if prim == "cumprod" else {})
    for prim, dt in (("cumsum", F32), ("cumsum", I32), ("cumprod", F32), ("cummax", F32), ("cummin", I32))
    for axis in (0, 1) for rev in (False, True)
] + [
    Case(f"sort along {d}", lambda x, d=d: lax.sort(x, dimension=d), ["(n, m)"], "(n, m)", [((6, 5), F32)],
         ENVS_2D)
    for d in (0, 1)
] + [
    Case("sort two operands by one key", lambda k, v: tuple(lax.sort((k, v), dimension=0, num_keys=1)),
         ["n", "n"], ("n", "n"), [((8,), I32), ((8,), F32)], ENVS_1D, {0: integers(0, 3)}),
    Case("sort keys holding inf and nan", lambda x: lax.sort(x, dimension=0), ["n"], "n", [((8,), F32)], ENVS_1D,
         {0: lambda rng, s: rng.choice(np.array([np.inf, -np.inf, np.nan, 1.0], np.float32), s)}),
]


# ---------------------------------------------------------------------------
# Linear algebra


def _conv(**kw: Any) -> Any:
    params = dict(window_strides=(1,), padding=((1, 1),), lhs_dilation=(1,), rhs_dilation=(1,),
                  dimension_numbers=ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)), feature_group_count=1,
                  batch_group_count=1, precision=None, preferred_element_type=None)
    params.update(kw)
    return lambda x, w: PRIMS["conv_general_dilated"].bind(x, w, **params)


LINALG = [
    Case("matmul contracting a symbolic size", lambda a, b: a @ b, ["(n, k)", "(k, m)"], "(n, m)",
         [((6, 7), F32), ((7, 5), F32)], [{"n": 6, "k": 7, "m": 5}, {"n": 2, "k": 3, "m": 4}, {"n": 1, "k": 1, "m": 1}]),
    Case("dot_general with a symbolic batch", lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
         ["(b, n, k)", "(b, k, 3)"], "(b, n, 3)", [((4, 5, 6), F32), ((4, 6, 3), F32)],
         [{"b": 4, "n": 5, "k": 6}, {"b": 2, "n": 3, "k": 2}]),
    Case("dot_general of booleans", lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
         ["(n, k)", "(k, m)"], "(n, m)", [((4, 6), BOOL), ((6, 3), BOOL)], [{"n": 4, "k": 6, "m": 3}, {"n": 2, "k": 3, "m": 1}]),
    Case("conv over a symbolic length", _conv(), ["(b, c, n)", "(o, c, 3)"], "(b, o, n)",
         [((3, 4, 9), F32), ((2, 4, 3), F32)], [{"b": 3, "c": 4, "n": 9, "o": 2}, {"b": 1, "c": 2, "n": 4, "o": 1}]),
    Case("conv with dilations and negative padding", _conv(padding=((-1, 2),), lhs_dilation=(2,), rhs_dilation=(2,)),
         ["(2, 3, n)", "(4, 3, 2)"], "(2, 4, 2*n - 2)", [((2, 3, 7), F32), ((4, 3, 2), F32)],
         [{"n": 7}, {"n": 3}, {"n": 1}]),
    Case("conv with feature groups", _conv(feature_group_count=2), ["(b, 4, n)", "(6, 2, 3)"], "(b, 6, n)",
         [((3, 4, 8), F32), ((6, 2, 3), F32)], [{"b": 3, "n": 8}, {"b": 2, "n": 2}]),
]


# ---------------------------------------------------------------------------
# Structural


def _pad(config: tuple[tuple[int, int, int], ...]) -> Any:
    return lambda x: lax.pad(x, np.float32(-7.0), config)


STRUCTURAL = [
    Case("broadcast_in_dim to a symbolic shape", lambda x: lax.broadcast_in_dim(x, (x.shape[0], 3, x.shape[1]), (0, 2)),
         ["(n, m)"], "(n, 3, m)", [((6, 5), F32)], ENVS_2D),
    Case("broadcast a scalar to (n,)", lambda x: lax.broadcast_in_dim(np.float32(2.0), (x.shape[0],), ()) + x,
         ["n"], "n", [((8,), F32)], ENVS_1D),
    Case("reshape (n, 3) -> (3*n,)", lambda x: lax.reshape(x, (3 * x.shape[0],)), ["(n, 3)"], "3*n",
         [((5, 3), F32)], [{"n": 5}, {"n": 2}, {"n": 1}]),
    Case("reshape (2*n,) -> (n, 2)", lambda x: lax.reshape(x, (x.shape[0] // 2, 2)), ["2*n"], "(n, 2)",
         [((10,), F32)], [{"n": 5}, {"n": 2}]),
    Case("reshape (3, n) -> (3*n,) by gathering", lambda x: lax.reshape(x, (3 * x.shape[1],)), ["(3, n)"], "3*n",
         [((3, 5), F32)], [{"n": 5}, {"n": 2}, {"n": 1}]),
    Case("reshape (n, m) -> (m, n)", lambda x: lax.reshape(x, (x.shape[1], x.shape[0])), ["(n, m)"], "(m, n)",
         [((6, 5), I32)], ENVS_2D),
    Case("reshape with dimensions", lambda x: lax.reshape(x, (x.shape[1] * x.shape[0],), (1, 0)), ["(n, m)"],
         "m*n", [((6, 5), F32)], ENVS_2D),
    Case("squeeze and expand_dims", lambda x: lax.squeeze(lax.expand_dims(x, (0, 2)), (0,)), ["(n, m)"],
         "(n, 1, m)", [((6, 5), F32)], ENVS_2D),
    Case("transpose", lambda x: lax.transpose(x, (1, 0)), ["(n, m)"], "(m, n)", [((6, 5), F32)], ENVS_2D),
    *[Case(f"rev {dims}", lambda x, dims=dims: lax.rev(x, dims), ["(n, m)"], "(n, m)", [((6, 5), F32)], ENVS_2D)
      for dims in ((0,), (1,), (0, 1))],
    Case("rev of a constant axis", lambda x: lax.rev(x, (1,)), ["(n, 4)"], "(n, 4)", [((6, 4), F32)], ENVS_1D[1:]),
    Case("pad low, high and interior", _pad(((1, 2, 1), (0, 3, 0))), ["(n, m)"], "(2*n + 2, m + 3)",
         [((6, 5), F32)], ENVS_2D),
    Case("pad negative", _pad(((-1, 1, 0), (2, -2, 1))), ["(n, m)"], "(n, 2*m - 1)", [((6, 5), F32)],
         [{"n": 6, "m": 5}, {"n": 3, "m": 2}, {"n": 1, "m": 2}]),
    Case("pad with a traced value", lambda x, v: lax.pad(x, v, ((0, 2, 0),)), ["n", ""], "n + 2",
         [((8,), F32), ((), F32)], ENVS_1D),
    Case("concatenate after a symbolic operand", lambda x, y: lax.concatenate([x, y, x], 0), ["n", "m"],
         "2*n + m", [((6,), F32), ((5,), F32)], ENVS_2D),
    Case("concatenate with a constant first", lambda x, y: lax.concatenate([y, x, y], 1), ["(2, n)", "(2, 3)"],
         "(2, n + 6)", [((2, 6), F32), ((2, 3), F32)], ENVS_1D[1:]),
    Case("slice from a constant start", lambda x: lax.slice(x, (1, 0), (x.shape[0], x.shape[1])), ["(n + 1, m)"],
         "(n, m)", [((7, 5), F32)], ENVS_2D),
    Case("slice from a symbolic start", lambda x: lax.slice(x, (x.shape[0] - 2,), (x.shape[0],)), ["n + 2"], "2",
         [((9,), F32)], [{"n": 7}, {"n": 4}, {"n": 1}]),
    Case("slice with a stride from a symbolic start",
         lambda x: lax.slice(x, (x.shape[0] - 6,), (x.shape[0],), (2,)), ["n + 6"], "3", [((10,), F32)],
         [{"n": 4}, {"n": 2}, {"n": 1}]),
    Case("iota of a symbolic size", lambda x: lax.iota(np.int32, x.shape[0]) * 2, ["n"], "n", [((8,), F32)], ENVS_1D),
    Case("copy", lambda x: st.copy_p.bind(x), ["(n, m)"], "(n, m)", [((6, 5), F32)], ENVS_2D),
    Case("dim_as_value", lambda x: x / lax.convert_element_type(dimension_as_value(2 * x.shape[0] + 1), np.float32),
         ["n"], "n", [((8,), F32)], ENVS_1D),
]


# ---------------------------------------------------------------------------
# Dynamic slicing, gather, scatter

ROWS = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
WINDOWS = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
SCATTER_ROWS = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
SCATTER_WINDOWS = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
                                          scatter_dims_to_operand_dims=(0,))
SCATTER_POINTS = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))


def _gather(dn: GatherDimensionNumbers, sizes: Any, mode: GatherScatterMode, fill: Any = None) -> Any:
    def f(x: Any, idx: Any) -> Any:
        return st.gather_p.bind(x, idx, dimension_numbers=dn, slice_sizes=sizes(x), indices_are_sorted=False,
                                unique_indices=False, mode=mode, fill_value=fill)

    return f


def _scatter(prim: str, dn: ScatterDimensionNumbers, mode: GatherScatterMode) -> Any:
    def f(x: Any, idx: Any, u: Any) -> Any:
        return PRIMS[prim].bind(x, idx, u, dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                                mode=mode)

    return f


def _bijective(masked: bool, window: Any) -> Any:
    def f(x: Any, i: Any, v: Any, j: Any, w: Any) -> Any:
        return PRIMS["bijective_gather"].bind(x, i, v, j, w, dimension_numbers=ROWS, slice_sizes=(1, window(x)),
                                              inverse_dimension_numbers=ROWS, inverse_slice_sizes=(1, window(x)),
                                              indices_are_sorted=False, masked=masked)  # fmt: skip

    return f



IDX = spread(-2, 9)
ENVS_DYN = [{"n": 6}, {"n": 3}, {"n": 1}, {"n": 4}, {"n": 2}, {"n": 5}]
MODES = (GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP, GatherScatterMode.PROMISE_IN_BOUNDS)
INDEXING = [
    # Padded features travel with whole windows (the primitive is kept); padded rows go through gather's rule.
    *[Case(f"bijective_gather of padded features (masked={m})", _bijective(m, lambda x: x.shape[1]),
           ["(5, m)", "(4, 1)", "4", "(5, 1)", "5"], "(4, m)",
           [((5, 6), F32), ((4, 1), I32), ((4,), BOOL), ((5, 1), I32), ((5,), BOOL)], [{"m": 6}, {"m": 2}],
           {1: integers(0, 5), 3: integers(0, 4)}) for m in (True, False)],
    *[Case(f"bijective_gather of padded rows (masked={m})", _bijective(m, lambda x: 3),
           ["(n, 3)", "(4, 1)", "4", "(n, 1)", "n"], "(4, 3)",
           [((6, 3), F32), ((4, 1), I32), ((4,), BOOL), ((6, 1), I32), ((6,), BOOL)], [{"n": 6}, {"n": 3}],
           {1: IDX, 3: integers(0, 4)}) for m in (True, False)],
    Case("dynamic_slice of a constant size", lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 3),
                                                                           allow_negative_indices=False),
         ["(n + 2, 3)", ""], "(2, 3)", [((8, 3), F32), ((), I32)], ENVS_DYN, {1: IDX}),
    Case("dynamic_slice of a symbolic size", lambda x, i: lax.dynamic_slice(
        x, (i, np.int32(0)), (x.shape[0] - 1, x.shape[1]), allow_negative_indices=False),
         ["(n, m)", ""], "(n - 1, m)", [((6, 5), F32), ((), I32)], ENVS_2D[:2], {1: IDX}),
    Case("dynamic_slice of a constant axis with a symbolic size",
         lambda x, i: lax.dynamic_slice(x, (i,), (x.shape[0] - 4,), allow_negative_indices=False)
         , ["n + 4", ""], "n", [((10,), F32), ((), I32)], ENVS_DYN, {1: IDX}),
    Case("dynamic_update_slice of a constant update", lambda x, u, i: lax.dynamic_update_slice(
        x, u, (i,), allow_negative_indices=False), ["n + 2", "2", ""], "n + 2", [((8,), F32), ((2,), F32), ((), I32)],
         ENVS_DYN, {2: IDX}),
    Case("dynamic_update_slice of a symbolic update", lambda x, u, i: lax.dynamic_update_slice(
        x, u, (i, np.int32(0)), allow_negative_indices=False), ["(n + 3, 2)", "(n, 2)", ""], "(n + 3, 2)",
         [((9, 2), F32), ((6, 2), F32), ((), I32)], ENVS_DYN, {2: IDX}),
    *[Case(f"gather rows ({mode.name})", _gather(ROWS, lambda x: (1, x.shape[1]), mode, -1.0), ["(n, m)", "(k, 1)"],
           "(k, m)", [((6, 5), F32), ((4, 1), I32)], [{"n": 6, "m": 5, "k": 4}, {"n": 3, "m": 2, "k": 2}],
           {1: IDX}) for mode in MODES],
    *[Case(f"gather windows of a symbolic size ({mode.name})", _gather(WINDOWS, lambda x: (x.shape[0] - 1,), mode),
           ["n", "(k, 1)"], "(k, n - 1)", [((7,), F32), ((3, 1), I32)], [{"n": 7, "k": 3}, {"n": 3, "k": 2}],
           {1: integers(-1, 4)}) for mode in MODES],
    *[Case(f"{prim} rows ({mode.name})", _scatter(prim, SCATTER_ROWS, mode), ["(n, m)", "(k, 1)", "(k, m)"],
           "(n, m)", [((6, 5), F32), ((8, 1), I32), ((8, 5), F32)], [{"n": 6, "m": 5, "k": 8}, {"n": 3, "m": 2, "k": 2}],
           {1: IDX}) for prim in ("scatter", "scatter_add", "scatter_mul", "scatter_min", "scatter_max")
      for mode in MODES],
    *[Case(f"{prim} points ({mode.name})", _scatter(prim, SCATTER_POINTS, mode), ["n", "(k, 1)", "k"], "n",
           [((8,), I32), ((5, 1), I32), ((5,), I32)], [{"n": 8, "k": 5}, {"n": 3, "k": 2}, {"n": 1, "k": 1}],
           {1: IDX}) for prim in ("scatter_add", "scatter_max") for mode in MODES],
    *[Case(f"{prim} windows of 2 ({mode.name})", _scatter(prim, SCATTER_WINDOWS, mode), ["n + 1", "(k, 1)", "(k, 2)"],
           "n + 1", [((8,), F32), ((5, 1), I32), ((5, 2), F32)], [{"n": 7, "k": 5}, {"n": 3, "k": 2}, {"n": 1, "k": 3}],
           {1: IDX}) for prim in ("scatter", "scatter_add") for mode in MODES],
]


# ---------------------------------------------------------------------------
# Control flow


def _rnn(xs: Any, w: Any, h0: Any) -> Any:
    def step(h: Any, x: Any) -> Any:
        h = pnp.tanh(h @ w + x)
        return h, h * 2.0

    return lax.scan(step, h0, xs)


def _rnn_reverse(xs: Any, w: Any, h0: Any) -> Any:
    return lax.scan(lambda h, x: (pnp.tanh(h @ w + x), pnp.sum(h)), h0, xs, reverse=True)


def _fori_sum(x: Any) -> Any:
    def body(i: Any, acc: Any) -> Any:
        return acc + lax.dynamic_slice(x, (i,), (1,), allow_negative_indices=False)[0] * 2.0

    return lax.fori_loop(0, dimension_as_value(x.shape[0]), body, np.float32(0.0))


def _while_halving(x: Any) -> Any:
    return lax.while_loop(lambda v: pnp.sum(v) > 1.0, lambda v: v * 0.5, x)


CONTROL_FLOW = [
    Case("scan over a symbolic length", _rnn, ["(n, 3)", "(3, 3)", "3"], ("3", "(n, 3)"),
         [((7, 3), F32), ((3, 3), F32), ((3,), F32)], [{"n": 7}, {"n": 4}, {"n": 1}]),
    Case("scan in reverse over a symbolic length", _rnn_reverse, ["(n, 3)", "(3, 3)", "3"], ("3", "n"),
         [((7, 3), F32), ((3, 3), F32), ((3,), F32)], [{"n": 7}, {"n": 4}, {"n": 1}]),
    Case("scan of a constant length over symbolic rows", lambda xs: lax.scan(
        lambda c, x: (c + x, pnp.sum(x)), pnp.zeros_like(xs[0]), xs), ["(3, n)"], ("n", "3"), [((3, 6), F32)],
         ENVS_1D[1:]),
    Case("fori_loop up to a symbolic size", _fori_sum, ["n"], "", [((8,), F32)], ENVS_1D),
    Case("while_loop on masked data", _while_halving, ["n"], "n", [((8,), F32)], ENVS_1D, {0: uniform(0.5, 2.0)}),
    Case("cond on data", lambda p, x: lax.cond(p, lambda v: pnp.sum(v), lambda v: pnp.max(v), x), ["", "n"], "",
         [((), BOOL), ((8,), F32)], ENVS_1D),
    Case("cond on a symbolic size", lambda x: lax.cond(dimension_as_value(x.shape[0]) > 3,
                                                       lambda v: lax.rev(v, (0,)), lambda v: v * 2.0, x),
         ["n"], "n", [((8,), F32)], ENVS_1D),
]


# ---------------------------------------------------------------------------
# Calls, custom rules, AD helpers


@lax.custom_jvp
def _softplus(x: Any) -> Any:
    return pnp.log1p(pnp.exp(x))


_softplus.defjvp(lambda primals, tangents: (_softplus(primals[0]), tangents[0] * lax.logistic(primals[0])))


@lax.custom_vjp
def _clip_grad(x: Any) -> Any:
    return pnp.sum(x * x)


_clip_grad.defvjp(lambda x: (_clip_grad(x), x), lambda x, g: (g * x,))


@lax.custom_ivjp
def _scale(x: Any) -> Any:
    return x * 3.0


_scale.defivjp(lambda xs, ys, dys: ([ys[0] / 3.0], [dys[0] * 3.0]))


@lax.custom_vmap
def _custom_vmapped(x: Any) -> Any:
    return pnp.cumsum(x)


CALLS = [
    Case("closed_call (named_call)", lambda x: lax.named_call(lambda v: pnp.sum(lax.rev(v, (0,)) * v))(x), ["n"], "",
         [((8,), F32)], ENVS_1D),
    Case("checkpoint", lambda x: lax.checkpoint(lambda v: pnp.cumsum(pnp.sin(v)[::-1]))(x), ["n"], "n",
         [((8,), F32)], ENVS_1D),
    Case("custom_jvp", lambda x: pnp.sum(_softplus(x)), ["n"], "", [((8,), F32)], ENVS_1D),
    Case("custom_vjp", _clip_grad, ["n"], "", [((8,), F32)], ENVS_1D),
    Case("invertible", lambda x: lax.invertible(lambda v: pnp.cumsum(v) * 2.0)(x), ["n"], "n", [((8,), F32)],
         ENVS_1D),
    Case("custom_ivjp", lambda x: pnp.sum(_scale(x)), ["n"], "", [((8,), F32)], ENVS_1D),
    Case("custom_vmap", _custom_vmapped, ["n"], "n", [((8,), F32)], ENVS_1D),
    Case("stop_gradient, add_any, zeros_like", lambda x: adh.add_any_p.bind(
        lax.stop_gradient(x), adh.zeros_like_p.bind(x) + pnp.sum(x)), ["n"], "n", [((8,), F32)], ENVS_1D),
]

# ---------------------------------------------------------------------------
# Complex numbers and fft (over axes of concrete size; masked leading axes)


def _z(x: Any, y: Any) -> Any:
    return cx.complex_p.bind(x, y)


def _fft_case(kind: int, in_spec: str, out_spec: str, padded: tuple[int, ...], lengths: tuple[int, ...]) -> Case:
    def fun(x: Any, y: Any) -> Any:
        operand = x if kind == 2 else _z(x, y)
        out = fft_p.bind(operand, fft_type=kind, fft_lengths=lengths)
        return out if kind == 3 else cx.real_p.bind(ew.mul_p.bind(out, cx.conj_p.bind(out)))

    return Case(f"fft type {kind} over {lengths}", fun, [in_spec, in_spec], out_spec,
                [(padded, F32), (padded, F32)], ENVS_1D, rtol=1e-4)  # fmt: skip


COMPLEX_FFT = [
    Case("complex parts", lambda x, y: cx.imag_p.bind(ew.mul_p.bind(cx.conj_p.bind(_z(x, y)), _z(y, x))),
         ["(n, m)", "(n, m)"], "(n, m)", [((6, 5), F32), ((6, 5), F32)], ENVS_2D),
    _fft_case(0, "(n, 8)", "(n, 8)", (8, 8), (8,)),
    _fft_case(1, "(n, 3, 4)", "(n, 3, 4)", (8, 3, 4), (3, 4)),
    _fft_case(2, "(n, 6)", "(n, 4)", (8, 6), (6,)),
    _fft_case(3, "(n, 2, 4)", "(n, 2, 6)", (8, 2, 4), (2, 6)),
]

_ENVS_N = [{"n": 6}, {"n": 3}, {"n": 1}]


def _spd(x: Any) -> Any:
    """A stack of symmetric positive definite matrices made from ``x``."""
    return lax.batch_matmul(x, pnp.swapaxes(x, -1, -2)) + 3 * pnp.eye(x.shape[-1], dtype=x.dtype)


_L = lax.linalg
FACTORIZATIONS = [  # a masked stack of matrices (a masked matrix axis is refused: test_factorizations.py)
    Case("cholesky of a masked stack", lambda x: _L.cholesky(_spd(x)), ["(n, 3, 3)"], "(n, 3, 3)",
         [((6, 3, 3), F32)], _ENVS_N, rtol=1e-4),
    Case("triangular_solve of masked stacks", lambda a, b: _L.triangular_solve(_spd(a), b, left_side=True, lower=True),
         ["(n, 3, 3)", "(n, 3, 2)"], "(n, 3, 2)", [((6, 3, 3), F32), ((6, 3, 2), F32)], _ENVS_N, rtol=1e-4),
    Case("lu of a masked stack", _L.lu, ["(n, 4, 3)"], ("(n, 4, 3)", "(n, 3)", "(n, 4)"), [((6, 4, 3), F32)],
         _ENVS_N, rtol=1e-4),
    Case("qr of a masked stack", lambda x: _L.qr(x, full_matrices=False), ["(n, 4, 3)"], ("(n, 4, 3)", "(n, 3, 3)"),
         [((6, 4, 3), F32)], _ENVS_N, rtol=1e-4),
    Case("eigh of a masked stack", lambda x: _L.eigh(x)[1], ["(n, 3, 3)"], "(n, 3)", [((6, 3, 3), F32)], _ENVS_N,
         rtol=1e-4),
    Case("svd of a masked stack", lambda x: _L.svd(x, full_matrices=False), ["(n, 4, 3)"],
         ("(n, 4, 3)", "(n, 3)", "(n, 3, 3)"), [((6, 4, 3), F32)], _ENVS_N, rtol=1e-4),
    Case("eig of a masked stack", lambda x: _L.eig(x, compute_left_eigenvectors=False), ["(n, 3, 3)"],
         ["(n, 3)", "(n, 3, 3)"], [((6, 3, 3), F32)], _ENVS_N, rtol=1e-4),
]  # fmt: skip
_WIN = dict(window_dimensions=(1, 2), window_strides=(1, 2), padding=((0, 0), (1, 0)))
_WIN5 = {**_WIN, "base_dilation": (1, 1), "window_dilation": (1, 1)}
WINDOWS = [
    *(Case(f"reduce_window {name} along a static axis", lambda x, _c=comp, _i=init: lax.reduce_window(
        x, _i, _c, (1, 3), (1, 2), "SAME", (1, 2)), ["(n, 5)"], "(n, 5)", [((6, 5), F32)], _ENVS_N)
      for name, comp, init in [("sum", lax.add, 0.0), ("max", lax.max, -np.inf), ("min", lax.min, np.inf),
                               ("prod", lax.mul, 1.0)]),
    Case("select_and_gather_add", lambda t, x: PRIMS["select_and_gather_add"].bind(t, x, select="ge", **_WIN5),
         ["(n, 5)", "(n, 5)"], "(n, 3)", [((6, 5), F32), ((6, 5), F32)], _ENVS_N),
    Case("select_and_scatter_add", lambda s, x: PRIMS["select_and_scatter_add"].bind(s, x, select="le", **_WIN),
         ["(n, 3)", "(n, 5)"], "(n, 5)", [((6, 3), F32), ((6, 5), F32)], _ENVS_N),
]  # fmt: skip

# Any objects stand for devices: a constraint only lays the value out, and the NumPy
# backend ignores layouts.
_MESH = Mesh(np.array([object(), object()]), ("d",))

HOST_CALLBACKS = [
    Case("sharding_constraint passes the padded value through", lambda x: lax.mul(PRIMS["sharding_constraint"].bind(
        x, sharding=NamedSharding(_MESH, PartitionSpec(None, None))), x), ["(n, 5)"], "(n, 5)", [((6, 5), F32)], _ENVS_N),
    Case("optimization_barrier", lambda x: lax.add(lax.optimization_barrier(x), x), ["(n, 5)"], "(n, 5)",
         [((6, 5), F32)], _ENVS_N),
    Case("pure_callback on a static operand", lambda x: lax.add(x, lax.broadcast_in_dim(host_callbacks.pure_callback(
        lambda c: (c * 2).astype(np.float32), ShapeDtypeStruct((5,), np.dtype(F32)), np.arange(5, dtype=F32)),
        x.shape, (1,))),
         ["(n, 5)"], "(n, 5)", [((6, 5), F32)], _ENVS_N),
]  # fmt: skip

ALL_CASES = ELEMENTWISE + REDUCTIONS + LINALG + FACTORIZATIONS + STRUCTURAL + INDEXING + CONTROL_FLOW + CALLS + COMPLEX_FFT + WINDOWS + HOST_CALLBACKS


@pytest.mark.parametrize("case", ALL_CASES, ids=repr)
def test_rule_matches_numpy_on_the_logical_part(case: Case) -> None:
    check_case(case)


#: Primitives whose values need a named axis (an enclosing vmap): their
#: masking is tested in the meta-package's composition tests and staged below.
# Collectives and shard_map need an axis bound by a mapping (vmap, shard_map); their
# masking rules are exercised in tests/multidevice_program_checks.py (mask of sharded data).
NEEDS_AXIS = {"psum", "pmax", "pmin", "pmean", "all_gather", "axis_index", "ppermute", "psum_scatter", "all_to_all",
              "shard_map", "pvary"}


def test_every_rule_has_a_case() -> None:
    covered: set[str] = set()
    for case in ALL_CASES:
        covered |= primitives_of(case)
    with_rules = {p.name for p in all_primitives() if p in masking_rules}
    missing = sorted(with_rules - covered - NEEDS_AXIS)
    assert missing == [], f"no test case exercises the masking rule of: {', '.join(missing)}"


def test_half_precision_reductions() -> None:
    case = Case("reduce_sum of bfloat16", _reduce("reduce_sum", (0,)), ["(n, m)"], "m",
                [((6, 5), pdt.bfloat16)], ENVS_2D, rtol=2e-2)
    check_case(case)
