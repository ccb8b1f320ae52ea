"""lax's convolution conveniences over ``conv_general_dilated``, with JAX's
names and signatures: ``conv_with_general_padding``, ``conv_transpose``,
the shape helpers ``conv_shape_tuple`` / ``conv_general_shape_tuple`` /
``conv_transpose_shape_tuple``, and the ``Precision`` enum accepted by every
product's ``precision=`` argument.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from plait_core.dims import Dim
from plait_core.lax import structural as _st
from plait_core.lax.linalg import conv_dimension_numbers, conv_general_dilated, padtype_to_pads
from plait_core.lax.reductions import operand_aval
from plait_core.primitives.linalg import ConvDimensionNumbers, dilated_size

Array = Any

__all__ = [
    "Precision",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "conv_with_general_padding",
]


class Precision(enum.Enum):
    """How precisely a product (``dot``, ``dot_general``, ``conv*``,
    ``matmul``, ``einsum``) computes on accelerators.  On the CPU every
    precision computes in full float32.  ``Precision('highest')`` and the other
    aliases (``'float32'``; ``'high'``, ``'bfloat16_3x'``, ``'tensorfloat32'``;
    ``'default'``, ``'bfloat16'``, ``'fastest'``) give the matching member."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        if value is None:
            return cls.DEFAULT
        if isinstance(value, str):
            return _ALIASES.get(value.lower())
        return None

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_ALIASES = {
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
}


def conv_with_general_padding(
    lhs: Array,
    rhs: Array,
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    lhs_dilation: Sequence[int] | None,
    rhs_dilation: Sequence[int] | None,
    precision: Any = None,
    preferred_element_type: Any = None,
) -> Array:
    """:func:`conv_general_dilated` of an (N, C, spatial...) input with an
    (O, I, spatial...) kernel, with padding and both dilations given."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _transpose_padding(k: int, s: int, padding: Any) -> tuple[int, int]:
    """The (low, high) padding of the stride-dilated input of a transposed
    convolution with a window of ``k`` taps and stride ``s``, for the padding
    ``padding`` ('SAME', 'VALID' or a pair) of the forward convolution."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    else:
        low, high = k - padding[0] - 1, k - padding[1] - 1
        total = low + high
    return low, total - low


_DEFAULT_SPECS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def conv_transpose(
    lhs: Array,
    rhs: Array,
    strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers: Any = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Any = None,
    use_consistent_padding: bool = False,
) -> Array:
    """A fractionally strided ("transposed") convolution: the input is dilated
    by ``strides`` and convolved with stride 1.

    ``padding`` 'SAME' and 'VALID' describe the forward convolution this one
    transposes ('SAME' makes the spatial sizes ``in * stride``); explicit
    ``(low, high)`` pairs pad the dilated input directly, unless
    ``use_consistent_padding`` is true, when they too are the forward
    convolution's padding (PyTorch's convention).  ``dimension_numbers``
    defaults to TensorFlow's layouts (``'NHWC', 'HWIO', 'NHWC'`` in 2-D).
    ``transpose_kernel`` flips the kernel's spatial axes and swaps its input and
    output feature axes, which makes the result the gradient of the forward
    convolution with the same kernel (Keras' ``Conv2DTranspose``).
    """
    fn = "conv_transpose"
    la, ra = operand_aval(fn, lhs, "lhs"), operand_aval(fn, rhs, "rhs")
    if la.ndim != ra.ndim or la.ndim < 2:
        raise ValueError(f"lax.{fn}: lhs and rhs must have the same rank, at least 2, got shapes {la.shape} and {ra.shape}")
    if dimension_numbers is None:
        if la.ndim not in _DEFAULT_SPECS:
            raise ValueError(f"lax.{fn}: no default dimension_numbers for operands of rank {la.ndim}; pass them explicitly")
        dimension_numbers = _DEFAULT_SPECS[la.ndim]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    if len(strides) != nsp:
        raise ValueError(f"lax.{fn}: strides must have one entry per spatial dimension ({nsp}), got {tuple(strides)}")
    rdil = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    if isinstance(padding, str) and padding not in ("SAME", "VALID"):
        raise ValueError(f"lax.{fn}: unknown padding {padding!r}; expected 'SAME', 'VALID' or (low, high) pairs")
    pads: Any = padding
    if use_consistent_padding or isinstance(padding, str):
        window = [dilated_size(ra.shape[d], r) for d, r in zip(dn.rhs_spec[2:], rdil)]
        per_dim = [padding] * nsp if isinstance(padding, str) else [tuple(p) for p in padding]
        if len(per_dim) != nsp:
            raise ValueError(f"lax.{fn}: padding must have one pair per spatial dimension ({nsp}), got {padding!r}")
        pads = [_transpose_padding(int(k), int(s), p) for k, s, p in zip(window, strides, per_dim)]
    if transpose_kernel:
        spatial = tuple(dn.rhs_spec[2:])
        rhs = _st.rev(rhs, spatial)
        perm = list(range(ra.ndim))
        o, i = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[o], perm[i] = i, o
        rhs = _st.transpose(rhs, tuple(perm))
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * nsp,
        pads,
        lhs_dilation=tuple(strides),
        rhs_dilation=rdil,
        dimension_numbers=dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _out_size(size: Dim, window: Dim, stride: int) -> Dim:
    if type(size) is int and type(window) is int and size < window:
        return 0
    return (size - window) // stride + 1


