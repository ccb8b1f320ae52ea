"""More of ``jax.lax``, as compositions of existing operations: array builders
(``full_like``, ``empty``, ``tile``, ``split``, ``stack``, ``unstack``,
``broadcast_to_rank``, ``broadcast_like``, ``broadcast_shapes``, ``shape_as_value``),
``dtype``, bit counts (``population_count``, ``clz``), ``scatter_sub``,
``scatter_apply``, ``index_take``, ``approx_max_k``/``approx_min_k`` (exact on
CPU, as JAX's CPU fallback), ``ragged_dot``, ``platform_dependent``, ``composite``,
the special functions JAX also exposes in ``lax`` (``erfc``, ``igamma``,
``igammac``, ``betainc``, ``polygamma``, ``zeta``, ``bessel_i0e``, ``bessel_i1e``),
and the type aliases ``DotDimensionNumbers``, ``ConvGeneralDilatedDimensionNumbers``
and ``PrecisionLike``.

They are built on ``plait.numpy`` and ``plait.scipy.special``, which are built
on ``lax``: so they live above both (:mod:`plait_core.lax_compositions`), and
enter the ``lax`` namespace when core is imported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np

from plait_core import dtypes
from plait_core import numpy as pnp
from plait_core.bessel import bessel_i0e as _i0e
from plait_core.bessel import bessel_i1e as _i1e
from plait_core.lax.convolution import Precision
from plait_core.lax.elementwise import bitcast_convert_type
from plait_core.lax.linalg import conv_general_dilated
from plait_core.lax.reductions import top_k
from plait_core.lax.structural import scatter, scatter_add
from plait_core.primitives.indexing_prims import ScatterDimensionNumbers
from plait_core.primitives.linalg import ConvDimensionNumbers
from plait_core.scipy import special as _special

Array = Any

DotDimensionNumbers: TypeAlias = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]
"""``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))`` of ``dot_general``."""
ConvGeneralDilatedDimensionNumbers: TypeAlias = tuple[str, str, str] | ConvDimensionNumbers | None
"""The ``dimension_numbers`` argument of ``conv_general_dilated``."""
PrecisionLike: TypeAlias = str | Precision | tuple[str, str] | tuple[Precision, Precision] | None
"""What ``precision=`` accepts."""


def dtype(x: Any) -> np.dtype[Any]:
    """The canonical dtype of a value or dtype-like (64-bit narrowed when x64 is off)."""
    if isinstance(x, (type, str, np.dtype)):
        return dtypes.canonicalize_dtype(np.dtype(x))
    return dtypes.canonicalize_dtype(pnp.result_type(x))


def full_like(x: Array, fill_value: Array, dtype: Any = None, shape: Sequence[int] | None = None,
              sharding: Any = None) -> Array:
    """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``."""
    if sharding is not None:
        raise NotImplementedError("lax.full_like: sharding= is not supported; use plait.device_put")
    return pnp.full_like(x, fill_value, dtype, shape)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Array:
    """An array of ``shape`` and ``dtype`` whose values are unspecified (zeros here)."""
    if out_sharding is not None:
        raise NotImplementedError("lax.empty: out_sharding= is not supported")
    return pnp.zeros(tuple(shape), dtype)


def tile(operand: Array, reps: Sequence[int]) -> Array:
    """``operand`` repeated ``reps[i]`` times along axis ``i`` (``len(reps)`` must be its rank)."""
    x = pnp.asarray(operand)
    if len(reps) != x.ndim:
        raise ValueError(f"lax.tile: reps has {len(reps)} entries for an operand of rank {x.ndim}")
    return pnp.tile(x, tuple(reps))


def split(operand: Array, sizes: Sequence[int], axis: int = 0) -> list[Array]:
    """Cut ``operand`` along ``axis`` into pieces of the given sizes (which must sum to its length)."""
    x = pnp.asarray(operand)
    if sum(sizes) != x.shape[axis] or any(s < 0 for s in sizes):
        raise ValueError(f"lax.split: sizes {tuple(sizes)} must be non-negative and sum to {x.shape[axis]}")
    cuts = np.cumsum(sizes)[:-1].tolist()
    return list(pnp.split(x, cuts, axis=axis))


def stack(operands: Sequence[Array], axis: int = 0) -> Array:
    """Stack arrays of one shape along a new ``axis``."""
    return pnp.stack(list(operands), axis=axis)


def unstack(x: Array, axis: int = 0) -> tuple[Array, ...]:
    """The slices of ``x`` along ``axis``."""
    return pnp.unstack(x, axis=axis)


def broadcast_to_rank(x: Array, rank: int) -> Array:
    """``x`` with leading axes of size 1 added up to ``rank``."""
    a = pnp.asarray(x)
    return pnp.reshape(a, (1,) * max(rank - a.ndim, 0) + tuple(a.shape))


def broadcast_like(arr: Array, like_arr: Array) -> Array:
    """``arr`` broadcast to the shape of ``like_arr``."""
    return pnp.broadcast_to(arr, pnp.shape(like_arr))


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The NumPy broadcast of shapes (a ``ValueError`` if they do not broadcast)."""
    return tuple(int(d) for d in pnp.broadcast_shapes(*[tuple(s) for s in shapes]))


