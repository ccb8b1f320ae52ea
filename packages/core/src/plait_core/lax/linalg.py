"""lax functions of the linalg family, with JAX's names and signatures:
``dot``, ``dot_general``, ``batch_matmul``, ``conv_general_dilated``,
``conv``, ``conv_dimension_numbers``, ``padtype_to_pads`` and
``ConvDimensionNumbers``.

Operands must share a dtype; a weakly typed operand (a Python scalar) takes
the other operand's dtype.  ``precision`` is accepted as ``None``, a string
(``'default'``, ``'high'``, ``'highest'``, ...), an enum-like value with a
``name``, or a pair of those; the NumPy evaluation always uses full
precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, to_numpy
from plait_core.dims import Dim
from plait_core.explicit_sharding import check_user_dot_general, with_out_sharding
from plait_core.lax import elementwise as _ew
from plait_core.lax.factorizations import (  # noqa: F401  (lax.linalg's factorisations)
    cholesky,
    eig,
    eigh,
    lu,
    lu_pivots_to_permutation,
    qr,
    svd,
    triangular_solve,
)
from plait_core.lax.reductions import normalize_axis, operand_aval
from plait_core.primitives import linalg as _p
from plait_core.primitives.linalg import ConvDimensionNumbers, dilated_size
from plait_core.primitives.reductions import shape_text
from plait_core.sharding import explicit_state
from plait_core.trace import Tracer

Array = Any

__all__ = [
    "ConvDimensionNumbers",
    "batch_matmul",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "dot",
    "dot_general",
    "padtype_to_pads",
]

_PRECISIONS = frozenset({"default", "high", "highest", "fastest", "bfloat16", "bfloat16_3x", "tensorfloat32", "float32"})


# ---------------------------------------------------------------------------
# Arguments shared by the products


def _one_precision(fn: str, p: Any) -> str:
    name = p if isinstance(p, str) else getattr(p, "name", None)
    if not isinstance(name, str) or name.lower() not in _PRECISIONS:
        raise ValueError(f"lax.{fn}: unknown precision {p!r}; expected None, one of {sorted(_PRECISIONS)} or a pair")
    return name.lower()


def canonicalize_precision(fn: str, precision: Any) -> Any:
    """``None``, a precision name, or a pair of names (hashable)."""
    if precision is None:
        return None
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise ValueError(f"lax.{fn}: a precision pair must have two entries, got {precision!r}")
        return tuple(None if p is None else _one_precision(fn, p) for p in precision)
    return _one_precision(fn, precision)


def canonicalize_preferred(fn: str, preferred: Any) -> np.dtype[Any] | None:
    """``None`` or the canonical dtype asked for."""
    if preferred is None:
        return None
    try:
        return dtypes.canonicalize_dtype(np.dtype(preferred))
    except TypeError:
        raise TypeError(f"lax.{fn}: preferred_element_type must be a dtype or None, got {preferred!r}") from None


def _cast(x: Array, dtype: np.dtype[Any]) -> Array:
    if isinstance(x, Tracer):
        return _ew.convert_element_type(x, dtype)
    return np.asarray(to_numpy(x), dtype)


def match_weak_operands(fn: str, lhs: Array, rhs: Array) -> tuple[Array, Array, ShapedArray, ShapedArray]:
    """Give a weakly typed operand the other operand's dtype; return both
    operands and their abstract values."""
    la, ra = operand_aval(fn, lhs, "lhs"), operand_aval(fn, rhs, "rhs")
    if la.dtype != ra.dtype:
        if la.weak_type and not ra.weak_type:
            lhs = _cast(lhs, ra.dtype)
            la = la.update(dtype=ra.dtype, weak_type=False)
        elif ra.weak_type and not la.weak_type:
            rhs = _cast(rhs, la.dtype)
            ra = ra.update(dtype=la.dtype, weak_type=False)
    return lhs, rhs, la, ra


# ---------------------------------------------------------------------------
# Dot products


def _dims(fn: str, aval: ShapedArray, dims: Any, arg: str) -> tuple[int, ...]:
    try:
        items = tuple(dims)
    except TypeError:
        raise TypeError(f"lax.{fn}: {arg} must be a sequence of ints, got {dims!r}") from None
    return tuple(normalize_axis(fn, aval, d, f"{arg} dimension") for d in items)


def dot_general(
    lhs: Array,
    rhs: Array,
    dimension_numbers: Any,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:
    """General tensor contraction.  ``dimension_numbers`` is
    ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``; the
    result has the batch dims, then lhs's free dims, then rhs's free dims.
    ``out_sharding`` (explicit sharding): the result's layout and type, which
    also allows contracting dimensions split alike on both sides."""
    if out_sharding is not None:
        return with_out_sharding(
            lambda: dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type), out_sharding
        )
    lhs, rhs, la, ra = match_weak_operands("dot_general", lhs, rhs)
    try:
        (lc, rc), (lb, rb) = dimension_numbers
    except (TypeError, ValueError):
        raise TypeError(
            "lax.dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}"
        ) from None
    dnums = (
        (_dims("dot_general", la, lc, "lhs contracting"), _dims("dot_general", ra, rc, "rhs contracting")),
        (_dims("dot_general", la, lb, "lhs batch"), _dims("dot_general", ra, rb, "rhs batch")),
    )
    if explicit_state.active:
        check_user_dot_general(la, ra, dnums)
    return _p.dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=dnums,
        precision=canonicalize_precision("dot_general", precision),
        preferred_element_type=canonicalize_preferred("dot_general", preferred_element_type),
    )


def dot(lhs: Array, rhs: Array, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Vector-vector, matrix-vector or matrix-matrix product (operands of rank
    1 or 2): the last dim of ``lhs`` contracts with the first of ``rhs``."""
    la, ra = operand_aval("dot", lhs, "lhs"), operand_aval("dot", rhs, "rhs")
    if not (1 <= la.ndim <= 2 and 1 <= ra.ndim <= 2):
        raise ValueError(
            f"lax.dot: operands must have rank 1 or 2, got shapes {shape_text(la.shape)} and {shape_text(ra.shape)}; "
            "use lax.dot_general for other ranks"
        )
    dnums = (((la.ndim - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, dnums, canonicalize_precision("dot", precision), preferred_element_type)


def batch_matmul(lhs: Array, rhs: Array, precision: Any = None) -> Array:
    """Matrix products over leading batch dims: ``(..., m, k) x (..., k, n)``."""
    la, ra = operand_aval("batch_matmul", lhs, "lhs"), operand_aval("batch_matmul", rhs, "rhs")
    if la.ndim != ra.ndim or la.ndim < 2:
        raise ValueError(
            "lax.batch_matmul: operands must have the same rank, at least 2, got shapes "
            f"{shape_text(la.shape)} and {shape_text(ra.shape)}"
        )
    batch = tuple(range(la.ndim - 2))
    dnums = (((la.ndim - 1,), (ra.ndim - 2,)), (batch, batch))
    return dot_general(lhs, rhs, dnums, canonicalize_precision("batch_matmul", precision))


# ---------------------------------------------------------------------------
# Convolutions


def _spec_from_string(lhs_spec: str, rhs_spec: str, out_spec: str) -> ConvDimensionNumbers:
    fn = "conv_dimension_numbers"
    for spec, (a, b) in ((lhs_spec, "NC"), (rhs_spec, "OI"), (out_spec, "NC")):
        if spec.count(a) != 1 or spec.count(b) != 1 or len(set(spec)) != len(spec):
            raise ValueError(f"lax.{fn}: {spec!r} must name {a} and {b} exactly once and no dimension twice")
    spatial = set(rhs_spec) - set("OI")
    if set(lhs_spec) - set("NC") != spatial or set(out_spec) - set("NC") != spatial:
        raise ValueError(f"lax.{fn}: the specs {lhs_spec!r}, {rhs_spec!r}, {out_spec!r} name different spatial dimensions")
    order = [c for c in rhs_spec if c in spatial]  # spatial dims in the kernel's order

    def indices(spec: str, a: str, b: str) -> tuple[int, ...]:
        return (spec.index(a), spec.index(b)) + tuple(spec.index(c) for c in order)

    return ConvDimensionNumbers(indices(lhs_spec, "N", "C"), indices(rhs_spec, "O", "I"), indices(out_spec, "N", "C"))


def conv_dimension_numbers(lhs_shape: Sequence[Dim], rhs_shape: Sequence[Dim], dimension_numbers: Any) -> ConvDimensionNumbers:
    """A :class:`ConvDimensionNumbers` from ``None`` (batch, feature, spatial
    in order for all three), a triple of strings such as
    ``('NHWC', 'HWIO', 'NHWC')`` (spatial dims ordered as in the kernel
    spec), or a triple of index tuples."""
    fn = "conv_dimension_numbers"
    ndim = len(lhs_shape)
    if len(rhs_shape) != ndim:
        raise ValueError(f"lax.{fn}: lhs and rhs must have the same rank, got shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        default = tuple(range(ndim))
        return ConvDimensionNumbers(default, default, default)
    if not isinstance(dimension_numbers, (tuple, list)) or len(dimension_numbers) != 3:
        raise TypeError(f"lax.{fn}: dimension_numbers must be None or a triple (lhs, rhs, out), got {dimension_numbers!r}")
    if all(isinstance(s, str) for s in dimension_numbers):
        for s in dimension_numbers:
            if len(s) != ndim:
                raise ValueError(f"lax.{fn}: the spec {s!r} has {len(s)} letters but the operands have rank {ndim}")
        return _spec_from_string(*dimension_numbers)
    try:
        specs = [tuple(int(i) for i in s) for s in dimension_numbers]
    except (TypeError, ValueError):
        raise TypeError(f"lax.{fn}: dimension_numbers must hold strings or index tuples, got {dimension_numbers!r}") from None
    return ConvDimensionNumbers(*specs)


def padtype_to_pads(
    in_shape: Sequence[Dim], window_shape: Sequence[Dim], window_strides: Sequence[int], padding: str
) -> list[tuple[Dim, Dim]]:
    """The (low, high) padding of each spatial dim for ``'VALID'``, ``'SAME'``
    (output size ``ceil(in / stride)``, extra padding high) or
    ``'SAME_LOWER'`` (extra padding low)."""
    kind = padding.upper()
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"lax: unknown padding {padding!r}; expected 'VALID', 'SAME', 'SAME_LOWER' or (low, high) pairs")
    pads: list[tuple[Dim, Dim]] = []
    for size, window, stride in zip(in_shape, window_shape, window_strides):
        out = (size + stride - 1) // stride
        total = (out - 1) * stride + window - size
        if type(total) is int:
            total = max(total, 0)
        small, large = total // 2, total - total // 2
        pads.append((small, large) if kind == "SAME" else (large, small))
    return pads


def _int_tuple(fn: str, arg: str, value: Any, length: int) -> tuple[int, ...]:
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"lax.{fn}: {arg} must be a sequence of ints, got {value!r}") from None
    if len(items) != length:
        raise ValueError(f"lax.{fn}: {arg} must have one entry per spatial dimension ({length}), got {value!r}")
    for v in items:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"lax.{fn}: {arg} must hold ints, got {value!r}")
    return tuple(int(v) for v in items)


