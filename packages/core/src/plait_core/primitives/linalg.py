"""Primitives of the linalg family: ``dot_general`` and ``conv_general_dilated``.

Both follow XLA.  Operands have one dtype (a mismatch is a TypeError naming
both); the result has that dtype unless ``preferred_element_type`` asks for
another of a compatible kind.  Integer products are computed in the integer
result type (wrapping around), booleans as "any of the pairwise ands", and
16-bit floats are accumulated in float32.  ``precision`` is recorded but does
not change the NumPy implementation, which always computes at full precision.

``dot_general``'s ``dimension_numbers`` are
``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``; its result has the
batch dims, then the lhs free dims, then the rhs free dims.

``conv_general_dilated`` reads its operands through a
:class:`ConvDimensionNumbers` (which dims are batch / feature / spatial),
dilates and pads the lhs, dilates the rhs, and slides the window with the
given strides.  ``feature_group_count`` splits the lhs features and the rhs
output features into contiguous groups convolved separately;
``batch_group_count`` does the same with the lhs batch instead of its
features.
"""

from __future__ import annotations

import string
from typing import Any, NamedTuple

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from plait_core import dtypes
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim
from plait_core.primitive import Primitive
from plait_core.primitives.reductions import (
    check_int_param,
    dims_match,
    shape_text,
)

DType = np.dtype[Any]
Pair = tuple[tuple[int, ...], tuple[int, ...]]
DotDimensionNumbers = tuple[Pair, Pair]


