"""Neural-network layers as pairs of functions, as ``jax.example_libraries.stax``.

A layer is ``(init_fun, apply_fun)``: ``init_fun(rng, input_shape)`` returns
``(output_shape, params)`` and ``apply_fun(params, inputs, **kwargs)`` returns
the outputs (``rng=`` a key, for layers that draw random numbers).  Shapes are
tuples whose unknown sizes may be ``-1`` (a batch size, say).  Layer
constructors are CamelCase (``Dense(10)``); ``Flatten``, ``Identity``,
``FanInSum`` and the activations (``Relu``, ``Tanh``, ...) are layers already.
Combinators: ``serial`` chains layers, ``parallel`` applies layers to the
items of a list of inputs, ``FanOut``/``FanInSum``/``FanInConcat`` split and
merge, ``shape_dependent`` builds a layer from the input shape.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from plait import lax, random
from plait import numpy as pnp
from plait_core.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from plait_core.nn_initializers import glorot_normal, normal, ones, zeros

Layer = tuple[Callable[..., Any], Callable[..., Any]]
Shape = tuple[Any, ...]

glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

_GLOROT_NORMAL = glorot_normal()
_NORMAL = normal()
_NORMAL_TINY = normal(1e-6)


def Dense(out_dim: int, W_init: Callable[..., Any] = _GLOROT_NORMAL, b_init: Callable[..., Any] = _NORMAL) -> Layer:
    """A fully connected layer ``inputs @ W + b`` with ``out_dim`` outputs
    (``W`` of shape ``(input_shape[-1], out_dim)``)."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        k1, k2 = random.split(rng)
        params = (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))
        return (*input_shape[:-1], out_dim), params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        return pnp.add(pnp.dot(inputs, W), b)

    return init_fun, apply_fun


def _kernel_shape(
    dimension_numbers: tuple[str, str, str], out_chan: int, filter_shape: Sequence[int], input_shape: Shape
) -> tuple[int, ...]:
    lhs_spec, rhs_spec, _ = dimension_numbers
    sizes = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return tuple(out_chan if c == "O" else in_chan if c == "I" else next(sizes) for c in rhs_spec)


def _conv_layer(
    transpose: bool,
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None,
    padding: Any,
    W_init: Callable[..., Any] | None,
    b_init: Callable[..., Any],
) -> Layer:
    _, rhs_spec, out_spec = dimension_numbers
    one = (1,) * len(filter_shape)
    strides = tuple(strides) if strides else one
    w_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        kernel_shape = _kernel_shape(dimension_numbers, out_chan, filter_shape, input_shape)
        shape_of = lax.conv_transpose_shape_tuple if transpose else lax.conv_general_shape_tuple
        output_shape = shape_of(input_shape, kernel_shape, strides, padding, dimension_numbers)
        bias_shape = tuple(out_chan if c == "C" else 1 for c in out_spec)
        k1, k2 = random.split(rng)
        return tuple(output_shape), (w_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        W, b = params
        if transpose:
            out = lax.conv_transpose(inputs, W, strides, padding, dimension_numbers=dimension_numbers)
        else:
            out = lax.conv_general_dilated(inputs, W, strides, padding, one, one, dimension_numbers=dimension_numbers)
        return pnp.add(out, b)

    return init_fun, apply_fun


def GeneralConv(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = _NORMAL_TINY,
) -> Layer:
    """A convolution with ``out_chan`` output channels over windows of
    ``filter_shape``; ``dimension_numbers`` names the input, kernel and output
    layouts (``('NHWC', 'HWIO', 'NHWC')`` for :func:`Conv`).  ``W_init``
    defaults to Glorot normal over the kernel's I and O axes."""
    return _conv_layer(False, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init)


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(
    dimension_numbers: tuple[str, str, str],
    out_chan: int,
    filter_shape: Sequence[int],
    strides: Sequence[int] | None = None,
    padding: Any = "VALID",
    W_init: Callable[..., Any] | None = None,
    b_init: Callable[..., Any] = _NORMAL_TINY,
) -> Layer:
    """A transposed convolution (``lax.conv_transpose``), arguments as :func:`GeneralConv`."""
    return _conv_layer(True, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init)


ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))


