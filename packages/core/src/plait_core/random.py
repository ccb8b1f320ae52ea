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
from typing import Any, TypeVar, cast

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval, registered_array_types
from plait_core.custom_derivatives import custom_jvp
from plait_core.lax.calls import named_call
from plait_core.lax.control_flow import while_loop
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
    return cast(Hashable, value)


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

        return cast(F, run)

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



# ---------------------------------------------------------------------------
# More distributions: closed forms of uniforms, and rejection samplers that
# run one while_loop over the whole array until every entry is accepted.


def _open_uniform(key: KeyArray, shape: Sequence[int]) -> Array:
    """float32 uniforms in ``[tiny, 1)`` (never 0, so their logarithm is finite)."""
    return uniform(key, shape, dtypes.float32, np.float32(np.finfo(np.float32).tiny), 1.0)


@_one_program("shape", "dtype")
def laplace(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Laplace samples (density ``exp(-|x|) / 2``)."""
    dt = _float_dtype(dtype, "laplace")
    low = np.nextafter(np.float32(-1.0), np.float32(0.0))
    u = uniform(key, shape, dtypes.float32, low, 1.0)
    # |u| is uniform on [0, 1) and sign(u) a fair sign: -log(1 - |u|) is exponential.
    x = lax.mul(lax.neg(lax.sign(u)), lax.log1p(lax.neg(lax.abs(u))))
    return lax.convert_element_type(x, dt)


@_one_program("shape", "dtype")
def logistic(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard logistic samples (CDF ``1 / (1 + exp(-x))``)."""
    dt = _float_dtype(dtype, "logistic")
    u = _open_uniform(key, shape)
    return lax.convert_element_type(lax.sub(lax.log(u), lax.log1p(lax.neg(u))), dt)


@_one_program("shape", "dtype")
def cauchy(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Cauchy samples (CDF ``1/2 + atan(x) / pi``)."""
    dt = _float_dtype(dtype, "cauchy")
    u = _open_uniform(key, shape)
    return lax.convert_element_type(lax.tan(lax.mul(np.float32(np.pi), lax.sub(u, np.float32(0.5)))), dt)


@_one_program("shape", "dtype")
def rademacher(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """-1 or +1 with equal probability (integers, the default int type unless ``dtype``)."""
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_int_dtype())
    if not dtypes.is_int(dt) or dtypes.is_unsigned_int(dt):
        raise TypeError(f"random.rademacher: dtype must be a signed integer type, got {dt}")
    b = lax.convert_element_type(bernoulli(key, 0.5, _shape(shape)), dt)
    return lax.sub(lax.mul(b, np.asarray(2, dt)), np.asarray(1, dt))


@_one_program("shape", "dtype")
def maxwell(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Maxwell samples: the length of a standard normal 3-vector."""
    dt = _float_dtype(dtype, "maxwell")
    shape = _shape(shape)
    z = normal(key, shape + (3,), dtypes.float32)
    return lax.convert_element_type(lax.sqrt(lax.reduce_sum(lax.mul(z, z), (len(shape),))), dt)


def _real_param(x: Any, where: str, name: str) -> tuple[Array, tuple[int, ...]]:
    """``x`` as float32 with its shape; a TypeError for a non-real argument."""
    aval = get_aval(x, f"{name} of random.{where}")
    if not (dtypes.is_float(aval.dtype) or dtypes.is_int(aval.dtype)):
        raise TypeError(f"random.{where}: {name} must be a real (integer or float) array, got {aval.str_short()}")
    return lax.convert_element_type(x, dtypes.float32), tuple(int(d) for d in aval.shape)


def _broadcast_shapes(where: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"random.{where}: shapes {', '.join(map(str, shapes))} do not broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _to_shape(x: Array, x_shape: tuple[int, ...], shape: tuple[int, ...], where: str, name: str) -> Array:
    """``x`` broadcast (NumPy rules) to exactly ``shape``; a ValueError naming ``name`` otherwise."""
    lead = len(shape) - len(x_shape)
    if lead < 0 or any(d != 1 and d != shape[lead + i] for i, d in enumerate(x_shape)):
        raise ValueError(f"random.{where}: {name} of shape {x_shape} does not broadcast to the shape {shape}")
    if x_shape == shape:
        return x
    x = lax.reshape(x, tuple(d for d in x_shape if d != 1))
    dims = tuple(lead + i for i, d in enumerate(x_shape) if d != 1)
    return lax.broadcast_in_dim(x, shape, dims)


def _params(where: str, shape: Sequence[int] | None, **named: Any) -> tuple[tuple[int, ...], list[Array]]:
    """The output shape (``shape``, or the parameters' broadcast shape) and the
    parameters as float32 arrays of that shape."""
    pairs = [(name, *_real_param(x, where, name)) for name, x in named.items()]
    out = _shape(shape) if shape is not None else _broadcast_shapes(where, *(s for _, _, s in pairs))
    return out, [_to_shape(x, s, out, where, name) for name, x, s in pairs]


def _full(like: Array, value: Any, dtype: Any = dtypes.float32) -> Array:
    """``value`` broadcast to ``like``'s shape (a broadcast, not a stored constant)."""
    return lax.broadcast_in_dim(np.asarray(value, dtype), tuple(int(d) for d in like.shape), ())


def _all_axes(x: Array) -> tuple[int, ...]:
    return tuple(range(len(x.shape)))


def _log_gamma_draw_impl(key: KeyArray, a: Array) -> Array:
    """``log`` of Gamma(a, 1) samples for float32 ``a`` (any shape).

    Marsaglia and Tsang, "A simple method for generating gamma variables"
    (ACM TOMS 2000): with ``d = a - 1/3`` and ``c = 1/sqrt(9 d)``, draw a normal
    ``z`` and uniform ``u``, set ``v = (1 + c z)**3`` and accept ``d v`` when
    ``v > 0`` and ``log u < z**2/2 + d - d v + d log v``.  Every round redraws
    the whole array from a fresh key (``fold_in`` of the round number) and
    keeps the first accepted value of each entry, so entries are independent.
    For ``a < 1`` it draws Gamma(a + 1) and multiplies by ``u**(1/a)``, in
    log space so small ``a`` does not underflow before a ratio is taken.
    ``a == 0`` gives ``-inf`` (a sample of 0), ``a == inf`` gives ``inf`` and
    negative or NaN ``a`` gives NaN (as JAX)."""
    shape = tuple(int(d) for d in a.shape)
    loop_key, boost_key = _row(split(key), 0), _row(split(key), 1)
    valid = lax.bitwise_and(lax.gt(a, np.float32(0)), lax.is_finite(a))
    safe_a = lax.select(valid, a, _full(a, 1.0))
    boost = lax.lt(safe_a, np.float32(1))
    a1 = lax.select(boost, lax.add(safe_a, np.float32(1)), safe_a)
    d = lax.sub(a1, np.float32(1.0 / 3.0))
    c = lax.rsqrt(lax.mul(np.float32(9), d))

    def cond(state: tuple[Array, Array, Array]) -> Array:
        return lax.bitwise_not(lax.reduce_and(state[2], _all_axes(state[2])))

    def body(state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        i, x, done = state
        keys = split(fold_in(loop_key, i))
        z = normal(_row(keys, 0), shape, dtypes.float32)
        u = _open_uniform(_row(keys, 1), shape)
        v = lax.add(np.float32(1), lax.mul(c, z))
        v = lax.mul(lax.mul(v, v), v)
        positive = lax.gt(v, np.float32(0))
        log_v = lax.log(lax.select(positive, v, _full(v, 1.0)))
        bound = lax.add(lax.mul(np.float32(0.5), lax.mul(z, z)), lax.mul(d, lax.add(lax.sub(np.float32(1), v), log_v)))
        ok = lax.bitwise_and(positive, lax.lt(lax.log(u), bound))
        take = lax.bitwise_and(ok, lax.bitwise_not(done))
        x = lax.select(take, lax.add(lax.log(d), log_v), x)
        return lax.add(i, np.int32(1)), x, lax.bitwise_or(done, ok)

    init = (np.int32(0), _full(a, 0.0), lax.bitwise_not(valid))
    log_x = while_loop(cond, body, init)[1]
    log_u = lax.log(_open_uniform(boost_key, shape))
    log_x = lax.select(boost, lax.add(log_x, lax.div(log_u, safe_a)), log_x)
    special = lax.select(
        lax.eq(a, np.float32(0)),
        _full(a, -np.inf),
        lax.select(lax.eq(a, np.float32(np.inf)), _full(a, np.inf), _full(a, np.nan)),
    )
    return lax.select(valid, log_x, special)


def _log_gamma_draw_jvp(key: KeyArray, primals: tuple[Array], tangents: tuple[Array]) -> Any:
    raise NotImplementedError(
        "random.gamma: derivatives with respect to the shape parameter (a, alpha, df) are not "
        "implemented (JAX's implicit reparameterisation gradient needs the derivative of the "
        "incomplete gamma function); wrap the parameter in lax.stop_gradient to treat samples as constants"
    )


_log_gamma_draw = custom_jvp(_log_gamma_draw_impl, nondiff_argnums=(0,))
_log_gamma_draw.defjvp(_log_gamma_draw_jvp)


@_one_program("shape", "dtype")
def gamma(key: KeyArray, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Gamma(a, 1) samples (Marsaglia-Tsang rejection), ``a`` broadcast to ``shape``
    (``a``'s shape by default).  ``a == 0`` gives 0, ``a == inf`` gives inf and
    ``a < 0`` or NaN gives NaN.  Differentiating with respect to ``a`` raises
    ``NotImplementedError`` (JAX's implicit gradient is not implemented)."""
    _check_key(key, "gamma")
    dt = _float_dtype(dtype, "gamma")
    _, (a32,) = _params("gamma", shape, a=a)
    return lax.convert_element_type(lax.exp(_log_gamma_draw(key, a32)), dt)


@_one_program("shape", "dtype")
def beta(key: KeyArray, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Beta(a, b) samples as ``X / (X + Y)`` of Gamma(a) and Gamma(b) draws (taken in
    log space); ``a`` and ``b`` broadcast to ``shape`` (their broadcast shape by default)."""
    _check_key(key, "beta")
    dt = _float_dtype(dtype, "beta")
    _, (a32, b32) = _params("beta", shape, a=a, b=b)
    log_x = _log_gamma_draw(_row(split(key), 0), a32)
    log_y = _log_gamma_draw(_row(split(key), 1), b32)
    top = lax.max(log_x, log_y)
    # log(X + Y) = top + log(exp(log X - top) + exp(log Y - top)); exact when one is -inf.
    log_sum = lax.add(top, lax.log(lax.add(lax.exp(lax.sub(log_x, top)), lax.exp(lax.sub(log_y, top)))))
    return lax.convert_element_type(lax.exp(lax.sub(log_x, log_sum)), dt)


@_one_program("shape", "dtype")
def dirichlet(key: KeyArray, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Dirichlet(alpha) samples over ``alpha``'s last axis (normalised Gamma draws);
    the result has shape ``shape + alpha.shape[-1:]``, ``alpha.shape[:-1]``
    broadcasting to ``shape`` (which defaults to it)."""
    _check_key(key, "dirichlet")
    dt = _float_dtype(dtype, "dirichlet")
    alpha32, a_shape = _real_param(alpha, "dirichlet", "alpha")
    if not a_shape:
        raise ValueError("random.dirichlet: alpha must have at least one dimension (the categories), got a scalar")
    batch = _shape(shape) if shape is not None else a_shape[:-1]
    full = batch + a_shape[-1:]
    log_g = _log_gamma_draw(key, _to_shape(alpha32, a_shape, full, "dirichlet", "alpha"))
    last = (len(full) - 1,)
    top = lax.broadcast_in_dim(lax.reduce_max(log_g, last), full, tuple(range(len(batch))))
    w = lax.exp(lax.sub(log_g, top))
    total = lax.broadcast_in_dim(lax.reduce_sum(w, last), full, tuple(range(len(batch))))
    return lax.convert_element_type(lax.div(w, total), dt)


@_one_program("shape", "dtype")
def chisquare(key: KeyArray, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Chi-square samples with ``df`` degrees of freedom (``2 * Gamma(df / 2)``)."""
    _check_key(key, "chisquare")
    dt = _float_dtype(dtype, "chisquare")
    _, (df32,) = _params("chisquare", shape, df=df)
    g = lax.exp(_log_gamma_draw(key, lax.mul(df32, np.float32(0.5))))
    return lax.convert_element_type(lax.mul(np.float32(2), g), dt)


@_one_program("shape", "dtype")
def t(key: KeyArray, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Student's t samples with ``df`` degrees of freedom (``Z / sqrt(V / df)``)."""
    _check_key(key, "t")
    dt = _float_dtype(dtype, "t")
    out, (df32,) = _params("t", shape, df=df)
    z = normal(_row(split(key), 0), out, dtypes.float32)
    log_half_v = _log_gamma_draw(_row(split(key), 1), lax.mul(df32, np.float32(0.5)))
    # V / df = Gamma(df / 2) / (df / 2).
    scale = lax.exp(lax.mul(np.float32(-0.5), lax.sub(log_half_v, lax.log(lax.mul(df32, np.float32(0.5))))))
    return lax.convert_element_type(lax.mul(z, scale), dt)


_POISSON_SMALL = 10.0
"""Below this mean Knuth's counting method is used, above it Hörmann's PTRS."""


def _poisson_knuth(key: KeyArray, lam: Array, active: Array) -> Array:
    """Count unit-rate exponential arrivals before time ``lam`` (exact; about
    ``lam + 1`` rounds), for the entries where ``active``."""
    shape = tuple(int(d) for d in lam.shape)

    def cond(state: tuple[Array, Array, Array, Array]) -> Array:
        return lax.bitwise_not(lax.reduce_and(state[3], _all_axes(state[3])))

    def body(state: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        i, k, time, done = state
        e = lax.neg(lax.log(_open_uniform(fold_in(key, i), shape)))
        time = lax.add(time, e)
        stop = lax.gt(time, lam)
        k = lax.select(lax.bitwise_or(done, stop), k, lax.add(k, np.int32(1)))
        return lax.add(i, np.int32(1)), k, time, lax.bitwise_or(done, stop)

    zeros = _full(lam, 0, dtypes.int32)
    init = (np.int32(0), zeros, _full(lam, 0.0), lax.bitwise_not(active))
    return while_loop(cond, body, init)[1]


def _poisson_ptrs(key: KeyArray, lam: Array, active: Array) -> Array:
    """Hörmann's transformed rejection with squeeze (PTRS), "The transformed
    rejection method for generating Poisson random variables" (Insurance:
    Mathematics and Economics 1993): exact for ``lam >= 10``, for the entries
    where ``active``."""
    shape = tuple(int(d) for d in lam.shape)
    safe = lax.select(active, lam, _full(lam, 100.0))
    log_lam = lax.log(safe)
    b = lax.add(np.float32(0.931), lax.mul(np.float32(2.53), lax.sqrt(safe)))
    a = lax.add(np.float32(-0.059), lax.mul(np.float32(0.02483), b))
    inv_alpha = lax.add(np.float32(1.1239), lax.div(np.float32(1.1328), lax.sub(b, np.float32(3.4))))
    v_r = lax.sub(np.float32(0.9277), lax.div(np.float32(3.6224), lax.sub(b, np.float32(2))))

    def cond(state: tuple[Array, Array, Array]) -> Array:
        return lax.bitwise_not(lax.reduce_and(state[2], _all_axes(state[2])))

    def body(state: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        i, k_out, done = state
        keys = split(fold_in(key, i))
        u = lax.sub(uniform(_row(keys, 0), shape, dtypes.float32), np.float32(0.5))
        v = _open_uniform(_row(keys, 1), shape)
        us = lax.sub(np.float32(0.5), lax.abs(u))
        k = lax.floor(
            lax.add(lax.mul(lax.add(lax.div(lax.mul(np.float32(2), a), us), b), u), lax.add(safe, np.float32(0.43)))
        )
        squeeze = lax.bitwise_and(lax.ge(us, np.float32(0.07)), lax.le(v, v_r))
        reject = lax.bitwise_or(
            lax.lt(k, np.float32(0)), lax.bitwise_and(lax.lt(us, np.float32(0.013)), lax.gt(v, us))
        )
        lhs = lax.add(
            lax.log(lax.mul(v, inv_alpha)), lax.neg(lax.log(lax.add(lax.div(a, lax.mul(us, us)), b)))
        )
        k_safe = lax.max(k, np.float32(0))
        rhs = lax.sub(lax.sub(lax.mul(k_safe, log_lam), safe), lax.lgamma(lax.add(k_safe, np.float32(1))))
        ok = lax.bitwise_or(squeeze, lax.bitwise_and(lax.bitwise_not(reject), lax.le(lhs, rhs)))
        take = lax.bitwise_and(ok, lax.bitwise_not(done))
        k_out = lax.select(take, lax.convert_element_type(k_safe, dtypes.int32), k_out)
        return lax.add(i, np.int32(1)), k_out, lax.bitwise_or(done, ok)

    init = (np.int32(0), _full(lam, 0, dtypes.int32), lax.bitwise_not(active))
    return while_loop(cond, body, init)[1]


@_one_program("shape", "dtype")
def poisson(key: KeyArray, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Poisson(lam) counts, ``lam`` broadcast to ``shape`` (its own shape by default).

    Exact in distribution: Knuth's counting of exponential arrivals for
    ``lam < 10`` and Hörmann's PTRS rejection above (float32 arithmetic, so
    very large means carry float32 rounding).  A negative, NaN or infinite
    ``lam`` gives -1 (JAX gives -1 for negative and NaN means)."""
    _check_key(key, "poisson")
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_int_dtype())
    if not dtypes.is_int(dt):
        raise TypeError(f"random.poisson: dtype must be an integer type, got {dt}")
    _, (lam32,) = _params("poisson", shape, lam=lam)
    valid = lax.bitwise_and(lax.ge(lam32, np.float32(0)), lax.is_finite(lam32))
    small = lax.bitwise_and(valid, lax.lt(lam32, np.float32(_POISSON_SMALL)))
    large = lax.bitwise_and(valid, lax.bitwise_not(small))
    keys = split(key)
    counts = lax.select(
        small, _poisson_knuth(_row(keys, 0), lam32, small), _poisson_ptrs(_row(keys, 1), lam32, large)
    )
    counts = lax.select(valid, counts, _full(counts, -1, dtypes.int32))
    return lax.convert_element_type(counts, dt)


__all__ = [
    "PRNGKey", "key", "key_data", "split", "fold_in", "bits", "uniform", "normal", "truncated_normal",
    "bernoulli", "randint", "gumbel", "exponential", "categorical", "permutation", "shuffle", "choice",
    "threefry_2x32", "laplace", "logistic", "cauchy", "rademacher", "maxwell", "gamma", "beta", "dirichlet",
    "chisquare", "t", "poisson",
]
