"""The eager backend: primitives evaluated one at a time on XLA.

Importing plait-dispatch installs :func:`xla_backend` as core's eager backend
(``plait_core.set_eager_backend``).  From then on every primitive bound
outside any transformation runs as a compiled single-operation computation,
made once per (primitive, params, x64 flag, operand types) and cached, and returns
:class:`~plait_dispatch.array.Array`\\ s (weak types kept).  Higher-order
primitives (``cond``, ``while``, ``scan``, custom-rule calls) compile as one
operation whose bodies are lowered whole; ``closed_call`` (what ``jit``
binds) compiles its called jaxpr with the call's device and donations.

The common case takes a short path (:func:`xla_backend`): every operand a
live uncommitted Array or a host scalar met before (``x * 2.0``), and the
operation compiled before.  It reads each operand's type and buffer once,
finds the operation by (primitive, params, types) and runs it, with no
re-validation: the cache entry proves the types, and uncommitted Arrays live
on the default device the entry was compiled for.  Anything else (a
committed or deleted operand, host arrays, tracers, a first call) takes the
general path, which refuses tracers, validates, places, compiles and reports
errors; so the short path never changes what an operation returns or
raises, only how fast.

Host scalars reach the short path through a table of device scalars, one per
(type, value) and x64 flag, made when the general path first runs an
operation on them and shared by every later one (they never leave in an
Array, so nothing deletes them).  Float zeros and NaNs stay out of the table
(``-0.0 == 0.0`` and ``nan != nan`` as keys).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from plait_core import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Primitive,
    ShapedArray,
    Var,
    config,
    dtypes,
    get_aval,
    set_eager_backend,
    to_numpy,
)
from plait_core.eager_staging import set_eager_staging
from plait_core.explicit_sharding import needs_typing
from plait_core.primitives.callbacks import callback_p
from plait_core.primitives.calls import closed_call_p
from plait_core.primitives.elementwise import convert_element_type_p
from plait_core.sharding import explicit_state
from plait_core.staging import stage_primitive
from plait_core.trace import check_eager_operands, numpy_backend
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.cache import (
    DEFAULT_JIT_INFO,
    CompiledCall,
    JitInfo,
    compiled_call,
    computation_device,
    host_value,
    register_clear_hook,
    shared_scalar_buffer,
    spmd_primitives,
)
from plait_dispatch.lowering import LoweringError
from plait_dispatch.spmd import run_spmd, wants_spmd

__all__ = ["install", "uninstall", "xla_backend"]


class _SymbolicShape(Exception):
    """A result shape is symbolic: not something concrete data can have."""


class _Reference:
    """The cache entry of an operation the eager backend leaves to core's reference."""

    executable = None


_REFERENCE: Any = _Reference()


class _EagerOp:
    """One primitive application (params and operand types fixed), compiled."""

    __slots__ = (
        "default",
        "device",
        "executable",
        "handlers",
        "in_avals",
        "jaxpr",
        "out_avals",
        "prim",
        "single_aval",
    )

    def __init__(self, prim: Primitive, params: dict[str, Any], in_avals: tuple[ShapedArray, ...]) -> None:
        out = prim.abstract_eval(*in_avals, **params)  # raises the primitive's own errors
        out_avals = list(out) if prim.multiple_results else [out]
        if any(type(d) is not int for a in out_avals for d in a.shape):
            raise _SymbolicShape
        invars = [Var(a) for a in in_avals]
        outvars = [Var(a) for a in out_avals]
        eqn = JaxprEqn(prim, list(invars), outvars, dict(params))
        self.prim = prim
        self.jaxpr = ClosedJaxpr(Jaxpr([], invars, list(outvars), [eqn]), [])
        self.in_avals = in_avals
        self.out_avals = tuple(out_avals)
        self.default: CompiledCall = self.on(_jaxlib.first_device())
        single = not prim.multiple_results and not self.default.float0_outs
        self.single_aval: ShapedArray | None = out_avals[0] if single else None
        # What the short path needs, unpacked (a default call has no constants
        # and takes every operand: eager ops keep unused ones).
        self.executable = None if self.default.const_bufs or self.default.effects else self.default.executable
        self.handlers = self.default.handlers
        self.device = self.default.device

    def on(self, device: _jaxlib.Device) -> CompiledCall:
        return compiled_call(self.jaxpr, self.in_avals, device, DEFAULT_JIT_INFO, self.prim.name)