class ConvDimensionNumbers(NamedTuple):
    """Where the dims of a convolution's operands and result are.

    ``lhs_spec`` is (batch dim, feature dim, spatial dims...), ``rhs_spec`` is
    (output feature dim, input feature dim, spatial dims...) and ``out_spec``
    is (batch dim, feature dim, spatial dims...); each a tuple of dim indices.
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


# ---------------------------------------------------------------------------
# Dtypes shared by both primitives


def _bit_width(d: DType) -> int:
    return 1 if dtypes.is_bool(d) else 8 * d.itemsize


def _integral(d: DType) -> bool:
    return dtypes.is_bool(d) or dtypes.is_int(d)


def product_dtype(name: str, lhs: ShapedArray, rhs: ShapedArray, preferred: Any) -> tuple[DType, bool]:
    """The result dtype and weak type of a product of ``lhs`` and ``rhs``."""
    if lhs.dtype != rhs.dtype:
        raise TypeError(
            f"{name} requires operands of the same dtype, got lhs {lhs.dtype.name} ({lhs.str_short()}) "
            f"and rhs {rhs.dtype.name} ({rhs.str_short()})"
        )
    weak = lhs.weak_type and rhs.weak_type
    if preferred is None:
        return lhs.dtype, weak
    if not isinstance(preferred, np.dtype):
        raise TypeError(f"{name}: preferred_element_type must be a dtype or None, got {preferred!r}")
    d = lhs.dtype
    compatible = (
        (_integral(d) and (dtypes.is_int(preferred) or dtypes.is_float(preferred)))
        or (dtypes.is_float(d) and dtypes.is_float(preferred))
        or (dtypes.is_complex(d) and dtypes.is_complex(preferred))
        or preferred == d
    )
    if not compatible:
        raise TypeError(
            f"{name}: preferred_element_type {preferred.name} is incompatible with operands of dtype {d.name}; "
            "allowed are (integer, integer), (integer, floating), (floating, floating) and (complex, complex)"
        )
    if not dtypes.is_float(d) and dtypes.is_int(preferred) and _bit_width(preferred) < _bit_width(d):
        raise TypeError(
            f"{name}: preferred_element_type {preferred.name} is narrower than the operands' dtype {d.name}"
        )
    return preferred, False


def _accumulation_dtype(operand: DType, result: DType) -> DType:
    """The dtype NumPy computes a product in, before the cast to ``result``."""
    if dtypes.is_bool(result):
        return dtypes.int64
    if dtypes.is_int(result):
        return result
    if dtypes.is_complex(result):
        wide = dtypes.complex128 in (operand, result)
        return dtypes.complex128 if wide else dtypes.complex64
    return dtypes.float64 if dtypes.float64 in (operand, result) else dtypes.float32


def _check_precision(name: str, precision: Any) -> None:
    try:
        hash(precision)
    except TypeError:
        raise TypeError(f"{name}: precision must be hashable (None, a string or a pair), got {precision!r}") from None


# ---------------------------------------------------------------------------
# dot_general


def _check_dot_dims(lhs: ShapedArray, rhs: ShapedArray, dimension_numbers: Any) -> DotDimensionNumbers:
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        groups = [tuple(lc), tuple(rc), tuple(lb), tuple(rb)]
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general: dimension_numbers must be ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), "
            f"got {dimension_numbers!r}"
        ) from None
    for side, aval, dims in (("lhs", lhs, groups[0] + groups[2]), ("rhs", rhs, groups[1] + groups[3])):
        for d in dims:
            d = check_int_param("dot_general", "dimension_numbers", d)
            if not 0 <= d < aval.ndim:
                raise TypeError(
                    f"dot_general: {side} dimension {d} is out of range for an {side} of shape "
                    f"{shape_text(aval.shape)} (rank {aval.ndim})"
                )
        if len(set(dims)) != len(dims):
            raise TypeError(
                f"dot_general: {side} dimensions {dims} repeat a dimension (contracting and batch "
                f"dimensions must be distinct; {side} shape {shape_text(aval.shape)})"
            )
    for kind, ls, rs in (("contracting", groups[0], groups[1]), ("batch", groups[2], groups[3])):
        if len(ls) != len(rs):
            raise TypeError(f"dot_general: lhs and rhs must have as many {kind} dimensions, got {ls} and {rs}")
        for a, b in zip(ls, rs):
            if not dims_match(lhs.shape[a], rhs.shape[b]):
                raise TypeError(
                    f"dot_general: {kind} dimension {a} of lhs (size {lhs.shape[a]}) and {b} of rhs "
                    f"(size {rhs.shape[b]}) differ; lhs shape {shape_text(lhs.shape)}, rhs shape {shape_text(rhs.shape)}"
                )
    return (groups[0], groups[1]), (groups[2], groups[3])


def _free_dims(ndim: int, *used: tuple[int, ...]) -> list[int]:
    taken = {d for group in used for d in group}
    return [d for d in range(ndim) if d not in taken]


def _dot_general_rule(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: Any,
    preferred_element_type: Any,
) -> ShapedArray:
    (lc, rc), (lb, rb) = _check_dot_dims(lhs, rhs, dimension_numbers)
    _check_precision("dot_general", precision)
    dtype, weak = product_dtype("dot_general", lhs, rhs, preferred_element_type)
    shape = (
        [lhs.shape[d] for d in lb]
        + [lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb)]
        + [rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)]
    )
    return ShapedArray(tuple(shape), dtype, weak)


def _dot_general(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    dimension_numbers: DotDimensionNumbers,
    precision: Any,
    preferred_element_type: Any,
) -> Any:
    (lc, rc), (lb, rb) = dimension_numbers
    lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
    result = lhs.dtype if preferred_element_type is None else preferred_element_type
    acc = _accumulation_dtype(lhs.dtype, result)
    # Bring both operands to (batch, rows, contraction) x (batch, contraction, cols).
    batch = [lhs.shape[d] for d in lb]
    rows = [lhs.shape[d] for d in lf]
    cols = [rhs.shape[d] for d in rf]
    k = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    b, m, n = (int(np.prod(s, dtype=np.int64)) for s in (batch, rows, cols))
    left = lhs.transpose(list(lb) + lf + list(lc)).astype(acc).reshape(b, m, k)
    right = rhs.transpose(list(rb) + list(rc) + rf).astype(acc).reshape(b, k, n)
    return np.matmul(left, right).reshape(batch + rows + cols)


dot_general_p = Primitive("dot_general", family="linalg")
dot_general_p.def_abstract_eval(_dot_general_rule)
dot_general_p.def_impl(_dot_general)


# ---------------------------------------------------------------------------
# conv_general_dilated: shape rule


def _int_tuple(name: str, param: str, value: Any, length: int, minimum: int) -> tuple[int, ...]:
    if not isinstance(value, tuple):
        raise TypeError(f"{name}: the parameter {param} must be a tuple of ints, got {type(value).__name__}")
    if len(value) != length:
        raise ValueError(f"{name}: {param} must have one entry per spatial dimension ({length}), got {value}")
    for v in value:
        if check_int_param(name, param, v) < minimum:
            raise ValueError(f"{name}: every entry of {param} must be at least {minimum}, got {value}")
    return value


def _check_padding(name: str, padding: Any, length: int) -> tuple[tuple[int, int], ...]:
    if not isinstance(padding, tuple) or len(padding) != length:
        raise ValueError(
            f"{name}: padding must be a tuple of one (low, high) pair per spatial dimension ({length}), got {padding!r}"
        )
    for pair in padding:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise ValueError(f"{name}: every padding entry must be a (low, high) pair, got {pair!r}")
        for p in pair:
            check_int_param(name, "padding", p)
    return padding


def _check_spec(name: str, which: str, spec: Any, ndim: int) -> None:
    if not isinstance(spec, tuple) or sorted(spec) != list(range(ndim)):
        raise ValueError(
            f"{name}: dimension_numbers.{which} must be a permutation of range({ndim}) for operands of rank {ndim}, got {spec!r}"
        )


def dilated_size(size: Dim, dilation: int) -> Dim:
    """The size of ``size`` elements with ``dilation - 1`` zeros between neighbours."""
    if type(size) is int and size == 0:
        return 0
    return (size - 1) * dilation + 1


def _window_count(padded: Dim, window: Dim, stride: int) -> Dim:
    if type(padded) is int and type(window) is int:
        return max(0, (padded - window) // stride + 1) if padded >= window else 0
    return (padded - window) // stride + 1


def _check_divides(name: str, what: str, size: Dim, count: int) -> None:
    if not dims_match(size % count, 0):
        raise ValueError(f"{name}: {what} ({size}) must be a multiple of {count}")


def _conv_rule(
    lhs: ShapedArray,
    rhs: ShapedArray,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: Any,
) -> ShapedArray:
    name = "conv_general_dilated"
    if lhs.ndim != rhs.ndim or lhs.ndim < 2:
        raise ValueError(
            f"{name}: lhs and rhs must have the same rank, at least 2, got shapes "
            f"{shape_text(lhs.shape)} and {shape_text(rhs.shape)}"
        )
    if not isinstance(dimension_numbers, ConvDimensionNumbers):
        raise TypeError(f"{name}: dimension_numbers must be a ConvDimensionNumbers, got {dimension_numbers!r}")
    for which in ("lhs_spec", "rhs_spec", "out_spec"):
        _check_spec(name, which, getattr(dimension_numbers, which), lhs.ndim)
    nsp = lhs.ndim - 2
    strides = _int_tuple(name, "window_strides", window_strides, nsp, 1)
    ldil = _int_tuple(name, "lhs_dilation", lhs_dilation, nsp, 1)
    rdil = _int_tuple(name, "rhs_dilation", rhs_dilation, nsp, 1)
    pads = _check_padding(name, padding, nsp)
    groups = check_int_param(name, "feature_group_count", feature_group_count)
    bgroups = check_int_param(name, "batch_group_count", batch_group_count)
    if groups < 1 or bgroups < 1:
        raise ValueError(f"{name}: feature_group_count and batch_group_count must be at least 1, got {groups} and {bgroups}")
    if groups > 1 and bgroups > 1:
        raise ValueError(f"{name}: feature_group_count ({groups}) and batch_group_count ({bgroups}) cannot both exceed 1")
    _check_precision(name, precision)
    dtype, weak = product_dtype(name, lhs, rhs, preferred_element_type)

    n, c, *spatial = (lhs.shape[d] for d in dimension_numbers.lhs_spec)
    o, i, *window = (rhs.shape[d] for d in dimension_numbers.rhs_spec)
    if not dims_match(c, i * groups):
        raise ValueError(
            f"{name}: the lhs feature dimension ({c}) must equal the rhs input feature dimension ({i}) "
            f"times feature_group_count ({groups}); lhs shape {shape_text(lhs.shape)}, rhs shape {shape_text(rhs.shape)}"
        )
    _check_divides(name, "the rhs output feature dimension", o, groups)
    _check_divides(name, "the rhs output feature dimension", o, bgroups)
    _check_divides(name, "the lhs batch dimension", n, bgroups)
    out_spatial = [
        _window_count(dilated_size(s, ld) + lo + hi, dilated_size(k, rd), st)
        for s, k, ld, rd, (lo, hi), st in zip(spatial, window, ldil, rdil, pads, strides)
    ]
    shape: list[Dim] = [0] * lhs.ndim
    for d, size in zip(dimension_numbers.out_spec, [n // bgroups, o, *out_spatial]):
        shape[d] = size
    return ShapedArray(tuple(shape), dtype, weak)


# ---------------------------------------------------------------------------
# conv_general_dilated: NumPy implementation (all arrays in (batch, feature,
# spatial...) order inside)


def _dilate_and_pad(x: np.ndarray, axis: int, dilation: int, lo: int, hi: int) -> np.ndarray:
    """Insert ``dilation - 1`` zeros between elements along ``axis``, then pad
    with ``lo`` / ``hi`` zeros (a negative amount crops)."""
    size = x.shape[axis]
    out_size = max(0, int(dilated_size(size, dilation)) + lo + hi)
    source = np.arange(out_size) - lo  # position in the dilated array
    valid = (source >= 0) & (source % dilation == 0) & (source // dilation < size)
    shape = list(x.shape)
    shape[axis] = out_size
    out = np.zeros(shape, x.dtype)
    index: list[Any] = [slice(None)] * x.ndim
    index[axis] = np.nonzero(valid)[0]
    out[tuple(index)] = np.take(x, source[valid] // dilation, axis=axis)
    return out


def _windows(lhs: np.ndarray, window: tuple[int, ...], strides: tuple[int, ...]) -> np.ndarray:
    """im2col: (N, C, *out_spatial, *window) views of every strided window."""
    spatial_axes = tuple(range(2, lhs.ndim))
    if any(lhs.shape[a] < w for a, w in zip(spatial_axes, window)):
        counts = [max(0, (lhs.shape[a] - w) // s + 1) for a, w, s in zip(spatial_axes, window, strides)]
        return np.zeros(lhs.shape[:2] + tuple(counts) + window, lhs.dtype)
    views = sliding_window_view(lhs, window, axis=spatial_axes)
    return views[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)]


_LETTERS = [ch for ch in string.ascii_letters if ch not in "bcgnok"]


def _grouped_contraction(windows: np.ndarray, rhs: np.ndarray, groups: int, bgroups: int) -> Any:
    """Sum windows x kernels over input features and window positions, group by group."""
    nsp = rhs.ndim - 2
    sp, k = "".join(_LETTERS[:nsp]), "".join(_LETTERS[nsp : 2 * nsp])
    n, c = windows.shape[:2]
    o = rhs.shape[0]
    rest = windows.shape[2:]
    if bgroups > 1:
        w = windows.reshape((bgroups, n // bgroups, c) + rest)
        r = rhs.reshape((bgroups, o // bgroups) + rhs.shape[1:])
        out = np.einsum(f"bnc{sp}{k},boc{k}->nbo{sp}", w, r, optimize=True)
        return out.reshape((n // bgroups, o) + out.shape[3:])
    w = windows.reshape((n, groups, c // groups) + rest)
    r = rhs.reshape((groups, o // groups) + rhs.shape[1:])
    out = np.einsum(f"ngc{sp}{k},goc{k}->ngo{sp}", w, r, optimize=True)
    return out.reshape((n, o) + out.shape[3:])


def _conv(
    lhs: np.ndarray,
    rhs: np.ndarray,
    *,
    window_strides: tuple[int, ...],
    padding: tuple[tuple[int, int], ...],
    lhs_dilation: tuple[int, ...],
    rhs_dilation: tuple[int, ...],
    dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int,
    batch_group_count: int,
    precision: Any,
    preferred_element_type: Any,
) -> Any:
    result = lhs.dtype if preferred_element_type is None else preferred_element_type
    acc = _accumulation_dtype(lhs.dtype, result)
    x = lhs.transpose(dimension_numbers.lhs_spec).astype(acc)
    kernel = rhs.transpose(dimension_numbers.rhs_spec).astype(acc)
    for j, (ld, (lo, hi), rd) in enumerate(zip(lhs_dilation, padding, rhs_dilation)):
        x = _dilate_and_pad(x, 2 + j, ld, lo, hi)
        kernel = _dilate_and_pad(kernel, 2 + j, rd, 0, 0)
    windows = _windows(x, kernel.shape[2:], window_strides)
    out = _grouped_contraction(windows, kernel, feature_group_count, batch_group_count)
    return out.transpose(np.argsort(dimension_numbers.out_spec))


conv_general_dilated_p = Primitive("conv_general_dilated", family="linalg")
conv_general_dilated_p.def_abstract_eval(_conv_rule)
conv_general_dilated_p.def_impl(_conv)

__all__ = ["ConvDimensionNumbers", "conv_general_dilated_p", "dot_general_p", "product_dtype"]
