"""``plait.random``: counter-based pseudo-random numbers (Threefry-2x32).

Keys are ``uint32[2]`` arrays.  Every function is a pure function of its key:
the same key gives the same numbers, eagerly, staged or transformed, and
``split``/``fold_in`` derive new independent keys.  The bits come from the
Threefry-2x32 block cipher (20 rounds) of Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3" (SC 2011), written here with plait's integer
primitives so every interpreter can transform it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval, registered_array_types
from plait_core.lax.calls import named_call
from plait_core.trace import Tracer, is_eager

Array = Any
KeyArray = Any

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
_U32 = dtypes.uint32


F = TypeVar("F", bound=Callable[..., Any])

_MAX_PROGRAMS = 256
"""Programs remembered per sampler (one per shape and dtype, as JAX's jit)."""


def _static_value(value: Any) -> Hashable:
    """A static argument as a dictionary key (sequences of sizes as tuples)."""
    if isinstance(value, (np.ndarray, np.generic, Tracer)) or type(value) in registered_array_types():
        raise TypeError("an array is not a static argument")
    if isinstance(value, list):
        return tuple(value)
    hash(value)
    return value  # type: ignore[no-any-return]


def _one_program(*static: str) -> Callable[[F], F]:
    """Eagerly, run the sampler as one staged call (one compiled program) per
    value of its ``static`` arguments (shape, dtype, ...), its other arguments
    (keys, bounds, probabilities) being the call's operands; otherwise (under a
    transformation, or when a static argument is not hashable) it runs inline.

    Without this, an eager sampler would compile the cipher's call plus one
    program per surrounding operation for every new shape."""

    def wrap(fun: F) -> F:
        signature = inspect.signature(fun)
        programs: dict[Hashable, Callable[..., Any]] = {}

        @functools.wraps(fun)
        def run(*args: Any, **kwargs: Any) -> Any:
            if not is_eager():
                return fun(*args, **kwargs)
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return fun(*args, **kwargs)  # the sampler's own call says what is wrong
            bound.apply_defaults()
            given = bound.arguments
            try:
                key = tuple(_static_value(given[name]) for name in static)
                program = programs.get(key)
            except TypeError:
                return fun(*args, **kwargs)
            operands = tuple(name for name in given if name not in static)
            if program is None:
                fixed = dict(zip(static, key))

                def body(*values: Any) -> Any:
                    return fun(**fixed, **dict(zip(operands, values)))

                program = named_call(body, name=f"random_{fun.__name__}")
                if len(programs) < _MAX_PROGRAMS:
                    programs[key] = program
            return program(*[given[name] for name in operands])

        return run  # type: ignore[return-value]

    return wrap


def _u32(x: Any) -> Array:
    return lax.convert_element_type(x, _U32)


def _rotate_left(x: Array, r: int) -> Array:
    return lax.bitwise_or(lax.shift_left(x, np.uint32(r)), lax.shift_right_logical(x, np.uint32(32 - r)))


def threefry_2x32(key: KeyArray, count: Array) -> Array:
    """Encrypt the ``uint32`` words of ``count`` (even length after flattening, or
    padded) under ``key``; returns ``uint32`` words of ``count``'s shape.

    The cipher's ~130 integer operations are staged once per shape and bound
    as one call (``closed_call`` named ``threefry2x32``): eager execution then
    compiles one program instead of one per operation, and jaxprs stay short."""
    _check_key(key, "threefry_2x32")
    return _threefry_call(key, count)


def _threefry_2x32(key: KeyArray, count: Array) -> Array:
    count = _u32(count)
    shape = count.shape
    flat = lax.reshape(count, (int(np.prod(shape, dtype=np.int64)),))
    n = flat.shape[0]
    odd = n % 2
    if odd:
        flat = lax.concatenate([flat, np.zeros(1, np.uint32)], 0)
    half = (n + odd) // 2
    x0 = lax.slice(flat, (0,), (half,))
    x1 = lax.slice(flat, (half,), (2 * half,))
    k0 = lax.reshape(lax.slice(key, (0,), (1,)), ())
    k1 = lax.reshape(lax.slice(key, (1,), (2,)), ())
    k2 = lax.bitwise_xor(lax.bitwise_xor(k0, k1), np.uint32(_PARITY))
    ks = (k0, k1, k2)
    x0 = lax.add(x0, k0)
    x1 = lax.add(x1, k1)
    for block in range(5):
        for r in _ROTATIONS[block % 2]:
            x0 = lax.add(x0, x1)
            x1 = lax.bitwise_xor(_rotate_left(x1, r), x0)
        x0 = lax.add(x0, ks[(block + 1) % 3])
        x1 = lax.add(lax.add(x1, ks[(block + 2) % 3]), np.uint32(block + 1))
    out = lax.concatenate([x0, x1], 0)
    if odd:
        out = lax.slice(out, (0,), (n,))
    return lax.reshape(out, shape)


_threefry_call = named_call(_threefry_2x32, name="threefry2x32")


def _check_key(key: Any, where: str) -> None:
    aval = get_aval(key, f"the key of random.{where}")
    if aval.shape != (2,) or aval.dtype != _U32:
        raise TypeError(
            f"random.{where}: expected a key (a uint32[2] array from random.key or PRNGKey), "
            f"got {aval.str_short()}"
        )


def PRNGKey(seed: Any) -> KeyArray:
    """A key from an integer seed (Python int or integer scalar array)."""
    if isinstance(seed, int) and not isinstance(seed, bool):
        s = int(seed) & 0xFFFFFFFFFFFFFFFF
        return np.array([s >> 32, s & 0xFFFFFFFF], np.uint32)
    aval = get_aval(seed, "the seed of random.PRNGKey")
    if aval.shape != () or not dtypes.is_int(aval.dtype):
        raise TypeError(f"random.PRNGKey: the seed must be an integer scalar, got {aval.str_short()}")
    low = _u32(seed)
    high = np.uint32(0)
    if aval.dtype.itemsize == 8:
        high = _u32(lax.shift_right_logical(seed, np.asarray(32, aval.dtype)))
    return lax.concatenate([lax.broadcast_in_dim(high, (1,), ()), lax.broadcast_in_dim(low, (1,), ())], 0)


def key(seed: Any) -> KeyArray:
    """A key from an integer seed (the same representation as :func:`PRNGKey`)."""
    return PRNGKey(seed)


def key_data(keys: KeyArray) -> Array:
    """The raw ``uint32`` data of a key (keys are already raw in plait)."""
    return keys


@_one_program("num")
def split(key: KeyArray, num: int = 2) -> KeyArray:
    """``num`` new independent keys, as a ``uint32[num, 2]`` array."""
    _check_key(key, "split")
    counts = lax.iota(_U32, 2 * num)
    return lax.reshape(threefry_2x32(key, counts), (num, 2))


def _row(keys: KeyArray, i: int) -> KeyArray:
    return lax.reshape(lax.slice(keys, (i, 0), (i + 1, 2)), (2,))


def fold_in(key: KeyArray, data: Any) -> KeyArray:
    """A new key determined by ``key`` and the integer ``data``."""
    _check_key(key, "fold_in")
    return threefry_2x32(key, PRNGKey(data))


def _shape(shape: Sequence[int] | int | None) -> tuple[int, ...]:
    if shape is None:
        return ()
    if isinstance(shape, int):
        return (shape,)
    return tuple(int(d) for d in shape)


@_one_program("shape", "dtype")
def bits(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Uniformly random unsigned integers of ``shape`` (``uint32`` by default)."""
    _check_key(key, "bits")
    dt = np.dtype(dtype or _U32)
    if dt not in (dtypes.uint8, dtypes.uint16, dtypes.uint32):
        raise TypeError(f"random.bits: dtype must be uint8, uint16 or uint32, got {dt}")
    shape = _shape(shape)
    n = int(np.prod(shape, dtype=np.int64))
    words = threefry_2x32(key, lax.iota(_U32, max(n, 1)))
    words = lax.slice(words, (0,), (n,))
    if dt != _U32:
        words = lax.convert_element_type(lax.shift_right_logical(words, np.uint32(32 - 8 * dt.itemsize)), dt)
    return lax.reshape(words, shape)


def _float_dtype(dtype: Any, where: str) -> np.dtype[Any]:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_float_dtype())
    if not dtypes.is_float(dt):
        raise TypeError(f"random.{where}: dtype must be a floating type, got {dt}")
    return dt


@_one_program("shape", "dtype")
def uniform(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0) -> Array:
    """Uniform floats in ``[minval, maxval)``."""
    dt = _float_dtype(dtype, "uniform")
    words = bits(key, shape)
    # 23 random mantissa bits under the exponent of 1.0 give a float in [1, 2).
    mantissa = lax.bitwise_or(lax.shift_right_logical(words, np.uint32(9)), np.uint32(0x3F800000))
    unit = lax.sub(lax.bitcast_convert_type(mantissa, dtypes.float32), np.float32(1.0))
    lo = lax.convert_element_type(minval, dtypes.float32)
    hi = lax.convert_element_type(maxval, dtypes.float32)
    value = lax.add(lax.mul(unit, lax.sub(hi, lo)), lo)
    value = lax.max(lo, value)
    return lax.convert_element_type(value, dt)


@_one_program("shape", "dtype")
def normal(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard normal floats (inverse-CDF method)."""
    dt = _float_dtype(dtype, "normal")
    tiny = np.nextafter(np.float32(-1.0), np.float32(0.0))
    u = uniform(key, shape, dtypes.float32, tiny, 1.0)
    return lax.convert_element_type(lax.mul(np.float32(np.sqrt(2.0)), lax.erf_inv(u)), dt)


@_one_program("shape", "dtype")
def truncated_normal(key: KeyArray, lower: Any, upper: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Normal floats conditioned on ``lower < x < upper`` (inverse-CDF method)."""
    dt = _float_dtype(dtype, "truncated_normal")
    sqrt2 = np.float32(np.sqrt(2.0))
    a = lax.erf(lax.div(lax.convert_element_type(lower, dtypes.float32), sqrt2))
    b = lax.erf(lax.div(lax.convert_element_type(upper, dtypes.float32), sqrt2))
    u = uniform(key, shape, dtypes.float32, a, b)
    x = lax.mul(sqrt2, lax.erf_inv(u))
    return lax.convert_element_type(x, dt)


@_one_program("shape")
def bernoulli(key: KeyArray, p: Any = 0.5, shape: Sequence[int] | None = None) -> Array:
    """Booleans that are True with probability ``p`` (broadcast to ``shape``)."""
    p_aval = get_aval(p, "p of random.bernoulli")
    out_shape = _shape(shape) if shape is not None else tuple(int(d) for d in p_aval.shape)
    u = uniform(key, out_shape)
    p32 = lax.convert_element_type(p, dtypes.float32)
    if p_aval.shape != out_shape:
        p32 = lax.broadcast_in_dim(p32, out_shape, tuple(range(len(out_shape) - p_aval.ndim, len(out_shape))))
    return lax.lt(u, p32)


@_one_program("shape", "dtype")
def randint(key: KeyArray, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Array:
    """Uniform integers in ``[minval, maxval)``.

    Two 32-bit words per value are combined as ``(hi * 2**32 + lo) mod span``
    (in wrapping ``uint32`` arithmetic), which keeps the modulo bias small
    for every span."""
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_int_dtype())
    if not dtypes.is_int(dt):
        raise TypeError(f"random.randint: dtype must be an integer type, got {dt}")
    shape = _shape(shape)
    keys = split(key)
    hi = bits(_row(keys, 0), shape)
    lo = bits(_row(keys, 1), shape)
    lo_v = lax.convert_element_type(minval, dtypes.int32)
    hi_v = lax.convert_element_type(maxval, dtypes.int32)
    span = _u32(lax.max(lax.sub(hi_v, lo_v), np.int32(1)))
    two32_mod_span = lax.rem(lax.sub(np.uint32(0), span), span)
    r = lax.add(lax.mul(lax.rem(hi, span), two32_mod_span), lax.rem(lo, span))
    r = lax.rem(r, span)
    out = lax.add(lax.convert_element_type(r, dtypes.int32), lo_v)
    return lax.convert_element_type(out, dt)


@_one_program("shape", "dtype")
def gumbel(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Gumbel samples."""
    dt = _float_dtype(dtype, "gumbel")
    tiny = np.float32(np.finfo(np.float32).tiny)
    u = uniform(key, shape, dtypes.float32, tiny, 1.0)
    return lax.convert_element_type(lax.neg(lax.log(lax.neg(lax.log(u)))), dt)


@_one_program("shape", "dtype")
def exponential(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard exponential samples."""
    dt = _float_dtype(dtype, "exponential")
    u = uniform(key, shape, dtypes.float32)
    return lax.convert_element_type(lax.neg(lax.log1p(lax.neg(u))), dt)


@_one_program("axis", "shape")
def categorical(key: KeyArray, logits: Any, axis: int = -1, shape: Sequence[int] | None = None) -> Array:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis`` (Gumbel-max)."""
    aval = get_aval(logits, "logits of random.categorical")
    ax = axis + aval.ndim if axis < 0 else axis
    if not 0 <= ax < aval.ndim:
        raise ValueError(f"random.categorical: axis {axis} is out of range for logits of shape {aval.shape}")
    batch = tuple(int(d) for i, d in enumerate(aval.shape) if i != ax)
    out_shape = _shape(shape) if shape is not None else batch
    lead = len(out_shape) - len(batch)
    full = out_shape[:lead] + tuple(int(d) for d in aval.shape[: ax]) + (int(aval.shape[ax]),) + tuple(
        int(d) for d in aval.shape[ax + 1 :]
    )
    g = gumbel(key, full, aval.dtype if dtypes.is_float(aval.dtype) else None)
    bl = lax.broadcast_in_dim(lax.convert_element_type(logits, g.dtype), full, tuple(range(lead, len(full))))
    return lax.argmax(lax.add(g, bl), lead + ax, dtypes.default_int_dtype())


def permutation(key: KeyArray, x: Any, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of ``range(x)`` (int ``x``) or of ``x``'s entries along
    ``axis`` (rows move together unless ``independent``)."""
    if isinstance(x, int) and not isinstance(x, bool):
        n = x
        idx = lax.iota(dtypes.int32, n)
        keys = bits(key, (n,))
        return lax.sort([keys, idx], dimension=0, num_keys=1)[1]
    aval = get_aval(x, "x of random.permutation")
    if aval.ndim == 0:
        raise TypeError("random.permutation: x must be an int or an array with at least one dimension")
    ax = axis + aval.ndim if axis < 0 else axis
    if independent:
        keys = bits(key, tuple(int(d) for d in aval.shape))
        return lax.sort([keys, x], dimension=ax, num_keys=1)[1]
    perm = permutation(key, int(aval.shape[ax]))
    from plait_core import numpy as pnp

    return pnp.take(x, perm, axis=ax)


def shuffle(key: KeyArray, x: Any, axis: int = 0) -> Array:
    """``x`` permuted along ``axis`` (as :func:`permutation`)."""
    return permutation(key, x, axis)


def choice(key: KeyArray, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None) -> Array:
    """Samples from ``a`` (an int ``n`` means ``arange(n)``), with or without replacement."""
    from plait_core import numpy as pnp

    n = a if isinstance(a, int) else int(get_aval(a).shape[0])
    shape = _shape(shape)
    size = int(np.prod(shape, dtype=np.int64))
    if p is not None:
        if not replace:
            g = lax.add(gumbel(key, (n,)), pnp.log(p))
            idx = lax.slice(lax.sort([lax.neg(g), lax.iota(dtypes.int32, n)], dimension=0, num_keys=1)[1], (0,), (size,))
        else:
            idx = categorical(key, pnp.log(p), shape=(size,))
    elif replace:
        idx = randint(key, (size,), 0, n)
    else:
        if size > n:
            raise ValueError(f"random.choice: cannot take {size} samples without replacement from {n}")
        idx = lax.slice(permutation(key, n), (0,), (size,))
    idx = lax.reshape(idx, shape)
    return idx if isinstance(a, int) else pnp.take(a, idx, axis=0)


__all__ = [
    "PRNGKey", "key", "key_data", "split", "fold_in", "bits", "uniform", "normal", "truncated_normal",
    "bernoulli", "randint", "gumbel", "exponential", "categorical", "permutation", "shuffle", "choice",
    "threefry_2x32",
]