_ops: dict[Hashable, _EagerOp] = {}
_ops_lock = threading.RLock()
_MAX_OPS = 8192


def _op_key(prim: Primitive, params: dict[str, Any], in_avals: Sequence[ShapedArray]) -> tuple[Any, ...]:
    """The cache key of one operation: the primitive, its params, the x64 flag
    (a few result types depend on it: ``dim_as_value`` gives the default int)
    and its operand types."""
    return (prim, tuple(params.items()) if params else (), config.x64_enabled, *in_avals)


def xla_backend(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Evaluate ``prim`` on concrete ``args`` with XLA; returns Arrays.

    This is the short path (see the module's docstring); whatever it does not
    recognise goes to :func:`_general`, which gives the same results."""
    if config.guarded:  # no_execution or a configured default device: the general path honours them
        return _general(prim, args, params)
    x64 = config.x64_enabled
    key: list[Any] = [prim, tuple(params.items()) if params else (), x64]  # as _op_key makes it
    bufs: list[Any] = []
    for a in args:
        if a.__class__ is Array:
            buf = a._buf
            # Liveness is asked of the buffer itself: one shared with an Array
            # that was deleted is dead too, and XLA must not see it (it would
            # log an error line before failing).
            if a._committed or buf is None or _buffer_is_deleted(buf):
                break
            key.append(a.aval)
            bufs.append(buf)
        elif a.__class__ in _HOST_SCALAR_TYPES:
            const = _host_scalars[x64].get((a.__class__, a))
            if const is None:
                break
            key.append(const[0])
            bufs.append(const[1])
        else:
            break
    else:
        try:
            op = _ops.get(tuple(key))
        except TypeError:  # an unhashable param
            op = None
        if op is not None:
            executable = op.executable
            if executable is not None:
                try:
                    outs = _consume(_run(executable, bufs), op.handlers)
                except _jaxlib.XlaRuntimeError:
                    pass  # the general path reports it (a buffer deleted by another thread?)
                else:
                    aval = op.single_aval
                    if aval is not None:
                        return Array(outs[0], aval, op.device, False)
                    return op.default.wrap(outs, False)
    return _general(prim, args, params)


_run = _jaxlib.run_executable
_consume = _jaxlib.consume_results
_buffer_is_deleted = _jaxlib.buffer_is_deleted

_HOST_SCALAR_TYPES: frozenset[type] = frozenset(
    {bool, int, float}
    | {
        d.type
        for d in (
            dtypes.bool_, dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
            dtypes.uint16, dtypes.uint32, dtypes.uint64, dtypes.bfloat16, dtypes.float16,
            dtypes.float32, dtypes.float64,
        )
    }
)
"""Host scalars the short path takes: Python's and NumPy's real ones (``x + 1``
on a float32 array meets ``numpy.float32(1.0)``: promotion converts Python
scalars on the host).  Complex ones are rare enough not to."""

_host_scalars: tuple[dict[tuple[type, Any], tuple[ShapedArray, Any]], ...] = ({}, {})
"""By the x64 flag: ``(type, value)`` of a host scalar -> its abstract value
and a device scalar holding it on the default device, shared by every
operation that reads it (never inside an Array, so nothing deletes it)."""
_MAX_HOST_SCALARS = 1024


def _learn_host_scalars(args: Sequence[Any], in_avals: tuple[ShapedArray, ...]) -> None:
    """Remember the host scalars among ``args`` (of an operation just run on
    the default device) for the short path.  Float zeros are left out (``0.0``
    and ``-0.0`` are equal keys with different bits), and so are NaNs (never
    equal to themselves)."""
    table = _host_scalars[config.x64_enabled]
    device = _jaxlib.first_device()
    for a, aval in zip(args, in_avals):
        t = a.__class__
        if t not in _HOST_SCALAR_TYPES or (dtypes.is_float(aval.dtype) and (a == 0 or a != a)):
            continue
        if (t, a) in table:
            continue
        if len(table) >= _MAX_HOST_SCALARS:
            table.clear()
        aval = _interned(aval)
        table[(t, a)] = (aval, shared_scalar_buffer(host_value(a, aval), aval, device))


_avals: dict[ShapedArray, ShapedArray] = {}


def _interned(aval: ShapedArray) -> ShapedArray:
    """One object per abstract value of a host scalar (its hash is computed once)."""
    return _avals.setdefault(aval, aval)


def _general(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    check_eager_operands(prim, args)
    if prim is closed_call_p:
        return _eager_call(args, params)
    where = f"an argument of {prim.name}"
    in_avals = tuple([a.aval if type(a) is Array else get_aval(a, where) for a in args])
    if prim is callback_p:
        # A host callback run eagerly is a call of the Python function on the
        # host: nothing to compile (and a fresh function each time).
        return _reference(prim, args, params, in_avals)
    if prim is convert_element_type_p and type(args[0]) is not Array and not in_avals[0].shape:
        folded = _convert_host_scalar(args[0], in_avals[0], params)
        if folded is not None:
            return folded
    if prim in spmd_primitives or any(type(a) is Array and a._device is None for a in args):
        return _spmd_op(prim, args, params, in_avals)
    device, committed = computation_device(args, None, prim.name)
    key: Hashable | None = _op_key(prim, params, in_avals)
    try:
        op = _ops.get(key)
    except TypeError:  # an unhashable param: compile without remembering
        key, op = None, None
    if op is None:
        try:
            op = _make_op(key, prim, params, in_avals)
        except (_SymbolicShape, NotImplementedError, LoweringError):
            if key is not None:
                _ops[key] = _REFERENCE
            op = _REFERENCE
    if op is _REFERENCE:
        # Not something XLA runs here (a symbolic size, a collective outside
        # any mapped axis): core's reference evaluation computes it, or says
        # why it cannot in the primitive's own words.
        return _reference(prim, args, params, in_avals)
    call = op.default if device is op.default.device else op.on(device)
    outs = call.call(args, committed, prim.name)
    if key is not None and not committed and call is op.default:
        _learn_host_scalars(args, in_avals)
    return outs if prim.multiple_results else outs[0]


_spmd_jaxprs: dict[Hashable, ClosedJaxpr] = {}


def _spmd_op(prim: Primitive, args: Sequence[Any], params: dict[str, Any], in_avals: tuple[ShapedArray, ...]) -> Any:
    """One operation with a multi-device operand (or naming a mesh), as an SPMD
    computation; its one-equation jaxpr is kept per operation so that the
    compiled program is found again."""
    key = _op_key(prim, params, in_avals)
    closed = _spmd_jaxprs.get(key)
    if closed is None and explicit_state.active and needs_typing(prim, in_avals):
        closed = stage_primitive(prim, in_avals, params)  # typed by explicit shardings, laid out so
        _spmd_jaxprs[key] = closed
    if closed is None:
        out = prim.abstract_eval(*in_avals, **params)
        out_avals = list(out) if prim.multiple_results else [out]
        invars = [Var(a) for a in in_avals]
        outvars = [Var(a) for a in out_avals]
        closed = ClosedJaxpr(Jaxpr([], invars, list(outvars), [JaxprEqn(prim, list(invars), outvars, dict(params))]), [])
        if len(_spmd_jaxprs) > _MAX_OPS:
            _spmd_jaxprs.clear()
        _spmd_jaxprs[key] = closed
    outs = run_spmd(closed, args, None, prim.name, prim.name)
    return outs if prim.multiple_results else outs[0]


def _reference(
    prim: Primitive, args: Sequence[Any], params: dict[str, Any], in_avals: tuple[ShapedArray, ...]
) -> Any:
    """Core's NumPy evaluation of one operation, its results put on the
    default device with the types abstract evaluation promises (weak types kept)."""
    out = numpy_backend(prim, args, params)
    promised = prim.abstract_eval(*in_avals, **params)
    device = _jaxlib.default_device()

    def put(value: Any, aval: ShapedArray) -> Array:
        data = np.asarray(value, aval.dtype)
        return Array(_jaxlib.device_put(data, aval, device, False), aval, device, False)

    if prim.multiple_results:
        return [put(v, a) for v, a in zip(out, promised)]
    return put(out, promised)


def _convert_host_scalar(x: Any, aval: ShapedArray, params: dict[str, Any]) -> Array | None:
    """``convert_element_type`` of a host scalar (``x + 1.0`` makes one per
    call), done on the host and transferred once, when NumPy's conversion is
    certainly XLA's: not from complex to real, and integer targets only for
    finite values in range.  ``None``: let XLA convert."""
    out = convert_element_type_p.abstract_eval(aval, **params)
    src = to_numpy(x, aval.dtype)
    dst = out.dtype
    if dst == dtypes.float0 or (src.dtype.kind == "c" and dst.kind != "c"):
        return None
    if dst.kind in "iu" and src.dtype.kind != "b":
        info = np.iinfo(dst)
        value = src.item()
        if src.dtype.kind in "fc" and not np.isfinite(value):
            return None
        if not info.min <= value <= info.max:
            return None
    with np.errstate(all="ignore"):
        value_out = src.astype(dst)
    device = _jaxlib.default_device()
    return Array(_jaxlib.device_put(value_out, out, device, False), out, device, False)


def _make_op(
    key: Hashable | None, prim: Primitive, params: dict[str, Any], in_avals: tuple[ShapedArray, ...]
) -> _EagerOp:
    if key is None:
        return _EagerOp(prim, params, in_avals)
    with _ops_lock:
        op = _ops.get(key)
        if op is None:
            op = _EagerOp(prim, params, in_avals)
            if len(_ops) >= _MAX_OPS:
                _ops.clear()
            _ops[key] = op
        return op


def _eager_call(args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """``closed_call`` evaluated eagerly: the called jaxpr compiled whole, on the
    call's device, with its donations."""
    body: ClosedJaxpr = params["call_jaxpr"]
    info = params.get("jit_info")
    if type(info) is not JitInfo:
        info = DEFAULT_JIT_INFO
    name = params.get("name", "closed_call")
    in_avals = [get_aval(a, f"an argument of the call {name}") for a in args]
    closed_call_p.abstract_eval(*in_avals, **params)  # operand count and types
    if wants_spmd(body, args, info):
        return run_spmd(body, args, info, name, f"jit({name})")
    device, committed = computation_device(args, info.device, f"jit({name})", info.names)
    call = compiled_call(body, tuple(body.in_avals), device, info, name)
    return call.call(args, committed, f"jit({name})")


def install() -> None:
    """Make XLA core's eager backend (done when plait_dispatch is imported),
    with core's library functions marked ``staged_when_eager`` (``linalg.solve``,
    ``norm``, ``mean``, ...) run eagerly as one compiled program per signature
    (issue 26: one XLA compilation where op by op there would be one per primitive)."""
    set_eager_backend(xla_backend)
    set_eager_staging(True)


def uninstall() -> None:
    """Give eager evaluation back to core's NumPy backend (library functions op by op)."""
    set_eager_backend(None)
    set_eager_staging(False)


_eager_clear_hooks: list[Callable[[], None]] = []


def register_eager_clear_hook(hook: Callable[[], None]) -> None:
    """Have :func:`clear_eager_cache` also call ``hook`` (the shortcuts of
    :mod:`plait_dispatch.eager_shortcuts`, which hold the same executables)."""
    _eager_clear_hooks.append(hook)


def clear_eager_cache() -> None:
    """Forget the compiled single operations and the device scalars of host
    scalars.  Part of ``clear_caches``, as JAX's clears its compiled single
    primitives: each executable keeps its machine code mapped until dropped."""
    with _ops_lock:
        for hook in _eager_clear_hooks:
            hook()
        _ops.clear()
        for table in _host_scalars:
            table.clear()


register_clear_hook(clear_eager_cache)
