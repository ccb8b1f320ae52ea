"""The current trace, tracers, and the eager (bottom) trace.

How a value flows: ``prim.bind(*args)`` hands ``(prim, args, params)`` to the
trace that is current in this thread.  A transformation's trace unpacks its
own tracers, applies its rule (with its *parent* trace made current, so the
rule's own operations are interpreted one level down) and wraps the results
in new tracers.  The bottom trace evaluates: it calls the eager backend,
NumPy by default, XLA once plait-dispatch installs itself.

Values that are not tracers of the current trace are constants to it.  A
tracer whose transformation has ended is a leak and is reported as such.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from plait_core import eager_fast
from plait_core.abstract import ShapedArray, get_aval, to_numpy
from plait_core.errors import (
    ConcretizationTypeError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    TracerLeakError,
    UnexpectedTracerError,
)

if TYPE_CHECKING:  # type only: primitive imports this module (a Primitive binds through a trace)
    from plait_core.primitive import Primitive


class Trace:
    """An interpreter of primitives.  Subclasses define :meth:`process_primitive`."""

    __slots__ = ("__weakref__", "alive", "parent")

    def __init__(self, parent: Trace | None = None) -> None:
        self.parent: Trace | None = parent if parent is not None else _state.trace
        self.alive = True

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        """Interpret ``prim`` on ``args`` (tracers of this trace or constants)."""
        raise NotImplementedError(f"{type(self).__name__} does not interpret primitives")

    @property
    def main(self) -> Trace:
        """This trace's identity, the same object for all its tracers (JAX's trace
        tag: libraries such as equinox test ``x._trace.main is trace.main`` to tell
        the values of one transformation from those of another)."""
        return self

    def describe(self) -> str:
        """A short human description used in error messages."""
        return type(self).__name__

    def process_custom_derivative_call(self, fun: Any, args: tuple[Any, ...]) -> Any:
        """Interpret a call of the ``custom_jvp``/``custom_vjp`` function ``fun``
        on ``args`` by running its Python (as JAX does outside ``jit``, so Python
        control flow on concrete values works in the function and its rules), or
        return ``NotImplemented`` (the default) to have ``fun`` staged and bound
        as a ``custom_jvp_call``/``custom_vjp_call``."""
        return NotImplemented

    def to_symbolic_dim(self, x: Tracer, what: str) -> Any:
        """A dimension standing for ``x``, an integer scalar tracer of this trace,
        used as a size (``arange(n)``, ``ones((7, n))``); ``None`` (the default)
        when this trace has none to offer, and the size must then be concrete.
        ``vmap`` over piles answers with a ragged size bound to the batched
        values.  ``what`` names the size for error messages."""
        return None

    def check_foreign_tracer(self, x: Tracer, prim: Primitive | None = None) -> None:
        """Validate a tracer that is not this trace's own: it must belong to an
        enclosing, still active transformation, and is then a constant here."""
        owner = x._trace
        if not owner.alive:
            raise TracerLeakError(leak_message(x, prim))
        p = self.parent
        while p is not None:
            if p is owner:
                return
            p = p.parent
        where = f" as an argument of {prim.name}" if prim is not None else ""
        raise UnexpectedTracerError(
            f"a traced value {x.aval.str_short()} of {owner.describe()} was used{where} inside "
            f"{self.describe()}, which is not nested in it; values of one transformation "
            "cannot be passed to another that does not enclose it"
        )


def leak_message(x: Tracer, prim: Primitive | None) -> str:
    where = f" (as an argument of {prim.name})" if prim is not None else ""
    return (
        f"a traced value {x.aval.str_short()} created by {x._trace.describe()} was used{where} "
        "after that transformation ended: the tracer leaked out of the function being "
        "transformed, for example by being stored in a global, a closure or an attribute. "
        "Return values from the transformed function instead of storing them"
    )


class _State(threading.local):
    def __init__(self) -> None:
        self.trace: Trace = EvalTrace.__new__(EvalTrace)
        Trace.__init__(self.trace, _BOTTOM)


class _Bottom(Trace):
    __slots__ = ()

    def __init__(self) -> None:
        self.parent = None
        self.alive = True


_BOTTOM = _Bottom()


def current_trace() -> Trace:
    """The trace that interprets primitives bound now, in this thread."""
    return _state.trace


@contextmanager
def set_current_trace(trace: Trace) -> Iterator[Trace]:
    """Make ``trace`` current inside the block (used by rules to bind on their parent)."""
    state = _state
    prev = state.trace
    state.trace = trace
    try:
        yield trace
    finally:
        state.trace = prev


@contextmanager
def transformation(trace: Trace) -> Iterator[Trace]:
    """Run a transformation: ``trace`` is current inside the block and ends with it;
    its tracers used afterwards are reported as leaks."""
    state = _state
    prev = state.trace
    state.trace = trace
    try:
        yield trace
    finally:
        state.trace = prev
        trace.alive = False


def is_eager() -> bool:
    """True when no transformation is active in this thread."""
    return type(_state.trace) is EvalTrace


# ---------------------------------------------------------------------------
# Tracers


tracer_types: set[type[Tracer]] = set()
"""Every subclass of :class:`Tracer` (each interpreter's), recorded as it is
defined: hot paths ask ``x.__class__ in tracer_types``, a set lookup, where
``isinstance(x, Tracer)`` would walk the class's bases."""


class Tracer:
    """A value seen by a transformation.  Array methods and operators are
    installed by :mod:`plait_core.numpy` so tracers behave like arrays."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000
    __array_ufunc__ = None  # make NumPy defer to our reflected operators

    _trace: Trace

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        tracer_types.add(cls)

    @property
    def aval(self) -> ShapedArray:
        """The abstract value (shape, dtype, weak type)."""
        raise NotImplementedError

    @property
    def shape(self) -> tuple[Any, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> Any:
        return self.aval.size

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def to_concrete_value(self) -> Any:
        """The concrete value behind this tracer when the transformation knows it
        (forward-mode primal values do), else ``None``."""
        return None

    def _concrete(self, what: str, error: type[ConcretizationTypeError] = ConcretizationTypeError) -> Any:
        value = self.to_concrete_value()
        if value is None:
            raise error(concretization_message(self, what))
        return value

    def __bool__(self) -> bool:
        return bool(self._concrete("bool()", TracerBoolConversionError))

    def __int__(self) -> int:
        return int(self._concrete("int()", TracerIntegerConversionError))

    def __float__(self) -> float:
        return float(self._concrete("float()"))

    def __complex__(self) -> complex:
        return complex(self._concrete("complex()"))

    def __index__(self) -> int:
        return int(np.asarray(self._concrete("an index (operator.index)", TracerIntegerConversionError)).item())

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self._concrete("numpy.asarray()")
        return np.asarray(to_numpy(value), dtype=dtype)

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of a 0-d array")
        n = self.aval.shape[0]
        if type(n) is not int:
            raise TypeError(f"len() of an array whose leading dimension {n} is symbolic")
        return n

    def __iter__(self) -> Iterator[Any]:
        n = len(self)
        return (self[i] for i in range(n))  # type: ignore[index]

    def __hash__(self) -> int:
        raise TypeError(f"a traced value {self.aval.str_short()} is not hashable")

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}> by {self._trace.describe()}"

    def __reduce__(self) -> NoReturn:
        raise TypeError(f"a traced value {self.aval.str_short()} cannot be pickled")


def concretization_message(x: Tracer, what: str) -> str:
    return (
        f"{what} needs a concrete value, but got a traced value {x.aval.str_short()} "
        f"(by {x._trace.describe()}): its value is not known while the function is being "
        "transformed. For a branch on a traced value use plait.lax.cond or "
        "plait.numpy.where; for a loop use plait.lax.while_loop or fori_loop; or make the "
        "argument static (static_argnums / static_argnames of jit)"
    )


def dim_or_concrete(x: Any, what: str) -> Any:
    """A size given as a value: ``x`` itself unless it is a tracer; a tracer
    becomes the dimension its trace offers for it (:meth:`Trace.to_symbolic_dim`),
    else its concrete value; :class:`ConcretizationTypeError` naming ``what``
    when it has neither."""
    while isinstance(x, Tracer):
        d = x._trace.to_symbolic_dim(x, what)
        if d is not None:
            return d
        x = x._concrete(what)
    return x


def concrete_or_error(x: Any, what: str) -> Any:
    """``x`` itself if it is concrete, else the concrete value its tracer knows;
    raise :class:`ConcretizationTypeError` naming ``what`` when there is none."""
    while isinstance(x, Tracer):
        x = x._concrete(what)
    return x


# ---------------------------------------------------------------------------
# The eager trace and its backend hook

EagerBackend = Callable[["Primitive", Sequence[Any], dict[str, Any]], Any]


def check_eager_operands(prim: Primitive, args: Sequence[Any]) -> None:
    """Refuse tracers among the operands of an eager evaluation of ``prim``.

    A tracer reaching the bottom trace belongs to a transformation that has
    ended (a leak: :class:`TracerLeakError`) or that does not enclose the
    evaluation (:class:`UnexpectedTracerError`).  Every eager backend calls
    this before it looks at an operand it does not recognise as its own."""
    for x in args:
        if isinstance(x, Tracer):
            _state.trace.check_foreign_tracer(x, prim)


def numpy_backend(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Core's reference backend: check the call with the primitive's abstract
    evaluation (so eager errors read as staged ones do), then run its NumPy
    implementation and give each result the promised dtype."""
    check_eager_operands(prim, args)
    where = f"an argument of {prim.name}"
    avals = [get_aval(a, where) for a in args]
    out_avals = prim.abstract_eval(*avals, **params)
    out = prim.impl(*[to_numpy(a) for a in args], **params)
    if prim.multiple_results:
        return [_as_aval_dtype(o, a) for o, a in zip(out, out_avals)]
    return _as_aval_dtype(out, out_avals)


def _as_aval_dtype(value: Any, aval: ShapedArray) -> Any:
    arr = np.asarray(value)
    return arr if arr.dtype == aval.dtype else arr.astype(aval.dtype)


_backend: list[EagerBackend] = [numpy_backend]
eager_fast._backend_changed(numpy_backend)


def set_eager_backend(backend: EagerBackend | None) -> EagerBackend:
    """Install the function that evaluates primitives eagerly (``None``: NumPy).
    Returns the previous backend.  plait-dispatch installs XLA here.

    The backend is called as ``backend(prim, args, params)`` with the operands
    exactly as they were bound.  It must refuse tracers among them with
    :func:`check_eager_operands` before treating an operand it does not know
    as data: the eager trace leaves that check to the backend, whose short
    path for its own array type proves there is no tracer at no cost.

    Shortcuts a backend offers the NumPy layer (:mod:`plait_core.eager_fast`)
    apply only while that backend is installed."""
    prev = _backend[0]
    _backend[0] = numpy_backend if backend is None else backend
    eager_fast._backend_changed(_backend[0])
    return prev


def eager_backend() -> EagerBackend:
    """The eager backend in use."""
    return _backend[0]


class EvalTrace(Trace):
    """The bottom trace: evaluates primitives on concrete values (with the
    eager backend, which also refuses tracers: see :func:`set_eager_backend`)."""

    __slots__ = ()

    def process_primitive(self, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
        return _backend[0](prim, args, params)

    def describe(self) -> str:
        return "eager evaluation"


_state = _State()
