"""``plait.random``: JAX's counter-based pseudo-random numbers, bit for bit.

Every function is a pure function of its key: the same key gives the same
numbers as JAX 0.10.2 (Threefry-2x32 with JAX's default partitionable layout,
and JAX's transformations of the bits into each distribution), eagerly,
staged or transformed.  Keys are either typed (``random.key(seed)``, a
scalar key array; see :mod:`plait_core.prng`) or raw ``uint32[2]`` arrays
(``random.PRNGKey(seed)``); functions return keys in the form they were given.
Like JAX, samplers take a single key (``vmap`` maps over arrays of keys).

Samples of ``gamma`` and the distributions built on it (``loggamma``,
``beta``, ``dirichlet``, ``chisquare``, ``f``, ``t``, ``generalized_normal``)
are differentiable in their shape parameters (implicit reparameterisation,
as JAX).  ``random.clone`` returns its
key (plait has no key-reuse checker).  Only the ``threefry2x32``
implementation exists (``impl=`` / ``dtype=`` naming another is a ValueError).

Known deviation: under XLA, ``maxwell`` and ``double_sided_maxwell`` can differ
from JAX's in the last bit (XLA sums the three squares differently in the two
programs); every other sampler is bit for bit (``tests/random_cases.py``).
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar, cast

import numpy as np

from plait_core import dtypes, lax
from plait_core import numpy as pnp
from plait_core.abstract import get_aval, registered_array_types
from plait_core.config import config
from plait_core.explicit_sharding import with_out_sharding
from plait_core.lax import _lenient
from plait_core.lax.calls import named_call
from plait_core.prng import (
    IMPL_NAME,
    KEY_DTYPE,
    KeyDType,
    PRNGKeyArray,
    check_key,
    fold_in_data,
    out_keys,
    random_bits,
    seed_data,
    split_data,
    threefry_2x32,
)
from plait_core.random_floats import (
    const,
    exponential_floats,
    gumbel_highest_float32,
    normal_floats,
    split_keys,
    to_dtype,
    uniform_floats,
)
from plait_core.random_gamma import binomial_draw, gamma_draw, poisson_draw
from plait_core.trace import Tracer, is_eager

Array = Any
KeyArray = Any

F = TypeVar("F", bound=Callable[..., Any])

_MAX_PROGRAMS = 256
"""Programs remembered per sampler (one per shape and dtype, as JAX's jit)."""


def _static_value(value: Any) -> Hashable:
    """A static argument as a dictionary key (sequences of sizes as tuples)."""
    if isinstance(value, np.integer):
        return int(value)
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
                key = (config.x64_enabled, *(_static_value(given[name]) for name in static))
                program = programs.get(key)
            except TypeError:
                return fun(*args, **kwargs)
            operands = tuple(name for name in given if name not in static)
            if any(given[name] is None for name in operands):
                return fun(*args, **kwargs)
            if program is None:
                fixed = dict(zip(static, key[1:]))

                def body(*values: Any) -> Any:
                    return fun(**fixed, **dict(zip(operands, values)))

                program = named_call(body, name=f"random_{fun.__name__}")
                if len(programs) < _MAX_PROGRAMS:
                    programs[key] = program
            return program(*[given[name] for name in operands])

        return cast(F, run)

    return wrap


# ---------------------------------------------------------------------------
# Keys


def PRNGKey(seed: Any, *, impl: Any = None) -> KeyArray:
    """A raw key (``uint32[2]``) from an integer seed: the words
    ``(seed >> 32, seed & 0xFFFFFFFF)``, the high word 0 unless x64 is on.
    Under ``enable_custom_prng()`` a typed key over that data instead."""
    _check_impl(impl, "PRNGKey")
    if config.custom_prng_enabled:
        return PRNGKeyArray(seed_data(seed, "PRNGKey"))
    return seed_data(seed, "PRNGKey")


def key(seed: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """A typed key from an integer seed: a scalar key array (``shape == ()``)
    holding the same data as ``PRNGKey(seed)``."""
    if impl is not None and dtype is not None:
        raise ValueError("random.key: cannot specify both `impl` and `dtype`")
    _check_impl(impl if dtype is None else dtype, "key")
    return PRNGKeyArray(seed_data(seed, "key"))


def _check_impl(impl: Any, where: str) -> None:
    if impl is None or impl == IMPL_NAME or isinstance(impl, KeyDType):
        return
    raise ValueError(f"random.{where}: unknown PRNG implementation {impl!r}; plait has only {IMPL_NAME!r}")


def key_data(keys: KeyArray) -> Array:
    """The ``uint32[*keys.shape, 2]`` data under typed keys (raw keys unchanged)."""
    data, _ = check_key(keys, "key_data", allow_batched=True)
    return data


def wrap_key_data(key_bits_array: Any, *, impl: Any = None, dtype: Any = None) -> KeyArray:
    """Typed keys over ``uint32`` key data whose shape ends with 2; the key
    array's shape is the data's shape without that last axis."""
    if impl is not None and dtype is not None:
        raise ValueError("random.wrap_key_data: cannot specify both `impl` and `dtype`")
    _check_impl(impl if dtype is None else dtype, "wrap_key_data")
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("random.wrap_key_data: expected uint32 key data, got a typed key array")
    data, _ = check_key(key_bits_array, "wrap_key_data", allow_batched=True)
    return PRNGKeyArray(data)


def key_impl(keys: KeyArray) -> str:
    """The name of the keys' PRNG implementation (always ``"threefry2x32"``)."""
    check_key(keys, "key_impl", allow_batched=True)
    return IMPL_NAME


def key_dtype(impl: Any = None) -> KeyDType:
    """The dtype of typed keys of ``impl`` (``key<fry>``)."""
    _check_impl(impl, "key_dtype")
    return KEY_DTYPE


def clone(key: KeyArray) -> KeyArray:
    """``key`` itself (JAX's clone marks a key for its key-reuse checker, which plait has not)."""
    return key


def _num_shape(num: Any) -> tuple[int, ...]:
    if isinstance(num, Sequence):
        return tuple(int(d) for d in num)
    return (int(num),)


@_one_program("num")
def split(key: KeyArray, num: int | tuple[int, ...] = 2) -> KeyArray:
    """``num`` new independent keys (a key array of shape ``(num,)``, or
    ``num`` itself when it is a tuple), raw or typed like ``key``."""
    data, raw = check_key(key, "split")
    return out_keys(split_data(data, _num_shape(num)), raw)


def fold_in(key: KeyArray, data: Any) -> KeyArray:
    """A new key determined by ``key`` and the 32-bit integer ``data``."""
    check_key(key, "fold_in")
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2**32:
            raise OverflowError(f"random.fold_in: data {data} is out of bounds for uint32")
        value: Any = np.uint32(data)
    else:
        aval = get_aval(data, "the data of random.fold_in")
        if aval.shape != ():
            raise TypeError(
                f"random.fold_in accepts a scalar, but was given an array of shape {tuple(aval.shape)} != (). "
                "Use vmap for batching."
            )
        if not (dtypes.is_int(aval.dtype) or dtypes.is_bool(aval.dtype)):
            raise TypeError(f"random.fold_in: data must be an integer, got {aval.str_short()}")
        value = data
    return _fold_in(key, value)


@_one_program()
def _fold_in(key: KeyArray, value: Any) -> KeyArray:
    key_words, raw = check_key(key, "fold_in")
    return out_keys(fold_in_data(key_words, value), raw)


# ---------------------------------------------------------------------------
# Argument checks


def _shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, Sequence):
        return tuple(int(d) for d in shape)
    try:
        return (int(shape),)
    except TypeError:
        raise TypeError(f"random: shape must be an int or a sequence of ints, got {shape!r}") from None


def _float_dtype(dtype: Any, where: str, kinds: str = "float") -> np.dtype[Any]:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_float_dtype())
    ok = dtypes.is_inexact(dt) if kinds == "float or complex" else dtypes.is_float(dt)
    if not ok:
        raise ValueError(f"random.{where}: dtype argument must be a {kinds} dtype, got {dt}")
    return dt