def shape_as_value(shape: Sequence[int]) -> Array:
    """The dimensions of ``shape`` as an int32 array."""
    return pnp.asarray(np.asarray(tuple(shape), np.int32))


def _check_int(name: str, x: Array) -> tuple[Array, np.dtype[Any]]:
    a = pnp.asarray(x)
    dt = np.dtype(a.dtype)
    if not dtypes.is_int(dt):
        raise TypeError(f"lax.{name}: the operand must be an integer array, got {dt}")
    return a, dt


def population_count(x: Array) -> Array:
    """The number of 1 bits of each integer (in two's complement), in ``x``'s dtype."""
    a, dt = _check_int("population_count", x)
    ux = a.astype(np.dtype(f"uint{dt.itemsize * 8}"))
    count = pnp.zeros(a.shape, ux.dtype)
    for i in range(dt.itemsize * 8):
        count = count + ((ux >> i) & 1)
    return count.astype(dt)


def clz(x: Array) -> Array:
    """The number of leading zero bits of each integer, in ``x``'s dtype."""
    a, dt = _check_int("clz", x)
    bits = dt.itemsize * 8
    ux = a.astype(np.dtype(f"uint{bits}"))
    count = pnp.zeros(a.shape, np.int32)
    seen = pnp.zeros(a.shape, bool)
    for i in range(bits - 1, -1, -1):
        seen = seen | (((ux >> i) & 1) == 1)
        count = count + (~seen).astype(np.int32)
    return count.astype(dt)


def scatter_sub(operand: Array, scatter_indices: Array, updates: Array,
                dimension_numbers: ScatterDimensionNumbers, *, indices_are_sorted: bool = False,
                unique_indices: bool = False, mode: Any = None) -> Array:
    """``scatter_add`` of ``-updates``."""
    return scatter_add(operand, scatter_indices, -pnp.asarray(updates), dimension_numbers,
                       indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)


