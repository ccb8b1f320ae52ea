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

Sizes may be symbolic (``grad`` inside ``mask`` or ``vmap`` over piles): the
paddings of the transposed convolutions are computed with dimensions (they
simplify to constants), and since neither ``mask`` nor piles run a kernel of
symbolic spatial size, the kernel's cotangent of an lhs of symbolic spatial
size is built tap by tap from ``dot_general`` (ungrouped convolutions only).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import def_transpose
from plait_autodiff.tangents import Zero, add_tangents
from plait_autodiff.transpose import NonlinearError, is_undefined
from plait_core import ops
from plait_core.dims import Dim, dim_as_int, is_constant_dim, simplify
from plait_core.primitives import linalg as la
from plait_core.primitives.linalg import ConvDimensionNumbers, dilated_size


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
    dot_general of the output cotangent (always the product's left operand, as
    in JAX) with the other operand over the other operand's free dims, giving
    batch dims, my free dims, then my contracting dims; then a transpose into
    the operand's layout (none for the lhs of a plain matrix product).  Keeping
    the cotangent on the left matters for speed: for a weight ``W`` in
    ``x @ W`` the product is ``ct^T x`` with the long feature axis innermost,
    which XLA's CPU matrix kernels run a few percent faster than ``x^T ct``."""
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
    dn = ((ct_other_free, tuple(other_free)), (tuple(range(nb)), tuple(other_batch)))
    product = la.dot_general_p.bind(ct, other, dimension_numbers=dn, precision=precision, preferred_element_type=None)
    free_at, contract_at = nb, nb + len(my_free)
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


def _spatial(shape: Sequence[Dim], spec: Sequence[int]) -> list[Dim]:
    return [shape[d] for d in spec[2:]]


