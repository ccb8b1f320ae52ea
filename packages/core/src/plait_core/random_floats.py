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
    mantissa = lax.bitwise_or(lax.shift_right_logical(words, const(rng_bits - nmant, uint)), one)
    floats = lax.sub(lax.bitcast_convert_type(mantissa, dtype), const(1.0, dtype))
    return lax.max(lo, lax.add(lax.mul(floats, lax.sub(hi, lo)), lo))


def normal_floats(data: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    """Standard normal floats: ``sqrt(2) erfinv(u)`` for ``u`` uniform in ``(-1, 1)``."""
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype))
    u = uniform_floats(data, shape, dtype, lo, 1.0)
    return lax.mul(const(np.sqrt(2), dtype), lax.erf_inv(u))


def exponential_floats(data: Array, shape: tuple[int, ...], dtype: Any) -> Array:
    """Standard exponential floats ``-log1p(-u)``."""
    u = uniform_floats(data, shape, dtype, 0.0, 1.0)
    return lax.neg(lax.log1p(lax.neg(u)))
