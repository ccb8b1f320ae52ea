"""JVP and transpose rules of ``dot_general`` and ``conv_general_dilated``.

Both are bilinear: the JVP is ``op(t_lhs, rhs) + op(lhs, t_rhs)`` and each
operand has a transpose (the other must be known).

* ``dot_general``: the cotangent of one operand is a ``dot_general`` of the
  output cotangent with the other operand, contracting the other operand's
  free dimensions, followed by a transpose back into the operand's layout.
* ``conv_general_dilated``: the input's cotangent is a convolution of the
  output cotangent with the spatially reversed kernel (input and output
  features swapped, strides becoming input dilation); the kernel's cotangent
  is a convolution of the input with the output cotangent (batch and feature
  roles swapped, strides becoming kernel dilation).  Feature and batch groups
  are moved between axes so the grouping matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_autodiff import ops
from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import def_transpose
from plait_autodiff.tangents import Zero, add_tangents
from plait_autodiff.transpose import NonlinearError, is_undefined
from plait_core.dims import dim_as_int
from plait_core.primitives import linalg as la
from plait_core.primitives.linalg import ConvDimensionNumbers


def _bilinear_jvp(prim: Any) -> Any:
    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        lhs, rhs = primals
        t_lhs, t_rhs = tangents
        ans = prim.bind(lhs, rhs, **params)
        out: Any = Zero.from_primal_value(ans)
        if type(t_lhs) is not Zero:
            out = prim.bind(t_lhs, rhs, **params)
        if type(t_rhs) is not Zero:
            out = add_tangents(out, prim.bind(lhs, t_rhs, **params))
        return ans, out

    return rule


jvp_rules[la.dot_general_p] = _bilinear_jvp(la.dot_general_p)
jvp_rules[la.conv_general_dilated_p] = _bilinear_jvp(la.conv_general_dilated_p)


def _one_linear_operand(name: str, lhs: Any, rhs: Any) -> None:
    if is_undefined(lhs) and is_undefined(rhs):
        raise NonlinearError(f"cannot transpose {name} with respect to both operands: it is bilinear, not linear")


def _ct_in_operand_dtype(ct: Any, operand_aval: Any) -> Any:
    """With ``preferred_element_type`` the cotangent may have another dtype than the operands."""
    return ops.convert(ct, np.dtype(operand_aval.dtype), ops.aval(ct).weak_type)


# ---------------------------------------------------------------------------
# dot_general


def _dot_operand_ct(
    ct: Any, other: Any, ndim: int, mine: tuple[tuple[int, ...], tuple[int, ...]],
    theirs: tuple[tuple[int, ...], tuple[int, ...]], mine_is_lhs: bool, precision: Any,
) -> Any:  # fmt: skip
    """The cotangent of one dot_general operand (``mine``: its contracting and
    batch dims; ``theirs``: the other operand's), of rank ``ndim``: a
    dot_general of the output cotangent with the other operand over the other
    operand's free dims, then a transpose into the operand's layout (none for
    plain matrix products: the product is ordered like the operand)."""
    my_contract, my_batch = mine
    other_contract, other_batch = theirs
    other_ndim = ops.aval(other).ndim
    nb = len(my_batch)
    my_free = [d for d in range(ndim) if d not in my_contract and d not in my_batch]
    other_free = [d for d in range(other_ndim) if d not in other_contract and d not in other_batch]
    # The output cotangent holds the batch dims, then the lhs free dims, then the rhs free dims.
    other_first = nb + len(my_free) if mine_is_lhs else nb
    ct_other_free = tuple(range(other_first, other_first + len(other_free)))
    # The other operand's contracting dims (ascending) stand for mine in the product.
    contract_order = sorted(range(len(other_contract)), key=lambda i: other_contract[i])
    position = {d: k for k, d in enumerate(my_batch)}
    if mine_is_lhs:  # product = ct . rhs: batch, my free dims, then my contracting dims
        dn = ((ct_other_free, tuple(other_free)), (tuple(range(nb)), tuple(other_batch)))
        product = la.dot_general_p.bind(ct, other, dimension_numbers=dn, precision=precision, preferred_element_type=None)
        free_at, contract_at = nb, nb + len(my_free)
    else:  # product = lhs . ct: batch, my contracting dims, then my free dims
        dn = ((tuple(other_free), ct_other_free), (tuple(other_batch), tuple(range(nb))))
        product = la.dot_general_p.bind(other, ct, dimension_numbers=dn, precision=precision, preferred_element_type=None)
        contract_at, free_at = nb, nb + len(my_contract)
    for k, d in enumerate(my_free):
        position[d] = free_at + k
    for k, i in enumerate(contract_order):
        position[my_contract[i]] = contract_at + k
    return ops.transpose(product, tuple(position[d] for d in range(ndim)))


@def_transpose(la.dot_general_p)
def _dot_general_transpose(
    ct: Any, lhs: Any, rhs: Any, *, dimension_numbers: Any, precision: Any, preferred_element_type: Any
) -> list[Any]:
    _one_linear_operand("dot_general", lhs, rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    if is_undefined(lhs):
        g = _ct_in_operand_dtype(ct, lhs.aval)
        ct_lhs = _dot_operand_ct(g, rhs, lhs.aval.ndim, (tuple(lc), tuple(lb)), (tuple(rc), tuple(rb)), True, precision)
        return [ops.convert(ct_lhs, np.dtype(lhs.aval.dtype), lhs.aval.weak_type), None]
    g = _ct_in_operand_dtype(ct, rhs.aval)
    ct_rhs = _dot_operand_ct(g, lhs, rhs.aval.ndim, (tuple(rc), tuple(rb)), (tuple(lc), tuple(lb)), False, precision)
    return [None, ops.convert(ct_rhs, np.dtype(rhs.aval.dtype), rhs.aval.weak_type)]


# ---------------------------------------------------------------------------
# conv_general_dilated


def _dilated(n: int, k: int) -> int:
    return 0 if n == 0 else (n - 1) * k + 1


def _swap_first_two(spec: tuple[int, ...]) -> tuple[int, ...]:
    return (spec[1], spec[0], *spec[2:])


def _split_axis(x: Any, axis: int, groups: int) -> Any:
    """Axis ``axis`` of size ``n`` becomes two: ``groups`` (major) and ``n // groups``."""
    shape = list(ops.aval(x).shape)
    n = shape[axis]
    shape[axis : axis + 1] = [groups, n // groups]
    return ops.reshape(x, shape)


def _merge_axis(x: Any, src: int, dst: int) -> Any:
    """Remove axis ``src`` and fold it, as the major part, into the axis at
    index ``dst`` of the remaining axes."""
    a = ops.aval(x)
    rest = [d for d in range(a.ndim) if d != src]
    order = rest[:dst] + [src] + rest[dst:]
    moved = ops.transpose(x, order)
    shape = [a.shape[d] for d in rest]
    shape[dst] = shape[dst] * a.shape[src]
    return ops.reshape(moved, shape)


def _spatial(shape: Sequence[Any], spec: Sequence[int], what: str) -> list[int]:
    return [dim_as_int(shape[d], what) for d in spec[2:]]


@def_transpose(la.conv_general_dilated_p)
def _conv_transpose(ct: Any, lhs: Any, rhs: Any, **params: Any) -> list[Any]:
    _one_linear_operand("conv_general_dilated", lhs, rhs)
    if is_undefined(lhs):
        g = _ct_in_operand_dtype(ct, lhs.aval)
        out = _conv_lhs_ct(g, lhs.aval.shape, rhs, **params)
        return [ops.convert(out, np.dtype(lhs.aval.dtype), lhs.aval.weak_type), None]
    g = _ct_in_operand_dtype(ct, rhs.aval)
    out = _conv_rhs_ct(g, lhs, rhs.aval.shape, **params)
    return [None, ops.convert(out, np.dtype(rhs.aval.dtype), rhs.aval.weak_type)]


def _conv_lhs_ct(
    g: Any, lhs_shape: Sequence[Any], rhs: Any, *, window_strides: tuple[int, ...], padding: Any,
    lhs_dilation: tuple[int, ...], rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int, batch_group_count: int, precision: Any, preferred_element_type: Any,
) -> Any:  # fmt: skip
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    what = "the transpose of conv_general_dilated"
    in_sizes = _spatial(lhs_shape, lhs_spec, what)
    window = _spatial(ops.aval(rhs).shape, rhs_spec, what)
    out_sizes = _spatial(ops.aval(g).shape, out_spec, what)
    groups = feature_group_count
    if feature_group_count > 1 or batch_group_count > 1:
        # The kernel's output-feature groups move into its input features.
        n = max(feature_group_count, batch_group_count)
        rhs = _merge_axis(_split_axis(rhs, rhs_spec[0], n), rhs_spec[0], rhs_spec[1])
        groups = n
    pads = []
    for size, k, lo_hi, ld, rd, s, o in zip(in_sizes, window, padding, lhs_dilation, rhs_dilation, window_strides, out_sizes):
        lo = lo_hi[0]
        before = _dilated(k, rd) - lo - 1
        after = _dilated(size, ld) + _dilated(k, rd) - 1 - _dilated(o, s) - before
        pads.append((before, after))
    flipped = ops.rev(rhs, tuple(rhs_spec[2:]))
    out = la.conv_general_dilated_p.bind(
        g, flipped,
        window_strides=tuple(lhs_dilation), padding=tuple(pads), lhs_dilation=tuple(window_strides),
        rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=ConvDimensionNumbers(out_spec, _swap_first_two(rhs_spec), lhs_spec),
        feature_group_count=groups, batch_group_count=1, precision=precision, preferred_element_type=None,
    )  # fmt: skip
    if batch_group_count > 1:
        # The batch groups come back in the features: fold them into the batch.
        out = _merge_axis(_split_axis(out, lhs_spec[1], batch_group_count), lhs_spec[1], lhs_spec[0])
    return out


def _conv_rhs_ct(
    g: Any, lhs: Any, rhs_shape: Sequence[Any], *, window_strides: tuple[int, ...], padding: Any,
    lhs_dilation: tuple[int, ...], rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
    feature_group_count: int, batch_group_count: int, precision: Any, preferred_element_type: Any,
) -> Any:  # fmt: skip
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    what = "the transpose of conv_general_dilated"
    in_sizes = _spatial(ops.aval(lhs).shape, lhs_spec, what)
    window = _spatial(rhs_shape, rhs_spec, what)
    out_sizes = _spatial(ops.aval(g).shape, out_spec, what)
    pads = []
    for size, k, lo_hi, ld, rd, s, o in zip(in_sizes, window, padding, lhs_dilation, rhs_dilation, window_strides, out_sizes):
        lo = lo_hi[0]
        after = (_dilated(o, s) - _dilated(size, ld)) + (_dilated(k, rd) - lo - 1)
        pads.append((lo, after))
    return la.conv_general_dilated_p.bind(
        lhs, g,
        window_strides=tuple(rhs_dilation), padding=tuple(pads), lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(window_strides),
        dimension_numbers=ConvDimensionNumbers(
            _swap_first_two(lhs_spec), _swap_first_two(out_spec), _swap_first_two(rhs_spec)
        ),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        precision=precision, preferred_element_type=None,
    )  # fmt: skip
