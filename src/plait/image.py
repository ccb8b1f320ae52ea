"""``plait.image``: image resampling (JAX's ``jax.image``).

``resize(image, shape, method, antialias=True)`` resamples ``image`` to
``shape`` (same rank; every axis whose size changes is resampled), and
``scale_and_translate(image, shape, spatial_dims, scale, translation,
method)`` maps output pixel ``o`` of each spatial axis to the input
coordinate ``(o + 0.5 - translation) / scale - 0.5`` (pixel centres at half
integers).  Methods (a :class:`ResizeMethod` or its name):

- ``"nearest"``: the input pixel containing the output pixel's centre
  (``resize`` only);
- ``"linear"`` (``"bilinear"``, ``"trilinear"``, ``"triangle"``): the
  triangle kernel;
- ``"cubic"`` (``"bicubic"``, ``"tricubic"``): Keys' cubic kernel with
  a = -0.5;
- ``"lanczos3"``, ``"lanczos5"``: Lanczos windows of radius 3 and 5.

Each output is a weighted sum of input pixels along each spatial axis in
turn, the kernel's weights normalised to sum to one; output pixels whose
input coordinate falls outside the image get 0.  When downsampling with
``antialias=True`` the kernel is widened by the downsampling factor, so that
it filters out frequencies the output cannot represent.  Integer images are
resampled in floating point, and the result is float32 (as JAX's); ``precision`` is accepted for
JAX's signature (the weighted sums are computed at the dtype's precision).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core import numpy as pnp
from plait_core.numpy._util import Array

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """The interpolation methods of :func:`resize` and :func:`scale_and_translate`."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method named ``s`` (case-insensitive; see the module's list of names)."""
        names = {
            "nearest": ResizeMethod.NEAREST,
            "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR, "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR,
            "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
            "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC, "tricubic": ResizeMethod.CUBIC,
        }
        method = names.get(s.lower()) if isinstance(s, str) else None
        if method is None:
            raise ValueError(f"Unknown resize method: {s!r}; expected one of {sorted(names)}")
        return method


def _method(method: str | ResizeMethod) -> ResizeMethod:
    return method if isinstance(method, ResizeMethod) else ResizeMethod.from_string(method)


def _triangle(x: Any) -> Any:
    return pnp.maximum(0.0, 1.0 - pnp.abs(x))


def _keys_cubic(x: Any) -> Any:
    a = -0.5
    x = pnp.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return pnp.where(x <= 1, near, pnp.where(x < 2, far, 0.0))


def _lanczos(radius: int) -> Callable[[Any], Any]:
    def kernel(x: Any) -> Any:
        x = pnp.abs(x)
        safe = pnp.where(x == 0, 1.0, x)
        value = radius * pnp.sin(np.pi * safe) * pnp.sin(np.pi * safe / radius) / (np.pi ** 2 * safe * safe)
        return pnp.where(x == 0, 1.0, pnp.where(x > radius, 0.0, value))
    return kernel


_KERNELS: dict[ResizeMethod, Callable[[Any], Any]] = {
    ResizeMethod.LINEAR: _triangle,
    ResizeMethod.CUBIC: _keys_cubic,
    ResizeMethod.LANCZOS3: _lanczos(3),
    ResizeMethod.LANCZOS5: _lanczos(5),
}


def _weights(in_size: int, out_size: int, scale: Any, translation: Any, kernel: Callable[[Any], Any],
             antialias: bool, dtype: Any) -> Any:
    """The (in_size, out_size) matrix taking one axis of the input to the output."""
    scale = pnp.asarray(scale, dtype)
    translation = pnp.asarray(translation, dtype)
    inv_scale = 1.0 / scale
    kernel_scale = pnp.maximum(inv_scale, 1.0) if antialias else pnp.asarray(1.0, dtype)
    sample = (pnp.arange(out_size, dtype=dtype) + 0.5 - translation) * inv_scale - 0.5
    x = pnp.abs(sample[None, :] - pnp.arange(in_size, dtype=dtype)[:, None]) / kernel_scale
    w = kernel(x)
    total = pnp.sum(w, axis=0, keepdims=True)
    eps = float(np.finfo(np.dtype(dtype)).eps)
    w = pnp.where(pnp.abs(total) > 1000.0 * eps, w / pnp.where(total != 0, total, 1), 0.0)
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return pnp.where(inside[None, :], w, 0.0).astype(dtype)


