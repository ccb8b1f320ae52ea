"""``plait.nn.initializers``: parameter initializers with ``jax.nn.initializers``'
names, signatures and statistics.

An initializer is a function ``init(key, shape, dtype=float32) -> array``; the
factories (``normal(stddev)``, ``glorot_uniform()``, ...) build them, and
``zeros``/``ones`` are initializers themselves.  Values are drawn with
``plait.random``, whose streams are JAX's: the same key gives JAX's numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, random
from plait_core import numpy as pnp

Array = Any
Shape = Sequence[int]
Initializer = Callable[..., Array]

# The standard deviation of a standard normal truncated to [-2, 2]; dividing by
# it makes a truncated normal draw have the requested variance.
_TRUNCATED_STDDEV = 0.87962566103423978
# The standard deviation JAX divides a complex truncated draw (see _complex_truncated) by, so
# that complex truncated-normal initial values are JAX's.
_COMPLEX_TRUNCATED_STDDEV = 0.95311164380491208


def _float_dtype(dtype: Any, name: str) -> Any:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_float_dtype())
    if not dtypes.is_float(dt):
        raise TypeError(f"nn.initializers.{name}: dtype must be a floating type, got {dt}")
    return dt


def _inexact_dtype(dtype: Any, name: str) -> Any:
    dt = dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_float_dtype())
    if not (dtypes.is_float(dt) or dtypes.is_complex(dt)):
        raise TypeError(f"nn.initializers.{name}: dtype must be a floating or complex type, got {dt}")
    return dt


def _any_dtype(dtype: Any) -> Any:
    return dtypes.canonicalize_dtype(dtype if dtype is not None else dtypes.default_float_dtype())


def _shape(shape: Shape | int) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(d) for d in shape)


def zeros(key: Array, shape: Shape, dtype: Any = None) -> Array:
    """An initializer: an array of zeros of any dtype (``key`` is unused)."""
    return pnp.zeros(_shape(shape), _any_dtype(dtype))


def ones(key: Array, shape: Shape, dtype: Any = None) -> Array:
    """An initializer: an array of ones of any dtype (``key`` is unused)."""
    return pnp.ones(_shape(shape), _any_dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling the array with ``value`` (broadcast to the shape)."""

    def init(key: Array, shape: Shape, dtype: Any = dtype) -> Array:
        return pnp.full(_shape(shape), value, _float_dtype(dtype, "constant"))

    return init


def uniform(scale: float = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing uniformly from ``[0, scale)``."""

    def init(key: Array, shape: Shape, dtype: Any = dtype) -> Array:
        dt = _float_dtype(dtype, "uniform")
        return random.uniform(key, _shape(shape), dt) * np.asarray(scale, dt)

    return init


def normal(stddev: float = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing from a normal distribution with mean 0 and ``stddev``
    (for a complex dtype, a complex normal: real and imaginary parts each of
    variance ``stddev**2 / 2``)."""

    def init(key: Array, shape: Shape, dtype: Any = dtype) -> Array:
        dt = _inexact_dtype(dtype, "normal")
        return random.normal(key, _shape(shape), dt) * np.asarray(stddev, dt)

    return init


def truncated_normal(stddev: float = 1e-2, dtype: Any = None, lower: float = -2.0,
                     upper: float = 2.0) -> Initializer:
    """An initializer drawing ``stddev * z`` with ``z`` a standard normal truncated
    to ``(lower, upper)`` (so the draws' standard deviation is below ``stddev``)."""

    def init(key: Array, shape: Shape, dtype: Any = dtype) -> Array:
        dt = _float_dtype(dtype, "truncated_normal")
        return random.truncated_normal(key, lower, upper, _shape(shape), dt) * np.asarray(stddev, dt)

    return init


def _axes(axis: int | Sequence[int], ndim: int, what: str) -> tuple[int, ...]:
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"nn.initializers.variance_scaling: {what} {a} is out of range for a "
                             f"{ndim}-dimensional shape")
    return tuple(a % ndim for a in axes)