def scatter_apply(operand: Array, scatter_indices: Array, func: Callable[[Array], Array],
                  dimension_numbers: ScatterDimensionNumbers, *, update_shape: Sequence[int] = (),
                  indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Array:
    """``operand`` with ``func`` applied to the entries the scatter addresses (each
    once, whatever the number of times it is addressed)."""
    x = pnp.asarray(operand)
    count_shape = tuple(update_shape) if update_shape else pnp.shape(scatter_indices)[:-1]
    hit = scatter(pnp.zeros(x.shape, bool), scatter_indices, pnp.ones(count_shape, bool), dimension_numbers,
                  indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode)
    return pnp.where(hit, func(x), x)


def index_take(src: Array, idxs: Sequence[Array], axes: Sequence[int]) -> Array:
    """``src`` gathered at the index arrays ``idxs`` along ``axes`` (one array per
    axis, broadcast together); the other axes are kept whole."""
    index: list[Any] = [slice(None)] * pnp.ndim(src)
    for ax, ix in zip(axes, idxs):
        index[ax] = ix
    return pnp.asarray(src)[tuple(index)]


def _top(operand: Array, k: int, reduction_dimension: int, sign: int) -> tuple[Array, Array]:
    x = pnp.asarray(operand)
    dim = reduction_dimension % x.ndim
    moved = pnp.moveaxis(x, dim, -1)
    values, indices = top_k(moved * sign if sign < 0 else moved, k)
    if sign < 0:
        values = -values
    return pnp.moveaxis(values, -1, dim), pnp.moveaxis(indices, -1, dim)


def approx_max_k(operand: Array, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Array, Array]:
    """The ``k`` largest values along ``reduction_dimension`` and their indices.  On
    CPU JAX computes these exactly; so does plait (``recall_target`` is met at 1)."""
    return _top(operand, k, reduction_dimension, 1)


def approx_min_k(operand: Array, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True) -> tuple[Array, Array]:
    """The ``k`` smallest values along ``reduction_dimension`` and their indices (exact)."""
    return _top(operand, k, reduction_dimension, -1)


def ragged_dot(lhs: Array, rhs: Array, group_sizes: Array, precision: Any = None,
               preferred_element_type: Any = None, group_offset: Array | None = None,
               out_sharding: Any = None) -> Array:
    """Grouped matrix product: rows of ``lhs`` (``[m, k]``) are split into consecutive
    groups of ``group_sizes`` (``[g]``) and group ``i`` is multiplied by ``rhs[i]``
    (``[g, k, n]``); rows past the groups give 0."""
    if group_offset is not None or out_sharding is not None:
        raise NotImplementedError("lax.ragged_dot: group_offset= and out_sharding= are not supported")
    a, b = pnp.asarray(lhs), pnp.asarray(rhs)
    if a.ndim != 2 or b.ndim != 3 or a.shape[1] != b.shape[1]:
        raise TypeError(f"lax.ragged_dot: expected lhs [m, k] and rhs [g, k, n], got {a.shape} and {b.shape}")
    ends = pnp.cumsum(pnp.asarray(group_sizes))
    starts = ends - pnp.asarray(group_sizes)
    rows = pnp.arange(a.shape[0])
    member = (rows[None, :] >= starts[:, None]) & (rows[None, :] < ends[:, None])  # [g, m]
    per_group = pnp.einsum("mk,gkn->gmn", a, b, precision=precision, preferred_element_type=preferred_element_type)
    out = pnp.sum(pnp.where(member[:, :, None], per_group, 0), axis=0)
    return out.astype(preferred_element_type) if preferred_element_type is not None else out


def platform_dependent(*args: Any, default: Callable[..., Any] | None = None,
                       **per_platform: Callable[..., Any]) -> Any:
    """Call the branch for the platform the program runs on (plait runs on ``cpu``),
    or ``default``; an error if there is neither."""
    branch = per_platform.get("cpu", default)
    if branch is None:
        raise NotImplementedError(
            f"lax.platform_dependent: no branch for 'cpu' and no default (branches: {sorted(per_platform)})"
        )
    return branch(*args)


def composite(decomposition: Callable[..., Any], name: str, version: int = 0) -> Callable[..., Any]:
    """Mark ``decomposition`` as a named composite operation; calling the result
    computes ``decomposition`` (plait lowers its operations directly)."""
    if not isinstance(name, str):
        raise TypeError(f"lax.composite: name must be a string, got {type(name).__name__}")

    def call(*args: Any, **kwargs: Any) -> Any:
        return decomposition(*args, **kwargs)

    call.__name__ = name
    call.__doc__ = decomposition.__doc__
    return call


def erfc(x: Array) -> Array:
    """The complementary error function (floats only)."""
    return _special.erfc(x)


def igamma(a: Array, x: Array) -> Array:
    """The regularised lower incomplete gamma function ``P(a, x)``."""
    return _special.gammainc(a, x)


def igammac(a: Array, x: Array) -> Array:
    """The regularised upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
    return _special.gammaincc(a, x)


def betainc(a: Array, b: Array, x: Array) -> Array:
    """The regularised incomplete beta function ``I_x(a, b)``."""
    return _special.betainc(a, b, x)


def polygamma(m: Array, x: Array) -> Array:
    """The ``m``-th derivative of the digamma function."""
    return _special.polygamma(m, x)


def zeta(x: Array, q: Array) -> Array:
    """The Hurwitz zeta function ``sum_k (k + q)**-x``."""
    return _special.zeta(x, q)


def bessel_i0e(x: Array) -> Array:
    """``exp(-|x|) I0(x)``."""
    return _i0e(pnp.asarray(x))


def bessel_i1e(x: Array) -> Array:
    """``exp(-|x|) I1(x)``."""
    return _i1e(pnp.asarray(x))


def mulhi(x: Array, y: Array, /) -> Array:
    """The high half of the double-width product of integers of one dtype (signed
    or unsigned), computed with half-width pieces."""
    a, dt = _check_int("mulhi", x)
    b = pnp.asarray(y)
    if np.dtype(b.dtype) != dt:
        raise TypeError(f"lax.mulhi: both operands must have one dtype, got {dt} and {b.dtype}")
    bits = dt.itemsize * 8
    udt = np.dtype(f"uint{bits}")
    ua, ub = a.astype(udt), b.astype(udt)
    half = bits // 2
    mask = udt.type((1 << half) - 1)
    al, ah, bl, bh = ua & mask, ua >> half, ub & mask, ub >> half
    t = al * bl
    k = t >> half
    t = ah * bl + k
    w1, w2 = t & mask, t >> half
    t = al * bh + w1
    hi = ah * bh + w2 + (t >> half)
    if dtypes.is_signed_int(dt):
        hi = hi - pnp.where(a < 0, ub, udt.type(0)) - pnp.where(b < 0, ua, udt.type(0))
    return hi.astype(dt)


def reduce_xor(operand: Array, axes: Sequence[int]) -> Array:
    """The bitwise exclusive-or of ``operand``'s entries over ``axes`` (booleans: odd count of true)."""
    x = pnp.asarray(operand)
    dt = np.dtype(x.dtype)
    axes_t = tuple(axes)
    if dt == np.bool_:
        return (pnp.sum(x.astype(np.int32), axis=axes_t) % 2) == 1
    a, _ = _check_int("reduce_xor", x)
    bits = dt.itemsize * 8
    udt = np.dtype(f"uint{bits}")
    ua = a.astype(udt)
    out = pnp.zeros(tuple(d for i, d in enumerate(x.shape) if i not in axes_t), udt)
    for i in range(bits):
        parity = (pnp.sum(((ua >> i) & 1).astype(np.int32), axis=axes_t) % 2).astype(udt)
        out = out | (parity << i)
    return out.astype(dt)


def conv_general_permutations(dimension_numbers: tuple[str, str, str]) -> tuple[tuple[int, ...], ...]:
    """For string dimension numbers ``(lhs, rhs, out)``, the permutations that bring
    each operand to ``(batch, feature, spatial...)`` order (``(out, in, spatial...)``
    for the kernel), spatial dimensions in the kernel spec's order."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if not all(isinstance(s, str) for s in dimension_numbers):
        raise TypeError(f"lax.conv_general_permutations: expected three strings, got {dimension_numbers!r}")
    for spec, chars in ((lhs_spec, "NC"), (rhs_spec, "OI"), (out_spec, "NC")):
        if len(set(spec)) != len(spec) or not set(chars) <= set(spec):
            raise TypeError(f"lax.conv_general_permutations: invalid spec {spec!r} (needs {chars[0]} and {chars[1]})")
    if not len(lhs_spec) == len(rhs_spec) == len(out_spec):
        raise TypeError(f"lax.conv_general_permutations: specs of different ranks: {dimension_numbers!r}")
    spatial = [c for c in rhs_spec if c not in "OI"]
    if set(spatial) != set(lhs_spec) - set("NC") or set(spatial) != set(out_spec) - set("NC"):
        raise TypeError(f"lax.conv_general_permutations: spatial dimensions differ: {dimension_numbers!r}")

    def perm(spec: str, first: str, second: str) -> tuple[int, ...]:
        return (spec.index(first), spec.index(second), *(spec.index(c) for c in spatial))

    return perm(lhs_spec, "N", "C"), perm(rhs_spec, "O", "I"), perm(out_spec, "N", "C")


def conv_general_dilated_patches(lhs: Array, filter_shape: Sequence[int], window_strides: Sequence[int],
                                 padding: Any, lhs_dilation: Sequence[int] | None = None,
                                 rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                                 precision: Any = None, preferred_element_type: Any = None) -> Array:
    """The patches a convolution with a ``filter_shape`` window would see: the feature
    dimension of the result holds, for each input channel ``c`` and window position
    ``p`` (row-major), the entry ``c * prod(filter_shape) + p``."""
    x = pnp.asarray(lhs)
    filt = tuple(int(d) for d in filter_shape)
    n_spatial = x.ndim - 2
    if len(filt) != n_spatial:
        raise TypeError(f"lax.conv_general_dilated_patches: filter_shape has {len(filt)} dimensions for "
                        f"{n_spatial} spatial dimensions")
    dimension_numbers = _dimension_strings(dimension_numbers)
    if dimension_numbers is None:
        lhs_spec = "NC" + "".join("HWDXYZ"[i] for i in range(n_spatial))
        dimension_numbers = (lhs_spec, "OI" + lhs_spec[2:], lhs_spec)
    lhs_perm = conv_general_permutations(dimension_numbers)[0] if isinstance(dimension_numbers[0], str) else None
    channels = int(x.shape[lhs_perm[1]]) if lhs_perm is not None else int(x.shape[1])
    size = int(np.prod(filt))
    eye = np.eye(size, dtype=np.dtype(x.dtype)).reshape(size, 1, *filt)
    kernel = np.tile(eye, (channels, 1) + (1,) * n_spatial)  # (O = C * size, I = 1, *filter) in OI... order
    if isinstance(dimension_numbers[1], str):
        rhs_perm = conv_general_permutations(dimension_numbers)[1]
        kernel = np.transpose(kernel, np.argsort(rhs_perm))
    return conv_general_dilated(x, pnp.asarray(kernel), tuple(window_strides), padding, lhs_dilation, rhs_dilation,
                                dimension_numbers, feature_group_count=channels, precision=precision,
                                preferred_element_type=preferred_element_type)


_FLOAT_LAYOUT = {2: (10, 5), 4: (23, 8), 8: (52, 11)}  # itemsize -> (mantissa bits, exponent bits)


def reduce_precision(operand: Array, exponent_bits: int, mantissa_bits: int) -> Array:
    """``operand`` rounded (to nearest, ties to even) to a float format with
    ``mantissa_bits`` and ``exponent_bits``, kept in its own dtype: values beyond
    the format's range become infinities, values below its smallest normal become
    (signed) zeros, NaN stays NaN."""

    x = pnp.asarray(operand)
    dt = np.dtype(x.dtype)
    if not dtypes.is_float(dt):
        raise TypeError(f"lax.reduce_precision: the operand must be a float array, got {dt}")
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(f"lax.reduce_precision: need exponent_bits >= 1 and mantissa_bits >= 0, "
                         f"got {exponent_bits} and {mantissa_bits}")
    src_mantissa, src_exponent = (7, 8) if dt == dtypes.bfloat16 else _FLOAT_LAYOUT[dt.itemsize]
    bits = dt.itemsize * 8
    udt = np.dtype(f"uint{bits}")

    def u(v: int) -> Any:
        return udt.type(v)

    x_bits = bitcast_convert_type(x, udt)
    if mantissa_bits < src_mantissa:
        shift = src_mantissa - mantissa_bits
        last = u(1 << shift)
        bias = u((1 << (shift - 1)) - 1)
        last_bit = (x_bits & last) >> u(shift)
        x_bits = (x_bits + last_bit + bias) & ~u((1 << shift) - 1)
    if exponent_bits < src_exponent:
        exp_mask = u(((1 << src_exponent) - 1) << src_mantissa)
        sign_mask = u(1 << (bits - 1))
        src_bias = (1 << (src_exponent - 1)) - 1
        reduced_bias = (1 << (exponent_bits - 1)) - 1
        exponent = x_bits & exp_mask
        overflow = exponent > u((src_bias + reduced_bias) << src_mantissa)
        underflow = exponent <= u((src_bias - reduced_bias) << src_mantissa)
        signed_zero = x_bits & sign_mask
        x_bits = pnp.where(overflow, signed_zero | exp_mask, pnp.where(underflow, signed_zero, x_bits))
    out = bitcast_convert_type(x_bits, dt)
    return pnp.where(pnp.isnan(x), x, out)


def _dimension_strings(dimension_numbers: Any) -> Any:
    """``dimension_numbers`` as three strings when it is a :class:`ConvDimensionNumbers`
    (spatial dimension ``i`` of each spec named by the same letter), else as given."""
    if not isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers

    def spec(dims: Sequence[int], first: str, second: str) -> str:
        names = [""] * len(dims)
        names[dims[0]], names[dims[1]] = first, second
        for i, d in enumerate(dims[2:]):
            names[d] = "HWDXYZ"[i]
        return "".join(names)

    lhs, rhs, out = dimension_numbers
    return (spec(lhs, "N", "C"), spec(rhs, "O", "I"), spec(out, "N", "C"))


def conv_general_dilated_local(lhs: Array, rhs: Array, window_strides: Sequence[int], padding: Any,
                               filter_shape: Sequence[int], lhs_dilation: Sequence[int] | None = None,
                               rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                               precision: Any = None) -> Array:
    """A convolution whose weights are not shared across positions: ``rhs`` holds,
    for each output position, an ``(out features, in features * prod(filter_shape))``
    matrix (in the kernel layout, the spatial axes being the output's), applied to
    the patches of :func:`conv_general_dilated_patches`."""

    x = pnp.asarray(lhs)
    w = pnp.asarray(rhs)
    n_spatial = x.ndim - 2
    dimension_numbers = _dimension_strings(dimension_numbers)
    if dimension_numbers is None:
        spec = "NC" + "".join("HWDXYZ"[i] for i in range(n_spatial))
        dimension_numbers = (spec, "OI" + spec[2:], spec)
    if not all(isinstance(d, str) for d in dimension_numbers):
        raise TypeError(
            "lax.conv_general_dilated_local: dimension_numbers must be three strings, a ConvDimensionNumbers or None"
        )
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
                                           dimension_numbers, precision)
    p = pnp.transpose(patches, lhs_perm)  # (N, C*K, *out spatial)
    k = pnp.transpose(w, rhs_perm)  # (O, C*K, *out spatial)
    out = pnp.sum(p[:, None] * k[None], axis=2)  # (N, O, *out spatial)
    return pnp.transpose(out, tuple(int(i) for i in np.argsort(out_perm)))


__all__ = [
    "ConvGeneralDilatedDimensionNumbers", "DotDimensionNumbers", "PrecisionLike", "approx_max_k", "approx_min_k",
    "bessel_i0e", "bessel_i1e", "betainc", "broadcast_like", "broadcast_shapes", "broadcast_to_rank", "clz",
    "conv_general_dilated_local", "conv_general_dilated_patches", "conv_general_permutations", "mulhi", "reduce_precision", "reduce_xor",
    "composite", "dtype", "empty", "erfc", "full_like", "igamma", "igammac", "index_take",
    "platform_dependent", "polygamma", "population_count", "ragged_dot", "scatter_apply", "scatter_sub",
    "shape_as_value", "split", "stack", "tile", "unstack", "zeta",
]