def _compute_dtype(image: Any) -> Any:
    if dtypes.issubdtype(image.dtype, np.inexact):
        return image.dtype
    return dtypes.promote_types(image.dtype, np.float32)


def _check_shape(name: str, image: Any, shape: Sequence[int]) -> tuple[int, ...]:
    shape = tuple(int(d) for d in shape)
    if len(shape) != image.ndim:
        raise ValueError(f"{name}: the shape {shape} must have the image's rank {image.ndim} "
                         f"(image shape {tuple(image.shape)})")
    if any(d < 0 for d in shape):
        raise ValueError(f"{name}: the shape {shape} has a negative size")
    return shape


def scale_and_translate(image: Any, shape: Sequence[int], spatial_dims: Sequence[int], scale: Any,
                        translation: Any, method: str | ResizeMethod = "linear", antialias: bool = True,
                        precision: Any = None) -> Array:
    """Resample ``image`` to ``shape`` along ``spatial_dims`` with per-axis
    ``scale`` and ``translation`` (see the module's documentation).  Axes not in
    ``spatial_dims`` must keep their size.  ``method`` cannot be ``"nearest"``."""
    image = pnp.asarray(image)
    shape = _check_shape("scale_and_translate", image, shape)
    spatial_dims = tuple(int(d) % image.ndim for d in spatial_dims)
    for d in range(image.ndim):
        if d not in spatial_dims and shape[d] != image.shape[d]:
            raise ValueError(f"scale_and_translate: axis {d} is not a spatial dimension but its size changes "
                             f"from {image.shape[d]} to {shape[d]}")
    resize_method = _method(method)
    if resize_method is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate: the 'nearest' method is not supported here (use resize)")
    scale = pnp.asarray(scale)
    translation = pnp.asarray(translation)
    if scale.shape != (len(spatial_dims),) or translation.shape != (len(spatial_dims),):
        raise ValueError(f"scale_and_translate: scale and translation need one entry per spatial dimension "
                         f"({len(spatial_dims)}), got shapes {tuple(scale.shape)} and {tuple(translation.shape)}")
    return _resample(image, shape, spatial_dims, scale, translation, _KERNELS[resize_method], antialias)


def _resample(image: Any, shape: tuple[int, ...], spatial_dims: tuple[int, ...], scale: Any, translation: Any,
              kernel: Callable[[Any], Any], antialias: bool) -> Array:
    dtype = _compute_dtype(image)
    out = image.astype(dtype)
    for i, d in enumerate(spatial_dims):
        w = _weights(image.shape[d], shape[d], scale[i], translation[i], kernel, antialias,
                     dtypes.to_inexact_dtype(np.dtype(dtype)) if not dtypes.issubdtype(dtype, np.complexfloating)
                     else np.float32 if dtype == np.complex64 else np.float64)
        out = pnp.moveaxis(pnp.tensordot(pnp.moveaxis(out, d, -1), w.astype(dtype), axes=1), -1, d)
    return out


def _resize_nearest(image: Any, shape: tuple[int, ...]) -> Array:
    out = image
    for d, (n_in, n_out) in enumerate(zip(image.shape, shape)):
        if n_in == n_out:
            continue
        idx = np.floor((np.arange(n_out) + 0.5) * n_in / n_out).astype(np.int32)
        out = pnp.take(out, pnp.asarray(np.minimum(idx, n_in - 1)), axis=d)
    return out


def resize(image: Any, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision: Any = None) -> Array:
    """``image`` resampled to ``shape`` with ``method`` (see the module's
    documentation); every axis whose size changes is resampled."""
    image = pnp.asarray(image)
    shape = _check_shape("resize", image, shape)
    resize_method = _method(method)
    if resize_method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    spatial = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    if not spatial:
        return image
    scale = pnp.asarray([shape[d] / image.shape[d] for d in spatial], np.float32)
    translation = pnp.zeros((len(spatial),), np.float32)
    return _resample(image, shape, spatial, scale, translation, _KERNELS[resize_method], antialias)
