"""Array methods and operators, installed onto array classes.

:func:`install_array_methods` gives a class (core's ``Tracer``; plait-dispatch's
device ``Array``) NumPy's operators (``+ - * / // % ** @ & | ^ ~ << >>``,
comparisons, both plain and reflected), ``x[idx]``, ``x.at[idx]``, ``x.T``,
``x.mT``, ``x.real``/``x.imag`` and the usual methods (``x.sum()``,
``x.reshape(2, 3)``, ``x.astype(f32)``, ...), each calling the matching
``plait.numpy`` function.  An operand that is not an array or scalar makes the
operator return ``NotImplemented``, so Python reports the unsupported types.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import _array_types as _ARRAY_TYPES
from plait_core.abstract import is_known_value
from plait_core.dims import SymbolicDim
from plait_core.eager_fast import shortcuts as _fast
from plait_core.numpy import (
    indexing,
    linalg,
    logic,
    math,
    reductions,
    repetition,
    selection,
    shape,
    sorting,
    updates,
)
from plait_core.numpy._util import _PY_SCALARS, Array
from plait_core.primitives import elementwise as _ew
from plait_core.trace import EvalTrace as _EvalTrace
from plait_core.trace import _state as _trace_state
from plait_core.trace import concrete_or_error

Binary = Callable[[Any, Any], Any]

_SHORTCUTS: dict[Any, Any] = {math.add: _ew.add_p, math.subtract: _ew.sub_p, math.multiply: _ew.mul_p}


def _is_operand(x: Any) -> builtins.bool:
    t = x.__class__
    if t in _ARRAY_TYPES or t in _PY_SCALARS:  # the common operands, answered first
        return True
    if isinstance(x, (list, tuple)):
        # Python would otherwise try list repetition with the array as the count.
        raise TypeError(f"array operators do not accept a {type(x).__name__}; convert it with "
                        "plait.numpy.asarray first")
    # A symbolic dimension (``x / x.shape[0]`` under mask) is an integer operand.
    return (is_known_value(x) and not isinstance(x, str)) or type(x) is SymbolicDim


def _as_operand(x: Any) -> Any:
    """As JAX's array operators: an operand that is not an array but whose class
    defines ``__jax_array__`` (flax.nnx's Variables) stands for the array it gives.
    Asked only of what is not already an operand (the hot path stays one check)."""
    if x.__class__ not in _ARRAY_TYPES and hasattr(x.__class__, "__jax_array__"):
        return x.__jax_array__()
    return x


def _forward(fn: Binary, name: str) -> Callable[[Any, Any], Any]:
    prim = _SHORTCUTS.get(fn)
    if prim is not None:
        # ``x + y``, ``x - y``, ``x * y`` of a device Array eagerly: the
        # backend's shortcut when the pair binds the primitive as it is.
        def op(self: Any, other: Any) -> Any:
            if self.__class__ is _fast.array_type and _trace_state.trace.__class__ is _EvalTrace:
                out = math._shortcut_pair(prim, self, other)
                if out is not None:
                    return out
            if not _is_operand(other):
                other = _as_operand(other)
                if not _is_operand(other):
                    return NotImplemented
            return fn(self, other)

    else:

        def op(self: Any, other: Any) -> Any:
            if not _is_operand(other):
                other = _as_operand(other)
                if not _is_operand(other):
                    return NotImplemented
            return fn(self, other)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{fn.__name__}(self, other)``."
    return op


def _reflected(fn: Binary, name: str) -> Callable[[Any, Any], Any]:
    def op(self: Any, other: Any) -> Any:
        if not _is_operand(other):
            other = _as_operand(other)
            if not _is_operand(other):
                return NotImplemented
        return fn(other, self)

    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"``{fn.__name__}(other, self)``."
    return op


_BINARY: dict[str, Binary] = {
    "add": math.add,
    "sub": math.subtract,
    "mul": math.multiply,
    "truediv": math.true_divide,
    "floordiv": math.floor_divide,
    "mod": math.remainder,
    "divmod": math.divmod,
    "pow": math.power,
    "matmul": linalg.matmul,
    "and": logic.bitwise_and,
    "or": logic.bitwise_or,
    "xor": logic.bitwise_xor,
    "lshift": logic.left_shift,
    "rshift": logic.right_shift,
}

_COMPARISONS: dict[str, Binary] = {
    "eq": logic.equal,
    "ne": logic.not_equal,
    "lt": logic.less,
    "le": logic.less_equal,
    "gt": logic.greater,
    "ge": logic.greater_equal,
}


# ---------------------------------------------------------------------------
# Methods taking the array first


def _pow(self: Any, other: Any, modulo: Any = None) -> Any:
    if modulo is not None:
        raise TypeError("pow() with a modulus is not supported for arrays")
    other = _as_operand(other)
    if not _is_operand(other):
        return NotImplemented
    return math.power(self, other)


def _setitem(self: Any, idx: Any, value: Any) -> None:
    raise TypeError(
        "plait arrays are immutable: x[idx] = y is not supported; use x = x.at[idx].set(y) "
        "(or .add, .multiply, .min, .max for the in-place operators)"
    )


def _reshape(self: Any, *args: Any, order: str = "C", **kwargs: Any) -> Array:
    """``reshape(self, shape)``; the shape may be given as separate ints."""
    if "shape" in kwargs:
        new = kwargs.pop("shape")
    elif len(args) == 1:
        new = args[0]
    else:
        new = args
    if kwargs:
        raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
    return shape.reshape(self, new, order=order)


def _transpose(self: Any, *axes: Any) -> Array:
    """``transpose(self, axes)``; the axes may be given as separate ints."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        return shape.transpose(self)
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        return shape.transpose(self, axes[0])
    return shape.transpose(self, axes)


def _astype(self: Any, dtype: Any, copy: builtins.bool = False, device: Any = None) -> Array:
    """``self`` converted to ``dtype`` (strongly typed)."""
    del copy, device
    return lax.convert_element_type(self, dtypes.canonicalize_dtype(np.dtype(dtype)))


def _flatten(self: Any, order: str = "C") -> Array:
    """The array flattened to one dimension."""
    return shape.ravel(self, order)


def _item(self: Any, *args: Any) -> Any:
    """The element as a Python scalar (the array must be concrete)."""
    value = concrete_or_error(self, "item()")
    return np.asarray(value).item(*args)


def _tolist(self: Any) -> Any:
    """The array as nested Python lists (the array must be concrete)."""
    value = concrete_or_error(self, "tolist()")
    return np.asarray(value).tolist()


def _dot(self: Any, b: Any, *, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """``dot(self, b)``."""
    return linalg.dot(self, b, precision=precision, preferred_element_type=preferred_element_type)


def _round(self: Any, decimals: int = 0, out: None = None) -> Array:
    """``round(self, decimals)``."""
    return math.round(self, decimals, out)


def _python_round(self: Any, ndigits: int | None = None) -> Any:
    return math.round(self, 0 if ndigits is None else ndigits)


def _clip(self: Any, min: Any = None, max: Any = None) -> Array:
    """``clip(self, min, max)``."""
    return logic.clip(self, min, max)


def _sort(self: Any, axis: int | None = -1, *, kind: Any = None, order: Any = None,
          stable: builtins.bool = True, descending: builtins.bool = False) -> Array:
    """``sort(self, axis)`` (returns the sorted array: plait arrays are immutable)."""
    return sorting.sort(self, axis, kind=kind, order=order, stable=stable, descending=descending)


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = f"``plait.numpy.{fn.__name__}(self, ...)``: " + (fn.__doc__ or "").split("\n")[0]
    return method


_METHODS: dict[str, Callable[..., Any]] = {
    "all": _method(reductions.all),
    "any": _method(reductions.any),
    "argmax": _method(reductions.argmax),
    "argmin": _method(reductions.argmin),
    "argsort": _method(sorting.argsort),
    "astype": _astype,
    "clip": _clip,
    "conj": _method(math.conjugate),
    "conjugate": _method(math.conjugate),
    "cumprod": _method(reductions.cumprod),
    "cumsum": _method(reductions.cumsum),
    "diagonal": _method(shape.diagonal),
    "dot": _dot,
    "flatten": _flatten,
    "item": _item,
    "max": _method(reductions.max),
    "mean": _method(reductions.mean),
    "min": _method(reductions.min),
    "nonzero": _method(selection.nonzero),
    "prod": _method(reductions.prod),
    "ptp": _method(reductions.ptp),
    "ravel": _method(shape.ravel),
    "repeat": _method(repetition.repeat),
    "reshape": _reshape,
    "round": _round,
    "searchsorted": _method(sorting.searchsorted),
    "sort": _sort,
    "squeeze": _method(shape.squeeze),
    "std": _method(reductions.std),
    "sum": _method(reductions.sum),
    "swapaxes": _method(shape.swapaxes),
    "take": _method(selection.take),
    "tolist": _tolist,
    "trace": _method(shape.trace),
    "transpose": _transpose,
    "var": _method(reductions.var),
}


def _properties() -> dict[str, property]:
    return {
        "T": property(lambda self: shape.transpose(self), doc="The array with its axes reversed."),
        "mT": property(lambda self: shape.matrix_transpose(self), doc="The array with its last two axes swapped."),
        "at": property(lambda self: updates.IndexUpdateHelper(self),
                       doc="Functional index updates: ``x.at[idx].set(y)``, ``.add``, ``.get``, ..."),
        "real": property(lambda self: math.real(self), doc="The real part."),
        "imag": property(lambda self: math.imag(self), doc="The imaginary part (zeros for real arrays)."),
    }


def install_array_methods(cls: type) -> None:
    """Install NumPy's operators, ``[]``, ``.at``, ``.T``, ``.mT``, ``.real``, ``.imag``
    and the array methods onto ``cls``, each calling :mod:`plait.numpy`."""
    for short, fn in _BINARY.items():
        setattr(cls, f"__{short}__", _forward(fn, f"__{short}__"))
        setattr(cls, f"__r{short}__", _reflected(fn, f"__r{short}__"))
    for short, fn in _COMPARISONS.items():
        setattr(cls, f"__{short}__", _forward(fn, f"__{short}__"))
    special: dict[str, Callable[..., Any]] = {
        "__pow__": _pow,
        "__neg__": math.negative,
        "__pos__": math.positive,
        "__abs__": math.absolute,
        "__invert__": logic.bitwise_not,
        "__round__": _python_round,
        "__getitem__": indexing.getitem,
        "__setitem__": _setitem,
    }
    for name, fn in special.items():
        setattr(cls, name, fn)
    for name, fn in _METHODS.items():
        setattr(cls, name, fn)
    for name, prop in _properties().items():
        setattr(cls, name, prop)
