"""More of ``jax.numpy``: window functions (``bartlett``, ``blackman``,
``hamming``, ``hanning``, ``kaiser``), ``vectorize``, ``frompyfunc``/``ufunc``,
``packbits``/``unpackbits``, ``histogram2d``/``histogramdd``, ``fromfunction``,
host I/O and buffer constructors (``load``, ``save``, ``savez``, ``frombuffer``,
``fromstring``, ``from_dlpack``; ``fromfile``/``fromiter`` refused as in JAX),
NumPy's print options and ``array_repr``/``array_str``, and NumPy type aliases.

Core has no ``vmap``: ``vectorize`` and ``ufunc`` loop over the broadcast batch
with ``lax.map`` (one compiled loop; values and derivatives as JAX's ``vmap``).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.bessel import bessel_i0
from plait_core.numpy import creation as _creation
from plait_core.numpy import dtypes as _np_dtypes
from plait_core.numpy import histograms as _histograms
from plait_core.numpy import logic as _logic
from plait_core.numpy import math as _math
from plait_core.numpy import reductions as _reductions
from plait_core.numpy import signal as _signal
from plait_core.numpy import sorting as _sorting
from plait_core.numpy._util import ArrayLike, as_array, concrete_int, dtype_of
from plait_core.numpy.dtypes import complex64, complex128
from plait_core.numpy.pad import pad as pad_
from plait_core.numpy.shape import (
    broadcast_to,
    concatenate,
    expand_dims,
    moveaxis,
    ndim,
    ravel,
    reshape,
    stack,
)
from plait_core.numpy.updates import scatter_update

Array = Any

# NumPy's names JAX re-exports as they are.
ComplexWarning = np.exceptions.ComplexWarning
character = np.character
flexible = np.flexible
object_ = np.object_
cdouble = complex128
csingle = complex64
save = np.save
savez = np.savez
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def array_repr(arr: Any, max_line_width: int | None = None, precision: int | None = None,
               suppress_small: bool | None = None) -> str:
    """NumPy's ``array_repr`` of the array's values."""
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a: Any, max_line_width: int | None = None, precision: int | None = None,
              suppress_small: bool | None = None) -> str:
    """NumPy's ``array_str`` of the array's values."""
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


# ---------------------------------------------------------------------------
# Windows


def _window_n(M: int, name: str) -> int:
    return concrete_int(M, f"{name}: M")


def _cosine_window(M: int, coeffs: Sequence[float], name: str) -> Array:
    m = _window_n(M, name)
    if m < 1:
        return _creation.zeros((0,), _np_dtypes.float32)
    if m == 1:
        return _creation.ones((1,), _np_dtypes.float32)
    n = _creation.arange(m) * (2 * np.pi / (m - 1))
    out = _creation.zeros((m,))
    for k, c in enumerate(coeffs):
        out = out + c * _math.cos(k * n)
    return out


def hanning(M: int) -> Array:
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (M - 1))``."""
    return _cosine_window(M, (0.5, -0.5), "hanning")


def hamming(M: int) -> Array:
    """The Hamming window ``0.54 - 0.46 cos(2 pi n / (M - 1))``."""
    return _cosine_window(M, (0.54, -0.46), "hamming")


def blackman(M: int) -> Array:
    """The Blackman window ``0.42 - 0.5 cos(2 pi n/(M-1)) + 0.08 cos(4 pi n/(M-1))``."""
    return _cosine_window(M, (0.42, -0.5, 0.08), "blackman")


def bartlett(M: int) -> Array:
    """The triangular Bartlett window ``1 - |2n/(M-1) - 1|``."""
    m = _window_n(M, "bartlett")
    if m < 1:
        return _creation.zeros((0,), _np_dtypes.float32)
    if m == 1:
        return _creation.ones((1,), _np_dtypes.float32)
    n = _creation.arange(m).astype(_np_dtypes.float32)
    return 1 - _math.abs(2 * n / (m - 1) - 1)