def conv_shape_tuple(
    lhs_shape: Sequence[Dim],
    rhs_shape: Sequence[Dim],
    strides: Sequence[int],
    pads: str | Sequence[tuple[int, int]],
    batch_group_count: int = 1,
) -> tuple[Dim, ...]:
    """The result shape of a convolution of operands in (N, C, spatial...) and
    (O, I, spatial...) order, with ``pads`` a padding string or pairs."""
    pairs: Sequence[tuple[Dim, Dim]]
    pairs = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads) if isinstance(pads, str) else pads
    if len(pairs) != len(lhs_shape) - 2:
        raise TypeError(f"lax.conv_shape_tuple: expected {len(lhs_shape) - 2} padding pairs, got {len(pairs)}")
    spatial = []
    for size, window, stride, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pairs):
        padded = size + lo + hi
        if type(padded) is int and padded < 0:
            raise ValueError(
                f"lax.conv_shape_tuple: negative padding {pads} is larger than the spatial sizes {tuple(lhs_shape[2:])}"
            )
        spatial.append(_out_size(padded, window, stride))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (batch, rhs_shape[0], *spatial)


def _in_order(shape: Sequence[Dim], spec: Sequence[int]) -> list[Dim]:
    return [shape[d] for d in spec]


def _out_of_order(shape: Sequence[Dim], spec: Sequence[int]) -> tuple[Dim, ...]:
    out: list[Dim] = [0] * len(spec)
    for d, size in zip(spec, shape):
        out[d] = size
    return tuple(out)


def _dnums(lhs_shape: Sequence[Dim], rhs_shape: Sequence[Dim], dimension_numbers: Any) -> ConvDimensionNumbers:
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    return conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)


def conv_general_shape_tuple(
    lhs_shape: Sequence[Dim],
    rhs_shape: Sequence[Dim],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: Any,
) -> tuple[Dim, ...]:
    """The result shape of :func:`conv_general_dilated` (without dilation) for
    operands of these shapes laid out by ``dimension_numbers``."""
    dn = _dnums(lhs_shape, rhs_shape, dimension_numbers)
    out = conv_shape_tuple(_in_order(lhs_shape, dn.lhs_spec), _in_order(rhs_shape, dn.rhs_spec), window_strides, padding)
    return _out_of_order(out, dn.out_spec)


def conv_transpose_shape_tuple(
    lhs_shape: Sequence[Dim],
    rhs_shape: Sequence[Dim],
    window_strides: Sequence[int],
    padding: str | Sequence[tuple[int, int]],
    dimension_numbers: Any,
) -> tuple[Dim, ...]:
    """The result shape of :func:`conv_transpose` (without dilation) for
    operands of these shapes laid out by ``dimension_numbers``."""
    dn = _dnums(lhs_shape, rhs_shape, dimension_numbers)
    lhs, rhs = _in_order(lhs_shape, dn.lhs_spec), _in_order(rhs_shape, dn.rhs_spec)
    if isinstance(padding, str):
        pairs = [_transpose_padding(int(k), s, padding) for k, s in zip(rhs[2:], window_strides)]
    else:
        pairs = [(int(lo), int(hi)) for lo, hi in padding]
    spatial = [(i - 1) * s - k + 2 + lo + hi for i, k, s, (lo, hi) in zip(lhs[2:], rhs[2:], window_strides, pairs)]
    return _out_of_order([lhs[0], rhs[0], *spatial], dn.out_spec)
