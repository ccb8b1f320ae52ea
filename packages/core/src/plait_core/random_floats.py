"""Key data to floats, as JAX does it: uniforms from a float's mantissa bits,
normals by the inverse error function, and splitting into a list of keys.

Each helper takes key data ``uint32[*batch, 2]`` and draws ``shape`` values
from every key, giving ``*batch, *shape`` (the samplers use one key; the
per-entry loops of ``gamma`` use one key per entry)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core import numpy as pnp
from plait_core.lax import _lenient
from plait_core.prng import random_bits, split_data

Array = Any

_UINT: dict[int, np.dtype[Any]] = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def const(value: Any, dtype: Any) -> Array:
    """``value`` as a NumPy scalar of ``dtype``."""
    return np.asarray(value, dtype)


def to_dtype(x: Any, dtype: Any, shape: tuple[int, ...] | None = None) -> Array:
    """``x`` converted to ``dtype`` and broadcast (NumPy rules) to ``shape``."""
    x = lax.convert_element_type(x, dtype)
    if shape is None or tuple(x.shape) == shape:
        return x
    return pnp.broadcast_to(x, shape)


def split_keys(data: Array, num: int = 2) -> list[Array]:
    """``num`` keys split from each key of ``data`` (each of ``data``'s shape)."""
    keys = split_data(data, (num,))
    axis = len(data.shape) - 1
    return [lax.index_in_dim(keys, i, axis, keepdims=False) for i in range(num)]


def uniform_floats(data: Array, shape: tuple[int, ...], dtype: Any, minval: Any, maxval: Any) -> Array:
    """Uniform floats in ``[minval, maxval)``: the top mantissa bits of random
    words under the exponent of 1.0 give a float in ``[1, 2)``, less 1, scaled."""
    full = (*tuple(data.shape)[:-1], *shape)
    lo = to_dtype(minval, dtype, full)
    hi = to_dtype(maxval, dtype, full)
    info = dtypes.finfo(dtype)
    nbits, nmant = int(info.bits), int(info.nmant)
    rng_bits = 8 if nmant < 8 else nbits
    uint = _UINT[nbits]
    words = random_bits(data, rng_bits, shape)
    if rng_bits != nbits:
        words = lax.convert_element_type(words, uint)
    one = np.array(1.0, dtype).view(uint)
    mantissa = _lenient.bitwise_or(_lenient.shift_right_logical(words, const(rng_bits - nmant, uint)), one)
    floats = _lenient.sub(lax.bitcast_convert_type(mantissa, dtype), const(1.0, dtype))
    return _lenient.max(lo, _lenient.add(_lenient.mul(floats, _lenient.sub(hi, lo)), lo))


def normal_floats(data: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    """Standard normal floats: ``sqrt(2) erfinv(u)`` for ``u`` uniform in ``(-1, 1)``."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform_floats(data, shape, dtype, lo, 1.0)
    return _lenient.mul(const(np.sqrt(2), dtype), lax.erf_inv(u))


def exponential_floats(data: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    """Standard exponential floats ``-log1p(-u)``."""
    u = uniform_floats(data, shape, dtype, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))


def _u32(value: int) -> Array:
    return np.uint32(value)


def count_leading_zeros(x: Array) -> Array:
    """The number of leading zero bits of each ``uint32`` of ``x`` (32 for 0):
    smear the highest set bit rightwards, then count the set bits."""
    for s in (1, 2, 4, 8, 16):
        x = _lenient.bitwise_or(x, _lenient.shift_right_logical(x, _u32(s)))
    v = _lenient.sub(x, _lenient.bitwise_and(_lenient.shift_right_logical(x, _u32(1)), _u32(0x55555555)))
    v = _lenient.add(_lenient.bitwise_and(v, _u32(0x33333333)), _lenient.bitwise_and(_lenient.shift_right_logical(v, _u32(2)), _u32(0x33333333)))
    v = _lenient.bitwise_and(_lenient.add(v, _lenient.shift_right_logical(v, _u32(4))), _u32(0x0F0F0F0F))
    ones = _lenient.shift_right_logical(_lenient.mul(v, _u32(0x01010101)), _u32(24))
    return _lenient.sub(_u32(32), ones)


def _float32_of_fraction(hi: Array, lo: Array) -> Array:
    """The float32 nearest below the 64-bit binary fraction ``0.hi lo`` (its
    leading one found with :func:`count_leading_zeros`, the next 23 bits kept)."""
    hi_clz = count_leading_zeros(hi)
    lo_clz = count_leading_zeros(lo)
    hi_empty = _lenient.eq(hi_clz, _u32(32))
    top = _lenient.shift_left(hi, hi_clz)
    below = _lenient.select(hi_empty, _lenient.shift_left(lo, lo_clz), _lenient.shift_right_logical(lo, _lenient.sub(_u32(32), hi_clz)))
    mantissa = _lenient.shift_right_logical(_lenient.bitwise_or(top, below), _u32(8))
    mantissa = _lenient.bitwise_and(mantissa, _u32((1 << 23) - 1))
    zeros = _lenient.select(hi_empty, _lenient.add(_u32(32), lo_clz), hi_clz)
    exponent = _lenient.shift_left(_lenient.sub(_u32(126), zeros), _u32(23))
    exponent = _lenient.bitwise_and(exponent, _u32((1 << 30) - (1 << 22)))
    return lax.bitcast_convert_type(_lenient.bitwise_or(exponent, mantissa), dtypes.float32)


def gumbel_highest_float32(data: Array, shape: tuple[int, ...]) -> Array:
    """float32 Gumbel samples from 64 random bits each (JAX's ``mode='highest'``):
    a 64-bit uniform ``u`` below 1/2 gives ``-log(-log1p(-u))``, otherwise the
    bits are negated (``1 - u``, exact) and ``-log(-log(1 - u))`` is taken, so
    both tails keep full float32 resolution."""
    both = random_bits(data, 32, (2, *shape))
    hi = lax.index_in_dim(both, 0, 0, keepdims=False)
    lo = lax.index_in_dim(both, 1, 0, keepdims=False)
    not_hi, not_lo = lax.bitwise_not(hi), lax.bitwise_not(lo)
    carry = lax.convert_element_type(_lenient.eq(not_lo, _u32(0xFFFFFFFF)), dtypes.uint32)
    neg_hi, neg_lo = _lenient.add(not_hi, carry), _lenient.add(not_lo, _u32(1))
    small = _lenient.lt(hi, _u32(1 << 31))
    x = _float32_of_fraction(_lenient.select(small, hi, neg_hi), _lenient.select(small, lo, neg_lo))
    from_small = lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    from_large = lax.neg(lax.log(lax.neg(lax.log(x))))
    return _lenient.select(small, from_small, from_large)