def kaiser(M: int, beta: ArrayLike) -> Array:
    """The Kaiser window ``I0(beta sqrt(1 - (2n/(M-1) - 1)**2)) / I0(beta)``."""
    m = _window_n(M, "kaiser")
    if m < 1:
        return _creation.zeros((0,), _np_dtypes.float32)
    if m == 1:
        return _creation.ones((1,), _np_dtypes.float32)
    b = _creation.asarray(beta, _np_dtypes.float32)
    t = 2 * _creation.arange(m).astype(_np_dtypes.float32) / (m - 1) - 1
    return bessel_i0(b * _math.sqrt(_logic.clip(1 - t * t, 0, None))) / bessel_i0(b)


# ---------------------------------------------------------------------------
# vectorize and ufuncs

_DIMS = r"\((?:\w+(?:,\s*\w+)*)?\)"
_SIGNATURE = re.compile(rf"^\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*->\s*{_DIMS}(?:\s*,\s*{_DIMS})*\s*$")


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    if not _SIGNATURE.match(signature):
        raise ValueError(f"vectorize: not a valid gufunc signature: {signature!r}")
    ins, outs = signature.split("->")

    def groups(s: str) -> list[tuple[str, ...]]:
        return [tuple(d.strip() for d in g.split(",") if d.strip()) for g in re.findall(r"\(([^)]*)\)", s)]

    return groups(ins), groups(outs)


def _loop(fun: Callable[..., Any], args: list[Array], loop_shape: tuple[int, ...], core_ndims: list[int]) -> Any:
    """``fun`` over every index of ``loop_shape`` (the arguments' leading dimensions),
    by one ``lax.map`` over the flattened batch; outputs get ``loop_shape`` in front."""
    size = int(np.prod(loop_shape)) if loop_shape else 1
    flat = [reshape(a, (size, *a.shape[a.ndim - c:])) for a, c in zip(args, core_ndims)]
    out = lax.map(lambda xs: fun(*xs), tuple(flat))
    return _reshape_outputs(out, loop_shape)


def _reshape_outputs(out: Any, loop_shape: tuple[int, ...]) -> Any:
    if isinstance(out, tuple):
        return tuple(reshape(o, (*loop_shape, *o.shape[1:])) for o in out)
    return reshape(out, (*loop_shape, *out.shape[1:]))


class vectorize:
    """Turn ``pyfunc`` on scalars (or on core shapes given by a gufunc
    ``signature`` such as ``"(n),(n)->()"``) into a function on arrays that
    broadcasts over the leading dimensions.  ``excluded`` names positions or
    keywords passed through unchanged."""

    def __init__(self, pyfunc: Callable[..., Any], *, excluded: Any = frozenset(), signature: str | None = None):
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fixed = {i: a for i, a in enumerate(args) if i in self.excluded}
        fixed_kw = {k: v for k, v in kwargs.items() if k in self.excluded}
        free_pos = [i for i in range(len(args)) if i not in self.excluded]
        free_kw = [k for k in kwargs if k not in self.excluded]
        arrays = [_creation.asarray(args[i]) for i in free_pos] + [_creation.asarray(kwargs[k]) for k in free_kw]
        core: list[tuple[str, ...]]
        if self.signature is None:
            core = [()] * len(arrays)
        else:
            ins, _ = _parse_signature(self.signature)
            if len(ins) != len(arrays):
                raise TypeError(f"vectorize: the signature {self.signature!r} has {len(ins)} inputs, "
                                f"got {len(arrays)} non-excluded arguments")
            core = ins
        sizes: dict[str, int] = {}
        loop_shapes = []
        for a, dims in zip(arrays, core):
            if a.ndim < len(dims):
                raise ValueError(f"vectorize: input with shape {a.shape} has fewer dimensions than its core {dims}")
            for name, d in zip(dims, a.shape[a.ndim - len(dims):]):
                if sizes.setdefault(name, int(d)) != int(d):
                    raise ValueError(f"vectorize: inconsistent size for core dimension {name!r}: {sizes[name]} vs {d}")
            loop_shapes.append(tuple(a.shape[:a.ndim - len(dims)]))
        loop_shape = tuple(np.broadcast_shapes(*loop_shapes)) if loop_shapes else ()
        arrays = [broadcast_to(a, (*loop_shape, *a.shape[a.ndim - len(d):])) for a, d in zip(arrays, core)]

        def call(*xs: Any) -> Any:
            full = dict(fixed)
            for i, x in zip(free_pos, xs):
                full[i] = x
            kw = dict(fixed_kw)
            for k, x in zip(free_kw, xs[len(free_pos):]):
                kw[k] = x
            out = self.pyfunc(*[full[i] for i in range(len(args))], **kw)
            return tuple(_creation.asarray(o) for o in out) if isinstance(out, tuple) else _creation.asarray(out)

        if not loop_shape:
            return call(*arrays)
        return _loop(call, arrays, loop_shape, [len(d) for d in core])