def _fans(shape: tuple[int, ...], in_axis: int | Sequence[int], out_axis: int | Sequence[int],
          batch_axis: int | Sequence[int]) -> tuple[float, float]:
    """``(fan_in, fan_out)``: the sizes of the input and output axes, each times the
    receptive field (the product of the axes that are none of in, out or batch)."""
    if len(shape) < 2 and (isinstance(in_axis, int) or isinstance(out_axis, int)):
        raise ValueError(f"nn.initializers.variance_scaling: cannot compute the fans of a "
                         f"{len(shape)}-dimensional shape {shape} with integer in_axis/out_axis; "
                         f"the shape must be at least 2-D, or pass in_axis and out_axis as sequences")
    ins = _axes(in_axis, len(shape), "in_axis")
    outs = _axes(out_axis, len(shape), "out_axis")
    batches = _axes(batch_axis, len(shape), "batch_axis")
    size = float(np.prod(shape))
    in_size = float(np.prod([shape[a] for a in ins]))
    out_size = float(np.prod([shape[a] for a in outs]))
    batch_size = float(np.prod([shape[a] for a in batches]))
    receptive = size / (in_size * out_size * batch_size)
    return in_size * receptive, out_size * receptive


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale: float, mode: str, distribution: str, in_axis: int | Sequence[int] = -2,
                     out_axis: int | Sequence[int] = -1, batch_axis: int | Sequence[int] = (),
                     dtype: Any = None) -> Initializer:
    """An initializer whose draws have variance ``scale / n``, where ``n`` is by
    ``mode`` the fan-in, the fan-out, their mean (``"fan_avg"``) or their geometric
    mean (``"fan_geo_avg"``).  Fans are the sizes of ``in_axis`` / ``out_axis``
    times the receptive field (the axes that are none of in, out, ``batch_axis``).

    ``distribution`` is ``"truncated_normal"`` (a normal truncated at two standard
    deviations, rescaled to the variance), ``"normal"`` or ``"uniform"`` (on
    ``[-sqrt(3 scale / n), sqrt(3 scale / n))``).

    For a complex dtype (as JAX's): ``"normal"`` is a complex normal;
    ``"uniform"`` is uniform on the disk of radius ``sqrt(2 scale / n)``;
    ``"truncated_normal"`` a complex normal with its modulus truncated at 2,
    at a uniformly random angle, rescaled as JAX rescales it."""
    if mode not in _MODES:
        raise ValueError(f"nn.initializers.variance_scaling: invalid mode {mode!r}; expected one of {_MODES}")
    if distribution not in _DISTRIBUTIONS:
        raise ValueError(f"nn.initializers.variance_scaling: invalid distribution {distribution!r}; "
                         f"expected one of {_DISTRIBUTIONS}")

    def init(key: Array, shape: Shape, dtype: Any = dtype) -> Array:
        dt = _inexact_dtype(dtype, "variance_scaling")
        shape = _shape(shape)
        fan_in, fan_out = _fans(shape, in_axis, out_axis, batch_axis)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
             "fan_geo_avg": float(np.sqrt(fan_in * fan_out))}[mode]
        variance = scale / n
        if dtypes.is_complex(dt):
            return _complex_draw(key, distribution, shape, dt, variance)
        if distribution == "truncated_normal":
            z = random.truncated_normal(key, -2.0, 2.0, shape, dt)
            return z * np.asarray(np.sqrt(variance) / _TRUNCATED_STDDEV, dt)
        if distribution == "normal":
            return random.normal(key, shape, dt) * np.asarray(np.sqrt(variance), dt)
        return random.uniform(key, shape, dt, -1.0, 1.0) * np.asarray(np.sqrt(3 * variance), dt)

    return init


def _complex_draw(key: Array, distribution: str, shape: tuple[int, ...], dt: Any, variance: float) -> Array:
    """``variance_scaling``'s complex draws (see its docstring), of variance ``variance``."""
    if distribution == "normal":
        return random.normal(key, shape, dt) * np.asarray(np.sqrt(variance), dt)
    real = dtypes.canonicalize_dtype(np.finfo(dt).dtype)
    key_modulus, key_angle = random.split(key)
    u = random.uniform(key_modulus, shape, real)
    if distribution == "uniform":
        modulus = pnp.sqrt(2 * u)  # E[|z|^2] = 1: uniform on the disk of radius sqrt(2)
        stddev = np.sqrt(variance)
    else:
        # |z|^2 of a unit complex normal is Exp(1); inverting its CDF on [0, 1 - e^-4]
        # draws the modulus truncated at 2.
        modulus = pnp.sqrt(-pnp.log1p(-(1 - np.exp(-4.0)) * u))
        stddev = np.sqrt(variance) / _COMPLEX_TRUNCATED_STDDEV
    angle = random.uniform(key_angle, shape, real) * np.asarray(2 * np.pi, real)
    z = modulus * pnp.exp(pnp.asarray(1j, dt) * angle.astype(dt))
    return (z * np.asarray(stddev, dt)).astype(dt)


def _scaled(scale: float, mode: str, distribution: str, doc: str) -> Callable[..., Initializer]:
    def factory(in_axis: int | Sequence[int] = -2, out_axis: int | Sequence[int] = -1,
                batch_axis: int | Sequence[int] = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    factory.__doc__ = doc
    return factory


glorot_uniform = _scaled(1.0, "fan_avg", "uniform",
                         "Glorot/Xavier uniform: ``variance_scaling(1.0, 'fan_avg', 'uniform')``.")
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal",
                        "Glorot/Xavier normal: ``variance_scaling(1.0, 'fan_avg', 'truncated_normal')``.")
lecun_uniform = _scaled(1.0, "fan_in", "uniform",
                        "LeCun uniform: ``variance_scaling(1.0, 'fan_in', 'uniform')``.")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal",
                       "LeCun normal: ``variance_scaling(1.0, 'fan_in', 'truncated_normal')``.")
he_uniform = _scaled(2.0, "fan_in", "uniform",
                     "He/Kaiming uniform: ``variance_scaling(2.0, 'fan_in', 'uniform')``.")
he_normal = _scaled(2.0, "fan_in", "truncated_normal",
                    "He/Kaiming normal: ``variance_scaling(2.0, 'fan_in', 'truncated_normal')``.")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal

__all__ = [
    "Initializer", "constant", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform", "kaiming_normal",
    "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal", "ones", "truncated_normal", "uniform",
    "variance_scaling", "xavier_normal", "xavier_uniform", "zeros",
]

from plait_core.nn_orthogonal import delta_orthogonal, orthogonal  # noqa: E402  (kept apart: QR-based)

__all__ += ["delta_orthogonal", "orthogonal"]