def _int_padding(pads: Sequence[tuple[Dim, Dim]]) -> tuple[tuple[int, int], ...]:
    """Paddings computed from (possibly symbolic) sizes, which simplify to
    constants whenever the convolution's output size is a polynomial."""
    what = "the padding of the transposed convolution (the derivative of conv_general_dilated)"
    return tuple((dim_as_int(simplify(lo), what), dim_as_int(simplify(hi), what)) for lo, hi in pads)


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
    in_sizes = _spatial(lhs_shape, lhs_spec)
    window = _spatial(ops.aval(rhs).shape, rhs_spec)
    out_sizes = _spatial(ops.aval(g).shape, out_spec)
    groups = feature_group_count
    if feature_group_count > 1 or batch_group_count > 1:
        # The kernel's output-feature groups move into its input features.
        n = max(feature_group_count, batch_group_count)
        rhs = _merge_axis(_split_axis(rhs, rhs_spec[0], n), rhs_spec[0], rhs_spec[1])
        groups = n
    pads: list[tuple[Dim, Dim]] = []
    for size, k, lo_hi, ld, rd, s, o in zip(in_sizes, window, padding, lhs_dilation, rhs_dilation, window_strides, out_sizes):
        lo = lo_hi[0]
        before = dilated_size(k, rd) - lo - 1
        after = dilated_size(size, ld) + dilated_size(k, rd) - 1 - dilated_size(o, s) - before
        pads.append((before, after))
    flipped = ops.rev(rhs, tuple(rhs_spec[2:]))
    out = la.conv_general_dilated_p.bind(
        g, flipped,
        window_strides=tuple(lhs_dilation), padding=_int_padding(pads), lhs_dilation=tuple(window_strides),
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
    in_sizes = _spatial(ops.aval(lhs).shape, lhs_spec)
    if not all(is_constant_dim(d) for d in in_sizes):
        if feature_group_count > 1 or batch_group_count > 1:
            raise NotImplementedError(
                "the derivative of conv_general_dilated with respect to its kernel is not supported with "
                f"feature_group_count={feature_group_count} and batch_group_count={batch_group_count} when the lhs has "
                f"symbolic spatial sizes {tuple(in_sizes)} (under mask or vmap over piles): only ungrouped "
                "convolutions are"
            )
        return _conv_rhs_ct_by_taps(
            g, lhs, rhs_shape, window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
            rhs_dilation=rhs_dilation, dimension_numbers=dimension_numbers, precision=precision,
        )  # fmt: skip
    window = _spatial(rhs_shape, rhs_spec)
    out_sizes = _spatial(ops.aval(g).shape, out_spec)
    pads: list[tuple[Dim, Dim]] = []
    for size, k, lo_hi, ld, rd, s, o in zip(in_sizes, window, padding, lhs_dilation, rhs_dilation, window_strides, out_sizes):
        lo = lo_hi[0]
        after = (dilated_size(o, s) - dilated_size(size, ld)) + (dilated_size(k, rd) - lo - 1)
        pads.append((lo, after))
    return la.conv_general_dilated_p.bind(
        lhs, g,
        window_strides=tuple(rhs_dilation), padding=_int_padding(pads), lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(window_strides),
        dimension_numbers=ConvDimensionNumbers(
            _swap_first_two(lhs_spec), _swap_first_two(out_spec), _swap_first_two(rhs_spec)
        ),
        feature_group_count=batch_group_count, batch_group_count=feature_group_count,
        precision=precision, preferred_element_type=None,
    )  # fmt: skip


def _conv_rhs_ct_by_taps(
    g: Any, lhs: Any, rhs_shape: Sequence[Dim], *, window_strides: tuple[int, ...], padding: Any,
    lhs_dilation: tuple[int, ...], rhs_dilation: tuple[int, ...], dimension_numbers: ConvDimensionNumbers,
    precision: Any,
) -> Any:  # fmt: skip
    """The kernel's cotangent when the lhs has symbolic spatial sizes.

    The usual form convolves the lhs with the output cotangent as the kernel,
    a kernel of symbolic spatial size, which ``mask`` and piles cannot run.
    Instead each kernel tap is a product: the output cotangent placed where
    that tap reads the lhs (the lhs as the convolution sees it, dilated and
    padded; zeros elsewhere) and contracted with it over the batch and spatial
    axes, a ``dot_general`` that ``mask`` and piles zero-fill along symbolic
    axes.  The taps are then stacked into the kernel's layout."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    rank = len(lhs_spec)
    what = "the derivative of conv_general_dilated with respect to its kernel"
    config = [(0, 0, 0)] * rank
    for j, d in enumerate(lhs_spec[2:]):
        config[d] = (padding[j][0], padding[j][1], lhs_dilation[j] - 1)
    x = ops.pad(lhs, ops.const(lhs, 0), config)
    read = _spatial(ops.aval(x).shape, lhs_spec)
    out_sizes = _spatial(ops.aval(g).shape, out_spec)
    window = [dim_as_int(k, what) for k in _spatial(rhs_shape, rhs_spec)]
    in_features, out_features = rhs_shape[rhs_spec[1]], rhs_shape[rhs_spec[0]]
    dn = (((lhs_spec[0], *lhs_spec[2:]), (out_spec[0], *out_spec[2:])), ((), ()))
    zero = ops.const(g, 0)
    taps = []
    for tap in itertools.product(*(range(k) for k in window)):
        placed = [(0, 0, 0)] * rank
        for j, d in enumerate(out_spec[2:]):
            lo = tap[j] * rhs_dilation[j]
            hi = dim_as_int(simplify(read[j] - lo - dilated_size(out_sizes[j], window_strides[j])), what)
            placed[d] = (lo, hi, window_strides[j] - 1)
        shifted = ops.pad(g, zero, placed)
        product = la.dot_general_p.bind(x, shifted, dimension_numbers=dn, precision=precision, preferred_element_type=None)
        taps.append(ops.reshape(product, (1, in_features, out_features)))
    if not taps:
        return ops.full(rhs_shape, 0, ops.aval(g).dtype)
    stacked = ops.reshape(ops.concatenate(taps, 0), (*window, in_features, out_features))
    # Axes of ``stacked``: the spatial taps, input features, output features (rhs_spec's 2.., 1, 0).
    logical = [*range(2, rank), 1, 0]
    perm = [0] * rank
    for pos, which in enumerate(logical):
        perm[rhs_spec[which]] = pos
    return ops.transpose(stacked, perm)