def conv_general_dilated(
    lhs: Array,
    rhs: Array,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Any = None,
    out_sharding: Any = None,
) -> Array:
    """General N-d convolution (XLA's ``ConvGeneralDilated``).

    ``padding`` is ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or one
    ``(low, high)`` pair per spatial dim (negative values crop).
    ``lhs_dilation`` inserts zeros between input elements (transposed
    convolution), ``rhs_dilation`` between kernel taps (atrous convolution).
    ``dimension_numbers`` is as for :func:`conv_dimension_numbers`.
    ``feature_group_count`` splits input and output features into groups;
    ``batch_group_count`` splits the batch and the output features instead.
    ``out_sharding`` (explicit sharding): the result's layout and type, as for
    :func:`dot_general`.
    """
    if out_sharding is not None:
        return with_out_sharding(
            lambda: conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                         dimension_numbers, feature_group_count, batch_group_count, precision,
                                         preferred_element_type),
            out_sharding,
        )
    fn = "conv_general_dilated"
    lhs, rhs, la, ra = match_weak_operands(fn, lhs, rhs)
    dnums = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = max(la.ndim - 2, 0)
    strides = _int_tuple(fn, "window_strides", window_strides, nsp)
    ldil = (1,) * nsp if lhs_dilation is None else _int_tuple(fn, "lhs_dilation", lhs_dilation, nsp)
    rdil = (1,) * nsp if rhs_dilation is None else _int_tuple(fn, "rhs_dilation", rhs_dilation, nsp)
    if isinstance(padding, str):
        if any(d != 1 for d in ldil):
            raise ValueError(f"lax.{fn}: string padding {padding!r} cannot be combined with lhs_dilation {ldil}; give explicit (low, high) pairs")
        if len(dnums.lhs_spec) != la.ndim or len(dnums.rhs_spec) != ra.ndim:
            raise ValueError(f"lax.{fn}: dimension_numbers {dnums} do not match operands of rank {la.ndim}")
        in_shape = [la.shape[d] for d in dnums.lhs_spec[2:]]
        window = [dilated_size(ra.shape[d], r) for d, r in zip(dnums.rhs_spec[2:], rdil)]
        pads = padtype_to_pads(in_shape, window, strides, padding)
        for p in pads:
            for v in p:
                if type(v) is not int:
                    raise ValueError(f"lax.{fn}: padding {padding!r} needs constant spatial sizes, got {shape_text(la.shape)}")
        padding = pads  # type: ignore[assignment]
    pairs = tuple(_int_tuple(fn, "padding pair", p, 2) for p in _int_pairs(fn, padding, nsp))
    return _p.conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=strides,
        padding=pairs,
        lhs_dilation=ldil,
        rhs_dilation=rdil,
        dimension_numbers=dnums,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=canonicalize_precision(fn, precision),
        preferred_element_type=canonicalize_preferred(fn, preferred_element_type),
    )


def _int_pairs(fn: str, padding: Any, nsp: int) -> list[Any]:
    if not isinstance(padding, (tuple, list)) or len(padding) != nsp:
        raise ValueError(f"lax.{fn}: padding must be a string or one (low, high) pair per spatial dimension ({nsp}), got {padding!r}")
    return list(padding)


def conv(
    lhs: Array,
    rhs: Array,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """Convolution of an (N, C, spatial...) input with an (O, I, spatial...) kernel."""
    return conv_general_dilated(
        lhs, rhs, window_strides, padding, precision=precision, preferred_element_type=preferred_element_type
    )