class ufunc:
    """A universal function from a scalar Python function of ``nin`` arguments and
    ``nout`` results: calls broadcast elementwise; binary ufuncs also have
    ``outer``, ``reduce`` and ``accumulate`` (loops of the function) and ``at``."""

    def __init__(self, func: Callable[..., Any], /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None) -> None:
        self.func = func
        self.nin, self.nout = int(nin), int(nout)
        self.nargs = nargs if nargs is not None else self.nin
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._vectorized = vectorize(func)

    def __repr__(self) -> str:
        return f"<plait.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any) -> Any:
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}: expected {self.nin} arguments, got {len(args)}")
        return self._vectorized(*args)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{self.__name__}.{method} needs a binary ufunc with one output")

    def outer(self, A: ArrayLike, B: ArrayLike, /) -> Array:
        """``func(a, b)`` for every pair of entries of ``A`` and ``B``."""
        self._binary("outer")
        a, b = _creation.asarray(A), _creation.asarray(B)
        return self(reshape(a, (*a.shape, *([1] * b.ndim))), b)

    def reduce(self, a: ArrayLike, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: ArrayLike | None = None, where: ArrayLike | None = None) -> Array:
        """Fold ``func`` over ``axis`` (left to right), from ``initial`` or the identity if given."""
        self._binary("reduce")
        if out is not None or where is not None:
            raise NotImplementedError(f"{self.__name__}.reduce: out= and where= are not supported")
        x = as_array(a, f"{self.__name__}.reduce")
        if dtype is not None:
            x = x.astype(dtype)
        if axis is None:
            x, axis = ravel(x), 0
        moved = moveaxis(x, axis, 0)
        start = initial if initial is not None else self.identity
        if start is None:
            if moved.shape[0] == 0:
                raise ValueError(f"{self.__name__}.reduce: an empty axis needs an identity or initial")
            carry, rest = moved[0], moved[1:]
        else:
            carry, rest = broadcast_to(_creation.asarray(start, dtype_of(moved)), moved.shape[1:]), moved
        result = lax.scan(lambda c, v: (self(c, v).astype(dtype_of(moved)), None), carry, rest)[0]
        return expand_dims(result, axis) if keepdims else result

    def accumulate(self, a: ArrayLike, axis: int = 0, dtype: Any = None, out: None = None) -> Array:
        """The running fold of ``func`` along ``axis``."""
        self._binary("accumulate")
        if out is not None:
            raise NotImplementedError(f"{self.__name__}.accumulate: out= is not supported")
        x = as_array(a, f"{self.__name__}.accumulate")
        if dtype is not None:
            x = x.astype(dtype)
        moved = moveaxis(x, axis, 0)
        if moved.shape[0] == 0:
            return x

        def step(c: Any, v: Any) -> tuple[Any, Any]:
            n = self(c, v).astype(dtype_of(moved))
            return n, n

        _, ys = lax.scan(step, moved[0], moved[1:])
        return moveaxis(concatenate([moved[:1], ys]), 0, axis)

    def at(self, a: ArrayLike, indices: Any, b: ArrayLike | None = None, /, *, inplace: bool = True) -> Array:
        """``a`` with ``a[indices] = func(a[indices], b)`` (``inplace=False`` required)."""
        if inplace:
            raise ValueError(f"{self.__name__}.at: JAX arrays are immutable; pass inplace=False")
        x = as_array(a, f"{self.__name__}.at")
        current = x[indices]
        new = self(current) if b is None else self(current, b)
        return scatter_update(x, indices, new, "set")

    def reduceat(self, a: ArrayLike, indices: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Array:
        """``reduce`` over the slices ``[indices[i], indices[i+1])`` along ``axis``
        (concrete ``indices``)."""
        self._binary("reduceat")
        x = as_array(a, f"{self.__name__}.reduceat")
        idx = [int(i) for i in np.asarray(indices)]
        n = x.shape[axis]
        parts = []
        for k, i in enumerate(idx):
            j = idx[k + 1] if k + 1 < len(idx) else n
            piece = lax.slice_in_dim(x, i, max(j, i + 1), axis=axis)
            parts.append(self.reduce(piece, axis=axis, dtype=dtype, keepdims=True))
        return concatenate(parts, axis=axis)


def frompyfunc(func: Callable[..., Any], /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A :class:`ufunc` from a scalar Python function."""
    return ufunc(func, nin, nout, identity=identity)


# ---------------------------------------------------------------------------
# Bits and histograms


def packbits(a: ArrayLike, axis: int | None = None, bitorder: str = "big") -> Array:
    """Pack the truthiness of ``a``'s entries into ``uint8`` (8 per byte, zero-padded)
    along ``axis`` (the flattened array if None)."""
    if bitorder not in ("big", "little"):
        raise ValueError(f"packbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    x = as_array(a, "packbits")
    if not (np.issubdtype(dtype_of(x), np.integer) or dtype_of(x) == np.bool_):
        raise TypeError(f"packbits: expected an integer or boolean array, got {dtype_of(x)}")
    if axis is None:
        x, axis = ravel(x), 0
    bits = (x != 0).astype(np.uint8)
    bits = moveaxis(bits, axis, -1)
    n = bits.shape[-1]
    pad = (-n) % 8
    bits = pad_(bits, [(0, 0)] * (bits.ndim - 1) + [(0, pad)])
    bits = reshape(bits, (*bits.shape[:-1], -1, 8))
    weights = np.array([128, 64, 32, 16, 8, 4, 2, 1] if bitorder == "big" else [1, 2, 4, 8, 16, 32, 64, 128], np.uint8)
    packed = _reductions.sum(bits * weights, axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a: ArrayLike, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Array:
    """Unpack ``uint8`` entries into bits (0/1 as ``uint8``) along ``axis``; ``count``
    keeps that many bits (negative: drops from the end)."""
    if bitorder not in ("big", "little"):
        raise ValueError(f"unpackbits: bitorder must be 'big' or 'little', got {bitorder!r}")
    x = as_array(a, "unpackbits")
    if dtype_of(x) != np.uint8:
        raise TypeError(f"unpackbits: expected a uint8 array, got {dtype_of(x)}")
    if axis is None:
        x, axis = ravel(x), 0
    shifts = np.arange(7, -1, -1, dtype=np.uint8) if bitorder == "big" else np.arange(8, dtype=np.uint8)
    moved = moveaxis(x, axis, -1)
    bits = (moved[..., None] >> shifts) & np.uint8(1)
    bits = reshape(bits, (*moved.shape[:-1], -1))
    if count is not None:
        bits = bits[..., :count] if count >= 0 else bits[..., :bits.shape[-1] + count]
    return moveaxis(bits, -1, axis)


def histogramdd(sample: ArrayLike, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Array, list[Array]]:
    """The ``D``-dimensional histogram of ``sample`` (``N`` points by ``D``
    coordinates): ``(counts, [edges per dimension])``; bins and ranges per
    dimension or shared.  Last bins include their right edge."""
    x = as_array(sample, "histogramdd")
    if x.ndim != 2:
        raise ValueError(f"histogramdd: sample must be 2-D (N points, D dims), got shape {x.shape}")
    d = int(x.shape[1])
    bins_list = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(bins_list) != d:
        raise ValueError(f"histogramdd: {len(bins_list)} bin specifications for {d} dimensions")
    ranges = list(range) if range is not None else [None] * d
    edges = [_histograms.histogram_bin_edges(x[:, i], bins_list[i], ranges[i]) for i in builtins.range(d)]
    nbins = [int(e.shape[0]) - 1 for e in edges]
    flat = _creation.zeros(x.shape[0], np.int32)
    inside = _creation.ones(x.shape[0], bool)
    for i in builtins.range(d):
        e = edges[i]
        col = x[:, i].astype(e.dtype)
        idx = _sorting.searchsorted(e, col, side="right") - 1
        idx = _logic.where(col == e[-1], nbins[i] - 1, idx)
        inside = inside & (idx >= 0) & (idx < nbins[i])
        flat = flat * nbins[i] + _logic.clip(idx, 0, nbins[i] - 1)
    total = int(np.prod(nbins))
    if weights is None:
        w = inside.astype(np.int32)
    else:
        wa = _creation.asarray(weights)
        w = _logic.where(inside, wa, _creation.zeros((), dtype_of(wa)))
    counts = reshape(_histograms.bincount(flat, weights=w, length=total), tuple(nbins))
    if weights is None:
        counts = counts.astype(np.int32)
    if density:
        counts = counts / _reductions.sum(counts)
        for i in builtins.range(d):
            shape = [1] * d
            shape[i] = nbins[i]
            counts = counts / reshape(_signal.diff(edges[i]), tuple(shape))
    return counts, edges


def histogram2d(x: ArrayLike, y: ArrayLike, bins: Any = 10, range: Sequence[Any] | None = None,
                weights: ArrayLike | None = None, density: bool | None = None) -> tuple[Array, Array, Array]:
    """The 2-D histogram of points ``(x, y)``: ``(counts, x_edges, y_edges)``."""
    sample = stack([ravel(_creation.asarray(x)), ravel(_creation.asarray(y))], axis=1)
    if not isinstance(bins, (list, tuple)) and ndim(bins) == 1:
        bins = [bins, bins]
    counts, edges = histogramdd(sample, bins, range, weights, density)
    return counts, edges[0], edges[1]



# ---------------------------------------------------------------------------
# Construction from functions, buffers and files


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float, **kwargs: Any) -> Array:
    """``function(*grids, **kwargs)`` where the grids are the index arrays of ``shape``
    (as ``indices(shape, dtype)``)."""
    grids = _creation.indices(tuple(shape), dtype=dtype)
    return function(*[grids[i] for i in builtins.range(len(tuple(shape)))], **kwargs)


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Array:
    """A 1-D array of the bytes of ``buffer`` read as ``dtype`` (copied to an array)."""
    return _creation.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Array:
    """A 1-D array from the numbers in ``string`` separated by ``sep``."""
    return _creation.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Array:
    """An array from an object supporting the DLPack protocol (copied to the host
    and back; ``device`` is not supported)."""
    if device is not None:
        raise NotImplementedError("from_dlpack: device= is not supported; use plait.device_put")
    return _creation.array(np.from_dlpack(x), copy=True if copy is None else copy)


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """``numpy.load``, with an array result converted to a plait array.  As in JAX,
    2-byte void data (what ``numpy.save`` writes for ``bfloat16``, whose dtype the
    ``.npy`` header cannot name) is read back as ``bfloat16``; other void data
    stays the NumPy array ``numpy.load`` returns."""
    out = np.load(file, *args, **kwargs)
    if not isinstance(out, np.ndarray):
        return out
    if out.dtype == np.dtype("V2"):
        out = out.view(dtypes.bfloat16)
    elif out.dtype.kind == "V":
        return out
    return _creation.asarray(out)


def fromfile(*args: Any, **kwargs: Any) -> Array:
    """Not supported, as in JAX: reading a file is not pure (use ``asarray(numpy.fromfile(...))``)."""
    raise NotImplementedError(
        "plait.numpy.fromfile is not implemented because reading a file is not pure (JAX refuses it too); "
        "use plait.numpy.asarray(numpy.fromfile(...)) outside transformed functions"
    )


def fromiter(*args: Any, **kwargs: Any) -> Array:
    """Not supported, as in JAX: consuming an iterator is not pure (use ``asarray(numpy.fromiter(...))``)."""
    raise NotImplementedError(
        "plait.numpy.fromiter is not implemented because consuming an iterator is not pure (JAX refuses it too); "
        "use plait.numpy.asarray(numpy.fromiter(...)) outside transformed functions"
    )


__all__ = [
    "ComplexWarning", "array_repr", "array_str", "bartlett", "blackman", "cdouble", "character", "csingle",
    "flexible", "from_dlpack", "frombuffer", "fromfile", "fromfunction", "fromiter", "frompyfunc", "fromstring",
    "get_printoptions", "hamming", "hanning", "histogram2d", "histogramdd", "kaiser", "load", "object_",
    "packbits", "printoptions", "save", "savez", "set_printoptions", "ufunc", "unpackbits", "vectorize",
]