def _int_dtype(dtype: Any, where: str) -> np.dtype[Any]:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_int_dtype())
    if not dtypes.is_int(dt):
        raise TypeError(f"random.{where}: dtype must be an integer dtype, got {dt}")
    return dt


def _shape_of(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in np.shape(x)) if not hasattr(x, "shape") else tuple(int(d) for d in x.shape)


def _broadcast_shapes(where: str, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    ndim = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(ndim):
        sizes = {s[i - ndim + len(s)] for s in shapes if i - ndim + len(s) >= 0} - {1}
        if len(sizes) > 1:
            raise ValueError(f"random.{where}: shapes {', '.join(map(str, shapes))} do not broadcast together")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def _check_shape(where: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if param_shapes and _broadcast_shapes(where, shape, *param_shapes) != shape:
        raise ValueError(
            f"random.{where}: parameter shapes {', '.join(map(str, param_shapes))} must broadcast to "
            f"the shape argument {shape}, and broadcasting them with it must give it back"
        )


def _out_shape(where: str, shape: Any, *params: Any) -> tuple[int, ...]:
    """``shape`` checked against the parameters, or their broadcast shape."""
    shapes = [_shape_of(p) for p in params]
    if shape is None:
        return _broadcast_shapes(where, *shapes)
    out = _shape(shape)
    _check_shape(where, out, *shapes)
    return out


def _finfo(dtype: Any) -> Any:
    return dtypes.finfo(dtype)


# ---------------------------------------------------------------------------
# Bits and uniforms


@_one_program("shape", "dtype")
def bits(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Uniformly random unsigned integers of ``shape`` (``uint32`` by default)."""
    data, _ = check_key(key, "bits")
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.uint32)
    if not dtypes.is_unsigned_int(dt):
        raise ValueError(f"random.bits: dtype argument must be an unsigned int dtype, got {dt}")
    return random_bits(data, dt.itemsize * 8, _shape(shape))


@_one_program("shape", "dtype")
def uniform(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None, minval: Any = 0.0, maxval: Any = 1.0) -> Array:
    """Uniform floats in ``[minval, maxval)`` (bounds broadcast to ``shape``)."""
    data, _ = check_key(key, "uniform")
    dt = _float_dtype(dtype, "uniform")
    out = _shape(shape)
    _check_shape("uniform", out, _shape_of(minval), _shape_of(maxval))
    return uniform_floats(data, out, dt, minval, maxval)


def _normal(data: Array, shape: tuple[int, ...], dt: Any) -> Array:
    if not dtypes.is_complex(dt):
        return normal_floats(data, shape, dt)
    real = np.array(0, dt).real.dtype
    k_re, k_im = split_keys(data)
    re = lax.convert_element_type(normal_floats(k_re, shape, real), dt)
    im = lax.convert_element_type(normal_floats(k_im, shape, real), dt)
    z = _lenient.add(re, _lenient.mul(const(1j, dt), im))
    return _lenient.div(z, const(np.sqrt(2), dt))


@_one_program("shape", "dtype")
def normal(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard normal samples (inverse CDF of a uniform); complex dtypes give
    independent real and imaginary parts of variance 1/2 each."""
    data, _ = check_key(key, "normal")
    dt = _float_dtype(dtype, "normal", "float or complex")
    return _normal(data, _shape(shape), dt)


@_one_program("shape", "dtype")
def truncated_normal(key: KeyArray, lower: Any, upper: Any, shape: Sequence[int] | None = None,
                     dtype: Any = None) -> Array:
    """Normal samples conditioned on ``lower < x < upper`` (inverse CDF), kept
    strictly inside the bounds."""
    data, _ = check_key(key, "truncated_normal")
    dt = _float_dtype(dtype, "truncated_normal")
    out = _out_shape("truncated_normal", shape, lower, upper)
    sqrt2 = const(np.sqrt(2), dt)
    lo = lax.convert_element_type(lower, dt)
    hi = lax.convert_element_type(upper, dt)
    a = lax.erf(_lenient.div(lo, sqrt2))
    b = lax.erf(_lenient.div(hi, sqrt2))
    u = uniform_floats(data, out, dt, a, b)
    x = _lenient.mul(sqrt2, lax.erf_inv(u))
    floor = pnp.broadcast_to(_lenient.nextafter(lax.stop_gradient(lo), const(np.inf, dt)), out)
    ceil = pnp.broadcast_to(_lenient.nextafter(lax.stop_gradient(hi), const(-np.inf, dt)), out)
    return _lenient.min(_lenient.max(x, floor), ceil)


def bernoulli(key: KeyArray, p: Any = 0.5, shape: Sequence[int] | None = None, mode: str = "low", *,
              out_sharding: Any = None) -> Array:
    """Booleans that are True with probability ``p`` (floating; broadcast to
    ``shape``).  ``mode="high"`` draws two uniforms per value for resolution
    below the float's spacing.  ``out_sharding``: the result's layout (explicit
    sharding), as for ``jnp.dot``; the values are the same."""
    if out_sharding is not None:
        return with_out_sharding(lambda: _bernoulli(key, p, shape, mode), out_sharding)
    return _bernoulli(key, p, shape, mode)


@_one_program("shape", "mode")
def _bernoulli(key: KeyArray, p: Any, shape: Sequence[int] | None, mode: str) -> Array:
    if mode not in ("high", "low"):
        raise ValueError(f"random.bernoulli: got mode={mode!r}, expected 'high' or 'low'")
    data, _ = check_key(key, "bernoulli")
    p_dtype = get_aval(p, "p of random.bernoulli").dtype
    if not dtypes.is_float(p_dtype):
        raise TypeError(f"random.bernoulli: probability `p` must have a floating dtype, got {p_dtype}")
    out = _out_shape("bernoulli", shape, p)
    p_full = to_dtype(p, p_dtype, out)
    if mode == "low":
        return _lenient.lt(uniform_floats(data, out, p_dtype, 0.0, 1.0), p_full)
    both = uniform_floats(data, (2, *out), p_dtype, 0.0, 1.0)
    u1 = lax.index_in_dim(both, 0, 0, keepdims=False)
    u2 = _lenient.mul(lax.index_in_dim(both, 1, 0, keepdims=False), const(2.0 ** -int(_finfo(p_dtype).nmant), p_dtype))
    return _lenient.lt(u2, _lenient.sub(p_full, u1))


def _clip_to(val: Array, dtype: Any) -> Array:
    """Integer ``val`` clipped to the range both its dtype and ``dtype`` hold, then converted."""
    own = dtypes.iinfo(val.dtype)
    target = dtypes.iinfo(dtype)
    lo = const(max(int(own.min), int(target.min)), val.dtype)
    hi = const(min(int(own.max), int(target.max)), val.dtype)
    return lax.convert_element_type(_lenient.min(_lenient.max(val, lo), hi), dtype)


def _int_bound(x: Any) -> Array:
    x = pnp.asarray(x)
    if not dtypes.is_int(x.dtype):
        x = x.astype(dtypes.default_int_dtype())
    return x


def _randint(data: Array, shape: tuple[int, ...], minval: Any, maxval: Any, dt: Any) -> Array:
    nbits = dt.itemsize * 8
    unsigned = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}[nbits]
    lo_in, hi_in = _int_bound(minval), _int_bound(maxval)
    top = _clip_to(pnp.asarray(const(dtypes.iinfo(dt).max, dt)), hi_in.dtype)
    out_of_range = pnp.broadcast_to(_lenient.gt(hi_in, top), shape)
    lo = pnp.broadcast_to(_clip_to(lo_in, dt), shape)
    hi = pnp.broadcast_to(_clip_to(hi_in, dt), shape)
    k1, k2 = split_keys(data)
    higher = random_bits(k1, nbits, shape)
    lower = random_bits(k2, nbits, shape)
    span = lax.convert_element_type(_lenient.sub(hi, lo), unsigned)
    ones = lax.broadcast_in_dim(const(1, unsigned), shape, ())
    span = _lenient.select(_lenient.le(hi, lo), ones, span)
    span = _lenient.select(_lenient.bitwise_and(out_of_range, _lenient.gt(hi, lo)), _lenient.add(span, ones), span)
    multiplier = _lenient.rem(lax.broadcast_in_dim(const(2 ** (nbits // 2), unsigned), shape, ()), span)
    multiplier = _lenient.rem(_lenient.mul(multiplier, multiplier), span)
    offset = _lenient.add(_lenient.mul(_lenient.rem(higher, span), multiplier), _lenient.rem(lower, span))
    offset = _lenient.rem(offset, span)
    return _lenient.add(lo, lax.convert_element_type(offset, dt))


@_one_program("shape", "dtype")
def randint(key: KeyArray, shape: Sequence[int], minval: Any, maxval: Any, dtype: Any = None) -> Array:
    """Uniform integers in ``[minval, maxval)``, bounds clipped to ``dtype``'s
    range (``maxval`` one past its largest value is allowed)."""
    data, _ = check_key(key, "randint")
    dt = _int_dtype(dtype, "randint")
    out = _shape(shape)
    _check_shape("randint", out, _shape_of(minval), _shape_of(maxval))
    info = dtypes.iinfo(dt)
    if info.bits < 32:
        lo = pnp.clip(pnp.asarray(minval).astype(dtypes.int32), int(info.min), int(info.max))
        hi = pnp.clip(pnp.asarray(maxval).astype(dtypes.int32), int(info.min), int(info.max) + 1)
        return lax.convert_element_type(_randint(data, out, lo, hi, dtypes.int32), dt)
    return _randint(data, out, minval, maxval, dt)


# ---------------------------------------------------------------------------
# Closed forms of uniforms and normals


def _gumbel(data: Array, shape: tuple[int, ...], dt: Any, mode: str) -> Array:
    info = _finfo(dt)
    if mode == "low":
        u = uniform_floats(data, shape, dt, float(info.tiny), 1.0)
        return lax.neg(lax.log(lax.neg(lax.log(u))))
    if mode == "highest" and dt == dtypes.float32:
        return gumbel_highest_float32(data, shape)
    both = uniform_floats(data, (2, *shape), dt, 0.0, 1.0)
    high = lax.index_in_dim(both, 0, 0, keepdims=False)
    low = lax.index_in_dim(both, 1, 0, keepdims=False)
    boosted = _lenient.add(_lenient.add(high, _lenient.mul(const(2.0 ** -int(info.nmant), dt), low)), const(info.tiny, dt))
    x = _lenient.select(_lenient.ge(high, const(0.5, dt)), high, boosted)
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))


def _gumbel_mode(mode: str | None, where: str) -> str:
    mode = "low" if mode is None else mode
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"random.{where}: mode must be 'low', 'high' or 'highest', got {mode!r}")
    return mode


@_one_program("shape", "dtype", "mode")
def gumbel(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None, mode: str | None = None) -> Array:
    """Standard Gumbel samples ``-log(-log(u))``; ``mode="high"`` resolves the
    far right tail better (two uniforms per value)."""
    data, _ = check_key(key, "gumbel")
    dt = _float_dtype(dtype, "gumbel")
    return _gumbel(data, _shape(shape), dt, _gumbel_mode(mode, "gumbel"))


@_one_program("shape", "dtype")
def exponential(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard exponential samples ``-log(1 - u)``."""
    data, _ = check_key(key, "exponential")
    return exponential_floats(data, _shape(shape), _float_dtype(dtype, "exponential"))


@_one_program("shape", "dtype")
def laplace(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Laplace samples (density ``exp(-|x|) / 2``)."""
    data, _ = check_key(key, "laplace")
    dt = _float_dtype(dtype, "laplace")
    u = uniform_floats(data, _shape(shape), dt, -1.0 + float(_finfo(dt).epsneg), 1.0)
    return _lenient.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@_one_program("shape", "dtype")
def logistic(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard logistic samples ``log(u) - log(1 - u)``."""
    data, _ = check_key(key, "logistic")
    dt = _float_dtype(dtype, "logistic")
    u = uniform_floats(data, _shape(shape), dt, float(_finfo(dt).tiny), 1.0)
    return _lenient.sub(lax.log(u), lax.log1p(lax.neg(u)))


@_one_program("shape", "dtype")
def cauchy(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Standard Cauchy samples ``tan(pi (u - 1/2))``."""
    data, _ = check_key(key, "cauchy")
    dt = _float_dtype(dtype, "cauchy")
    u = uniform_floats(data, _shape(shape), dt, float(_finfo(dt).eps), 1.0)
    return lax.tan(_lenient.mul(const(np.pi, dt), _lenient.sub(u, const(0.5, dt))))


def _rademacher(data: Array, shape: tuple[int, ...], dt: Any) -> Array:
    b = lax.convert_element_type(_lenient.lt(uniform_floats(data, shape, dtypes.float32, 0.0, 1.0), const(0.5, dtypes.float32)), dt)
    return _lenient.sub(_lenient.mul(const(2, dt), b), const(1, dt))


@_one_program("shape", "dtype")
def rademacher(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """-1 or +1 with equal probability (the default int dtype unless ``dtype``)."""
    data, _ = check_key(key, "rademacher")
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_int_dtype())
    return _rademacher(data, _shape(shape), dt)


def _norm(z: Array) -> Array:
    """The Euclidean norm over the last axis (as ``jnp.linalg.norm``)."""
    return lax.sqrt(lax.reduce_sum(_lenient.mul(z, z), (len(z.shape) - 1,)))


def _maxwell(data: Array, shape: tuple[int, ...], dt: Any) -> Array:
    return _norm(_normal(data, (*shape, 3), dt))


@_one_program("shape", "dtype")
def maxwell(key: KeyArray, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Maxwell samples: the length of a standard normal 3-vector."""
    data, _ = check_key(key, "maxwell")
    return _maxwell(data, _shape(shape), _float_dtype(dtype, "maxwell"))


@_one_program("shape", "dtype")
def double_sided_maxwell(key: KeyArray, loc: Any, scale: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """``loc + scale * s * m`` with ``m`` Maxwell and ``s`` a random sign; the
    result has shape ``shape + broadcast(loc, scale).shape``."""
    data, _ = check_key(key, "double_sided_maxwell")
    dt = _float_dtype(dtype, "double_sided_maxwell")
    params = _broadcast_shapes("double_sided_maxwell", _shape_of(loc), _shape_of(scale))
    out = (*(_shape(shape) or params), *params)
    k_m, k_r = split_keys(data)
    m = _maxwell(k_m, out, dt)
    sign = _rademacher(k_r, out, dt)
    return pnp.add(pnp.multiply(pnp.multiply(sign, m), to_dtype(scale, dt)), to_dtype(loc, dt))


@_one_program("shape", "dtype")
def weibull_min(key: KeyArray, scale: Any, concentration: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Weibull samples ``scale * (-log(1 - u)) ** (1 / concentration)``."""
    data, _ = check_key(key, "weibull_min")
    dt = _float_dtype(dtype, "weibull_min")
    u = uniform_floats(data, _shape(shape), dt, 0.0, 1.0)
    e = lax.neg(lax.log1p(lax.neg(u)))
    return pnp.multiply(pnp.power(e, pnp.divide(1.0, concentration)), scale)


@_one_program("shape", "dtype")
def pareto(key: KeyArray, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Pareto samples ``exp(e / b)`` (``e`` exponential), support ``[1, inf)``."""
    data, _ = check_key(key, "pareto")
    dt = _float_dtype(dtype, "pareto")
    out = _out_shape("pareto", shape, b)
    e = exponential_floats(data, out, dt)
    return lax.exp(_lenient.div(e, to_dtype(b, dt, out)))


@_one_program("shape", "dtype")
def rayleigh(key: KeyArray, scale: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Rayleigh samples ``scale * sqrt(-2 log u)``."""
    data, _ = check_key(key, "rayleigh")
    dt = _float_dtype(dtype, "rayleigh")
    out = _out_shape("rayleigh", shape, scale)
    u = uniform_floats(data, out, dt, 0.0, 1.0)
    s = to_dtype(scale, dt, out)
    return _lenient.mul(s, lax.sqrt(_lenient.mul(lax.log(u), const(-2, dt))))


@_one_program("shape", "dtype")
def wald(key: KeyArray, mean: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Wald (inverse Gaussian, unit shape) samples with mean ``mean``
    (Michael, Schucany and Haas's transformation of a normal and a uniform)."""
    data, _ = check_key(key, "wald")
    dt = _float_dtype(dtype, "wald")
    out = _out_shape("wald", shape, mean)
    k1, k2 = split_keys(data)
    mu = to_dtype(mean, dt, out)
    v = _normal(k1, out, dt)
    z = uniform_floats(k2, out, dt, 0.0, 1.0)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mu_sq = lax.integer_pow(mu, 2)
    root = lax.sqrt(_lenient.add(_lenient.mul(_lenient.mul(const(4, dt), mu), y), _lenient.mul(mu_sq, y_sq)))
    x = _lenient.sub(_lenient.add(mu, _lenient.div(_lenient.mul(mu_sq, y), const(2, dt))), _lenient.mul(_lenient.div(mu, const(2, dt)), root))
    return _lenient.select(_lenient.le(z, _lenient.div(mu, _lenient.add(mu, x))), x, _lenient.div(mu_sq, x))


@_one_program("shape", "dtype")
def geometric(key: KeyArray, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Geometric samples: the number of Bernoulli(``p``) trials up to the first success (>= 1)."""
    data, _ = check_key(key, "geometric")
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_int_dtype())
    if not dtypes.is_int(dt):
        raise ValueError(f"random.geometric: dtype argument must be an int dtype, got {dt}")
    out = _out_shape("geometric", shape, p)
    p_arr = pnp.asarray(p)
    if not dtypes.is_inexact(p_arr.dtype):
        p_arr = p_arr.astype(dtypes.default_float_dtype())
    u = uniform_floats(data, out, p_arr.dtype, 0.0, 1.0)
    u = pnp.where(_lenient.eq(u, const(0, p_arr.dtype)), const(1, p_arr.dtype), u)
    log_q = pnp.broadcast_to(lax.log1p(lax.neg(p_arr)), out)
    g = _lenient.add(lax.floor(_lenient.div(lax.log(u), log_q)), const(1, p_arr.dtype))
    return lax.convert_element_type(g, dt)


@_one_program("shape", "dtype")
def triangular(key: KeyArray, left: Any, mode: Any, right: Any, shape: Sequence[int] | None = None,
               dtype: Any = None) -> Array:
    """Triangular samples on ``[left, right]`` peaking at ``mode`` (inverse CDF)."""
    data, _ = check_key(key, "triangular")
    dt = _float_dtype(dtype, "triangular")
    out = _out_shape("triangular", shape, left, mode, right)
    a, c, b = to_dtype(left, dt, out), to_dtype(mode, dt, out), to_dtype(right, dt, out)
    fc = _lenient.div(_lenient.sub(c, a), _lenient.sub(b, a))
    u = uniform_floats(data, out, dt, 0.0, 1.0)
    out1 = _lenient.add(a, lax.sqrt(_lenient.mul(_lenient.mul(u, _lenient.sub(b, a)), _lenient.sub(c, a))))
    out2 = _lenient.sub(b, lax.sqrt(_lenient.mul(_lenient.mul(_lenient.sub(const(1, dt), u), _lenient.sub(b, a)), _lenient.sub(b, c))))
    return _lenient.select(_lenient.lt(u, fc), out1, out2)


@_one_program("shape", "dtype")
def lognormal(key: KeyArray, sigma: Any = 1.0, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Log-normal samples ``exp(sigma * z)``."""
    data, _ = check_key(key, "lognormal")
    dt = _float_dtype(dtype, "lognormal", "float or complex")
    out = _out_shape("lognormal", shape, sigma)
    return lax.exp(_lenient.mul(_normal(data, out, dt), to_dtype(sigma, dt, out)))


# ---------------------------------------------------------------------------
# Discrete choices


@_one_program("axis", "shape", "replace", "mode")
def categorical(key: KeyArray, logits: Any, axis: int = -1, shape: Sequence[int] | None = None,
                replace: bool = True, mode: str | None = None) -> Array:
    """Indices drawn with probabilities ``softmax(logits)`` along ``axis``
    (Gumbel-max; without replacement, the Gumbel top-k trick)."""
    data, _ = check_key(key, "categorical")
    arr = pnp.asarray(logits)
    ndim = arr.ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"random.categorical: axis {axis} is out of bounds for logits of shape {tuple(arr.shape)}")
    ax = axis % ndim
    batch = tuple(int(d) for i, d in enumerate(arr.shape) if i != ax)
    out = batch if shape is None else _shape(shape)
    _check_shape("categorical", out, batch)
    prefix = out[: len(out) - len(batch)]
    mode = _gumbel_mode(mode, "categorical")
    dt = arr.dtype if dtypes.is_float(arr.dtype) else dtypes.default_float_dtype()
    if replace:
        full = (*prefix, *out[len(prefix):len(prefix) + ax], int(arr.shape[ax]), *out[len(prefix) + ax:])
        g = _gumbel(data, full, dt, mode)
        x = pnp.add(g, lax.expand_dims(arr, tuple(range(len(prefix)))))
        return pnp.argmax(x, axis=ax - ndim)
    k = math.prod(prefix)
    if k > int(arr.shape[ax]):
        raise ValueError(
            f"random.categorical: number of samples without replacement ({k}) cannot exceed the number "
            f"of categories ({int(arr.shape[ax])})"
        )
    noisy = pnp.add(arr, _gumbel(data, tuple(int(d) for d in arr.shape), dt, mode))
    _, idx = lax.top_k(pnp.moveaxis(noisy, ax, -1), k)
    dims = (len(idx.shape) - 1, *range(len(idx.shape) - 1))
    return lax.reshape(lax.transpose(idx, dims), out)


def _shuffle(data: Array, x: Array, axis: int) -> Array:
    size = math.prod(int(d) for d in x.shape)
    rounds = int(np.ceil(3 * np.log(max(1, size)) / np.log(np.iinfo(np.uint32).max)))
    for _ in range(rounds):
        data, sub = split_keys(data)
        sort_keys = random_bits(sub, 32, tuple(int(d) for d in x.shape))
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


def permutation(key: KeyArray, x: Any, axis: int = 0, independent: bool = False) -> Array:
    """A random permutation of ``arange(x)`` (integer ``x``) or of ``x`` along
    ``axis`` (slices move together unless ``independent``)."""
    check_key(key, "permutation")
    if not np.ndim(x) and not (hasattr(x, "shape") and x.shape):
        x_dtype = get_aval(x, "x of random.permutation").dtype
        if not dtypes.is_int(x_dtype):
            raise TypeError("random.permutation: x must be an integer or at least 1-dimensional")
        if isinstance(x, Tracer):
            raise TypeError("random.permutation: x must be a concrete integer (it sets the output's size)")
        return _permutation_of_range(key, int(np.asarray(x)))
    return _permutation_of_array(key, x, axis, independent)


@_one_program("n")
def _permutation_of_range(key: KeyArray, n: int) -> Array:
    data, _ = check_key(key, "permutation")
    return _shuffle(data, pnp.arange(n), 0)


@_one_program("axis", "independent")
def _permutation_of_array(key: KeyArray, x: Any, axis: int, independent: bool) -> Array:
    data, _ = check_key(key, "permutation")
    arr = pnp.asarray(x)
    ax = axis % max(arr.ndim, 1)
    if not -arr.ndim <= axis < arr.ndim:
        raise ValueError(f"random.permutation: axis {axis} is out of bounds for an array of shape {tuple(arr.shape)}")
    if independent or arr.ndim == 1:
        return _shuffle(data, arr, ax)
    idx = _shuffle(data, pnp.arange(int(arr.shape[ax])), 0)
    return pnp.take(arr, idx, axis=ax)


def shuffle(key: KeyArray, x: Any, axis: int = 0) -> Array:
    """``x`` permuted along ``axis`` (JAX's removed ``shuffle``: ``permutation`` with ``independent=True``)."""
    return permutation(key, x, axis, independent=True)


def choice(key: KeyArray, a: Any, shape: Sequence[int] = (), replace: bool = True, p: Any = None, axis: int = 0,
           mode: str | None = None) -> Array:
    """Samples from ``a`` along ``axis`` (an integer ``a`` means ``arange(a)``),
    with or without replacement, uniformly or with probabilities ``p``."""
    data, _ = check_key(key, "choice")
    if not isinstance(shape, Sequence):
        raise TypeError(f"random.choice: shape must be a sequence, got {shape!r}")
    arr = pnp.asarray(a)
    if arr.ndim == 0:
        if isinstance(a, Tracer):
            raise TypeError("random.choice: an integer a must be concrete (it sets the population size)")
        n_inputs = int(np.asarray(a))
    else:
        if not -arr.ndim <= axis < arr.ndim:
            raise ValueError(f"random.choice: axis {axis} is out of bounds for an array of shape {tuple(arr.shape)}")
        axis %= arr.ndim
        n_inputs = int(arr.shape[axis])
    shape = tuple(int(d) for d in shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return pnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("random.choice: a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"random.choice: cannot take a larger sample (size {n_draws}) than the population "
            f"(size {n_inputs}) when replace=False"
        )
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else pnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
            result = lax.slice_in_dim(perm, 0, n_draws, axis=axis)
    else:
        p_arr = pnp.asarray(p)
        if not dtypes.is_inexact(p_arr.dtype):
            p_arr = p_arr.astype(dtypes.default_float_dtype())
        if tuple(p_arr.shape) != (n_inputs,):
            raise ValueError(
                f"random.choice: p must be None or a 1D vector with the same size as a.shape[axis]; "
                f"p has shape {tuple(p_arr.shape)} and a.shape[axis] is {n_inputs}"
            )
        if replace:
            cumulative = pnp.cumsum(p_arr)
            u = uniform_floats(data, shape, p_arr.dtype, 0.0, 1.0)
            r = _lenient.mul(cumulative[-1], _lenient.sub(const(1, p_arr.dtype), u))
            ind = pnp.searchsorted(cumulative, r).astype(dtypes.default_int_dtype())
        else:
            g = pnp.add(_gumbel(data, (n_inputs,), p_arr.dtype, _gumbel_mode(mode, "choice")), pnp.log(p_arr))
            ind = lax.top_k(g, n_draws)[1].astype(dtypes.default_int_dtype())
        result = ind if arr.ndim == 0 else pnp.take(arr, ind, axis=axis)
    final = shape if arr.ndim == 0 else (*arr.shape[:axis], *shape, *arr.shape[axis + 1:])
    return pnp.reshape(result, final)


# ---------------------------------------------------------------------------
# Gamma and its family, Poisson, binomial


def _gamma(key: KeyArray, a: Any, shape: Any, dtype: Any, where: str, log_space: bool) -> Array:
    data, _ = check_key(key, where)
    dt = _float_dtype(dtype, where)
    out = _out_shape(where, shape, a)
    return gamma_draw(data, to_dtype(a, dt, out), log_space)


@_one_program("shape", "dtype")
def gamma(key: KeyArray, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Gamma(a, 1) samples (Marsaglia and Tsang's method per entry, each entry
    with its own key), ``a`` broadcast to ``shape`` (its shape by default).
    Differentiable in ``a`` (the sample's derivative at its fixed CDF level)."""
    return _gamma(key, a, shape, dtype, "gamma", False)


@_one_program("shape", "dtype")
def loggamma(key: KeyArray, a: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """``log`` of Gamma(a, 1) samples, computed in log space (accurate for small ``a``)."""
    return _gamma(key, a, shape, dtype, "loggamma", True)


@_one_program("shape", "dtype")
def beta(key: KeyArray, a: Any, b: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Beta(a, b) samples ``X / (X + Y)`` of log-space Gamma(a) and Gamma(b) draws."""
    data, _ = check_key(key, "beta")
    dt = _float_dtype(dtype, "beta")
    out = _out_shape("beta", shape, a, b)
    k_a, k_b = split_keys(data)
    log_a = gamma_draw(k_a, to_dtype(a, dt, out), True)
    log_b = gamma_draw(k_b, to_dtype(b, dt, out), True)
    top = _lenient.max(log_a, log_b)
    ga = lax.exp(_lenient.sub(log_a, top))
    gb = lax.exp(_lenient.sub(log_b, top))
    return _lenient.div(ga, _lenient.add(ga, gb))


@_one_program("shape", "dtype")
def dirichlet(key: KeyArray, alpha: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Dirichlet(alpha) samples over ``alpha``'s last axis (a softmax of
    log-space Gamma draws); the result has shape ``shape + alpha.shape[-1:]``."""
    data, _ = check_key(key, "dirichlet")
    dt = _float_dtype(dtype, "dirichlet")
    a_shape = _shape_of(alpha)
    if not a_shape:
        raise ValueError("random.dirichlet: alpha must have at least one dimension (alpha.ndim >= 1), got a scalar")
    batch = a_shape[:-1] if shape is None else _shape(shape)
    _check_shape("dirichlet", batch, a_shape[:-1])
    log_g = gamma_draw(data, to_dtype(alpha, dt, (*batch, a_shape[-1])), True)
    top = pnp.max(log_g, axis=-1, keepdims=True)
    w = pnp.exp(pnp.subtract(log_g, top))
    return pnp.divide(w, pnp.sum(w, axis=-1, keepdims=True))


@_one_program("shape", "dtype")
def chisquare(key: KeyArray, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Chi-square samples with ``df`` degrees of freedom (``2 * Gamma(df / 2)``)."""
    data, _ = check_key(key, "chisquare")
    dt = _float_dtype(dtype, "chisquare")
    out = _out_shape("chisquare", shape, df)
    half = _lenient.div(to_dtype(df, dt, out), const(2, dt))
    return _lenient.mul(lax.exp(gamma_draw(data, half, True)), const(2, dt))


@_one_program("shape", "dtype")
def f(key: KeyArray, dfnum: Any, dfden: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """F-distribution samples ``(X / dfnum) / (Y / dfden)`` of chi-square draws."""
    data, _ = check_key(key, "f")
    dt = _float_dtype(dtype, "f")
    out = _out_shape("f", shape, dfnum, dfden)
    k_den, k_num = split_keys(data)
    num_df, den_df = to_dtype(dfnum, dt, out), to_dtype(dfden, dt, out)
    chi_num = _lenient.mul(lax.exp(gamma_draw(k_num, _lenient.div(num_df, const(2, dt)), True)), const(2, dt))
    chi_den = _lenient.mul(lax.exp(gamma_draw(k_den, _lenient.div(den_df, const(2, dt)), True)), const(2, dt))
    return _lenient.div(_lenient.div(chi_num, num_df), _lenient.div(chi_den, den_df))


@_one_program("shape", "dtype")
def t(key: KeyArray, df: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Student's t samples with ``df`` degrees of freedom (``Z sqrt(df / (2 G))``, ``G ~ Gamma(df/2)``)."""
    data, _ = check_key(key, "t")
    dt = _float_dtype(dtype, "t")
    out = _out_shape("t", shape, df)
    k_n, k_g = split_keys(data)
    n = _normal(k_n, out, dt)
    half = _lenient.div(to_dtype(df, dt, out), const(2, dt))
    g = gamma_draw(k_g, half, False)
    return _lenient.mul(n, lax.sqrt(_lenient.div(half, g)))


@_one_program("shape", "dtype")
def generalized_normal(key: KeyArray, p: Any, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Generalised normal samples (density proportional to ``exp(-|x|**p)``)."""
    data, _ = check_key(key, "generalized_normal")
    dt = _float_dtype(dtype, "generalized_normal")
    return _generalized_normal(data, p, _shape(shape), dt)


def _generalized_normal(data: Array, p: Any, shape: tuple[int, ...], dt: Any) -> Array:
    k_g, k_r = split_keys(data)
    inv_p = pnp.divide(1, p)
    g = gamma_draw(k_g, to_dtype(inv_p, dt, shape), False)
    r = _rademacher(k_r, shape, dt)
    return pnp.multiply(r, pnp.power(g, inv_p))


@_one_program("d", "shape", "dtype")
def ball(key: KeyArray, d: int, p: Any = 2, shape: Sequence[int] = (), dtype: Any = None) -> Array:
    """Points uniform in the unit ``p``-norm ball of dimension ``d`` (shape ``shape + (d,)``)."""
    data, _ = check_key(key, "ball")
    dt = _float_dtype(dtype, "ball")
    out = _shape(shape)
    k1, k2 = split_keys(data)
    g = _generalized_normal(k1, p, (*out, int(d)), dt)
    e = exponential_floats(k2, out, dt)
    norm = pnp.power(pnp.add(pnp.sum(pnp.power(pnp.abs(g), p), axis=-1), e), pnp.divide(1, p))
    return pnp.divide(g, norm[..., None])


@_one_program("n", "shape", "dtype", "m")
def orthogonal(key: KeyArray, n: int, shape: Sequence[int] = (), dtype: Any = None, m: int | None = None) -> Array:
    """Haar-random ``n x m`` matrices with orthonormal columns or rows (QR of a
    normal matrix with the signs of R's diagonal divided out)."""
    data, _ = check_key(key, "orthogonal")
    dt = _float_dtype(dtype, "orthogonal")
    cols = int(n) if m is None else int(m)
    rows = int(n)
    z = _normal(data, (*_shape(shape), max(rows, cols), min(rows, cols)), dt)
    q, r = pnp.linalg.qr(z)
    d = pnp.diagonal(r, axis1=-2, axis2=-1)
    x = pnp.multiply(q, pnp.expand_dims(pnp.sign(d), -2))
    return pnp.swapaxes(x, -1, -2) if rows < cols else x


@_one_program("shape", "dtype")
def poisson(key: KeyArray, lam: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Poisson(lam) counts, ``lam`` broadcast to ``shape`` (its shape by
    default): Knuth's method for ``lam < 10``, Hörmann's PTRS rejection above;
    a negative or NaN ``lam`` gives -1."""
    data, _ = check_key(key, "poisson")
    dt = _int_dtype(dtype, "poisson")
    out = _shape_of(lam) if shape is None else _shape(shape)
    lam_arr = lax.convert_element_type(pnp.broadcast_to(lam, out), dtypes.float32)
    return poisson_draw(data, lam_arr, dt)


@_one_program("shape", "dtype")
def binomial(key: KeyArray, n: Any, p: Any, shape: Sequence[int] | None = None, dtype: Any = None) -> Array:
    """Binomial(n, p) counts as floats (inversion for ``n * min(p, 1-p) <= 10``,
    Hörmann's BTRS rejection above); invalid parameters give NaN."""
    data, _ = check_key(key, "binomial")
    out = _out_shape("binomial", shape, n, p)
    p_arr = pnp.asarray(p)
    if not dtypes.is_inexact(p_arr.dtype):
        p_arr = p_arr.astype(dtypes.default_float_dtype())
    dt = p_arr.dtype if dtype is None else _float_dtype(dtype, "binomial")
    count = to_dtype(n, p_arr.dtype, out)
    return binomial_draw(data, count, pnp.broadcast_to(p_arr, out), dt)


def multinomial(key: KeyArray, n: Any, p: Any, *, shape: Sequence[int] | None = None, dtype: Any = None,
                unroll: int | bool = 1) -> Array:
    """Multinomial counts of ``n`` trials over the categories of ``p``'s last
    axis (sequential conditional binomials, one key per category)."""
    data, _ = check_key(key, "multinomial")
    n_arr, p_arr = pnp.asarray(n), pnp.asarray(p)
    ft = pnp.result_type(n_arr, p_arr, dtypes.default_float_dtype() if not config.x64_enabled else dtypes.float32)
    if not dtypes.is_inexact(ft):
        ft = dtypes.default_float_dtype()
    n_arr, p_arr = n_arr.astype(ft), p_arr.astype(ft)
    out = tuple(int(d) for d in p_arr.shape) if shape is None else _shape(shape)
    n_arr = pnp.broadcast_to(n_arr, out[:-1])
    p_arr = pnp.moveaxis(pnp.broadcast_to(p_arr, out), -1, 0)
    remaining = pnp.flip(pnp.cumsum(pnp.flip(p_arr, 0), axis=0), 0)
    ratios = pnp.divide(p_arr, pnp.where(_lenient.eq(remaining, const(0, ft)), const(1, ft), remaining))
    keys = split_data(data, (int(out[-1]),))

    def step(rest: Array, ratio_key: tuple[Array, Array]) -> tuple[Array, Array]:
        ratio, k = ratio_key
        count = binomial_draw(k, rest, pnp.clip(ratio, 0, 1), ft)
        return pnp.subtract(rest, count), count

    _, counts = lax.scan(step, n_arr, (ratios, keys), unroll=unroll)
    result = pnp.moveaxis(counts, 0, -1)
    return result if dtype is None else result.astype(dtype)


NOT_SUPPORTED = {
    "random_gamma_p": "a JAX primitive object: plait's gamma is built from core primitives, not one of its own",
}
"""``jax.random`` names plait does not have, with why."""


__all__ = [
    "PRNGKey", "PRNGKeyArray", "key", "key_data", "wrap_key_data", "key_impl", "key_dtype", "clone", "split",
    "fold_in", "bits", "uniform", "normal", "truncated_normal", "bernoulli", "randint", "gumbel", "exponential",
    "categorical", "permutation", "shuffle", "choice", "threefry_2x32", "laplace", "logistic", "cauchy",
    "rademacher", "maxwell", "double_sided_maxwell", "weibull_min", "pareto", "rayleigh", "wald", "geometric",
    "triangular", "lognormal", "gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t",
    "generalized_normal", "ball", "orthogonal", "poisson", "binomial", "multinomial", "multivariate_normal",
]

from plait_core.random_multivariate import multivariate_normal  # noqa: E402  (it uses normal, above)