def BatchNorm(
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Callable[..., Any] = zeros,
    gamma_init: Callable[..., Any] = ones,
) -> Layer:
    """Normalisation over ``axis`` with the statistics of the batch itself
    (no running averages), then ``gamma * z + beta`` with learned ``gamma``
    (when ``scale``) and ``beta`` (when ``center``) over the other axes."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params: Any, x: Any, **kwargs: Any) -> Any:
        beta, gamma = params
        ndim = pnp.ndim(x)
        kept = tuple(i for i in range(ndim) if i in axes)
        z = standardize(x, kept, epsilon=epsilon)
        if scale:
            z = pnp.multiply(pnp.expand_dims(gamma, kept), z)
        if center:
            z = pnp.add(z, pnp.expand_dims(beta, kept))
        return z

    return init_fun, apply_fun


def elementwise(fun: Callable[..., Any], **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying ``fun(inputs, **fun_kwargs)``."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(pnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(pnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _non_spatial_axes(spec: str | None, ndim: int) -> tuple[int, int]:
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _pooling_layer(reducer: Callable[[Any, Any], Any], init_val: float, average: bool = False) -> Callable[..., Layer]:
    def PoolingLayer(
        window_shape: Sequence[int],
        strides: Sequence[int] | None = None,
        padding: Any = "VALID",
        spec: str | None = None,
    ) -> Layer:
        spatial_window = tuple(window_shape)
        spatial_strides = tuple(strides) if strides else (1,) * len(spatial_window)
        window, steps = spatial_window, spatial_strides
        for i in sorted(_non_spatial_axes(spec, len(spatial_window) + 2)):
            window = (*window[:i], 1, *window[i:])
            steps = (*steps[:i], 1, *steps[i:])

        def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
            pads: Any = lax.padtype_to_pads(input_shape, window, steps, padding)
            return tuple(lax.reduce_window_shape_tuple(input_shape, window, steps, pads)), ()

        def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
            out = lax.reduce_window(inputs, init_val, reducer, window, steps, padding)
            if not average:
                return out
            non_spatial = _non_spatial_axes(spec, inputs.ndim)
            spatial_shape = tuple(d for i, d in enumerate(inputs.shape) if i not in non_spatial)
            counts = lax.reduce_window(
                pnp.ones(spatial_shape, inputs.dtype), 0.0, lax.add, spatial_window, spatial_strides, padding
            )
            for i in sorted(non_spatial):
                counts = pnp.expand_dims(counts, i)
            return pnp.divide(out, counts)

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -math.inf)
"""``MaxPool(window_shape, strides=None, padding='VALID', spec=None)``: the
maximum over each window of the spatial axes (all but N and C of ``spec``,
default NHWC-like: the first and last axes)."""
SumPool = _pooling_layer(lax.add, 0.0)
"""The sum over each window (arguments as :data:`MaxPool`)."""
AvgPool = _pooling_layer(lax.add, 0.0, average=True)
"""The mean over each window; with padding, over the window's entries inside the input."""


def _flatten() -> Layer:
    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return pnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()
"""A layer flattening every axis but the first."""


def _identity() -> Layer:
    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return inputs

    return init_fun, apply_fun


Identity = _identity()
"""A layer returning its inputs."""


def FanOut(num: int) -> Layer:
    """A layer returning a list of ``num`` copies of its inputs."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[list[Shape], Any]:
        return [input_shape] * num, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum() -> Layer:
    def init_fun(rng: Any, input_shape: Sequence[Shape]) -> tuple[Shape, Any]:
        return input_shape[0], ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return functools.reduce(pnp.add, inputs)

    return init_fun, apply_fun


FanInSum = _fan_in_sum()
"""A layer summing a list of inputs."""


def FanInConcat(axis: int = -1) -> Layer:
    """A layer concatenating a list of inputs along ``axis``."""

    def init_fun(rng: Any, input_shape: Sequence[Shape]) -> tuple[Shape, Any]:
        first = input_shape[0]
        ax = axis % len(first)
        size = sum(shape[ax] for shape in input_shape)
        return (*first[:ax], size, *first[ax + 1:]), ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return pnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout keeping each entry with probability ``rate`` (as in JAX's stax,
    ``rate`` is the keep probability) and scaling kept entries by ``1 / rate``
    when ``mode == 'train'``; the identity otherwise.  ``apply_fun`` needs
    ``rng=`` a key."""

    def init_fun(rng: Any, input_shape: Shape) -> tuple[Shape, Any]:
        return input_shape, ()

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "stax.Dropout: apply_fun needs a PRNG key as its rng keyword argument, e.g. "
                "apply_fun(params, inputs, rng=random.key(0))"
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return pnp.where(keep, pnp.divide(inputs, rate), 0)

    return init_fun, apply_fun


def _layer_keys(rng: Any, n: int) -> Sequence[Any]:
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers: Layer) -> Layer:
    """Layers applied one after the other; the parameters are a list, one entry
    per layer, and ``rng=`` is split among the layers."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Any) -> tuple[Any, list[Any]]:
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        keys = _layer_keys(kwargs.pop("rng", None), len(apply_funs))
        for fun, param, key in zip(apply_funs, params, keys):
            inputs = fun(param, inputs, rng=key, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Layers applied to the matching items of a list of inputs (a list of
    input shapes at ``init_fun``); parameters and outputs are per layer."""
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng: Any, input_shape: Sequence[Any]) -> tuple[Any, Any]:
        keys = random.split(rng, len(init_funs))
        done = [init(key, shape) for init, key, shape in zip(init_funs, keys, input_shape)]
        return tuple(shape for shape, _ in done), tuple(param for _, param in done)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        keys = _layer_keys(kwargs.pop("rng", None), len(apply_funs))
        return [f(p, x, rng=k, **kwargs) for f, p, x, k in zip(apply_funs, params, inputs, keys)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Shape], Layer]) -> Layer:
    """A layer built by ``make_layer(input_shape)`` at each call (for layers
    whose structure depends on the input's shape)."""

    def init_fun(rng: Any, input_shape: Shape) -> Any:
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params: Any, inputs: Any, **kwargs: Any) -> Any:
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun


__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout", "Elu", "Exp",
    "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv", "GeneralConvTranspose", "Identity",
    "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu", "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh",
    "elementwise", "elu", "gelu", "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal",
    "ones", "parallel", "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax", "softplus",
    "standardize", "zeros",
]
