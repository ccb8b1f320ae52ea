"""The eager backend: primitives evaluated one at a time on XLA.

Importing plait-dispatch installs :func:`xla_backend` as core's eager backend
(``plait_core.set_eager_backend``).  From then on every primitive bound
outside any transformation runs as a compiled single-operation computation,
made once per (primitive, params, operand types) and cached, and returns
:class:`~plait_dispatch.array.Array`\\ s (weak types kept).  Higher-order
primitives (``cond``, ``while``, ``scan``, custom-rule calls) compile as one
operation whose bodies are lowered whole; ``closed_call`` (what ``jit``
binds) compiles its called jaxpr with the call's device and donations.

The common case, every operand an uncommitted Array, takes a short path: one
dictionary lookup and the executable's run, with no re-validation (the
cache entry proves the types; a deleted or committed operand makes the run
refuse before it starts, and the general path then reports or places it).
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from plait_core import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Primitive,
    ShapedArray,
    Var,
    dtypes,
    get_aval,
    set_eager_backend,
    to_numpy,
)
from plait_core.primitives.calls import closed_call_p
from plait_core.primitives.elementwise import convert_element_type_p
from plait_core.trace import numpy_backend
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.cache import DEFAULT_JIT_INFO, CompiledCall, JitInfo, compiled_call, computation_device
from plait_dispatch.lowering import LoweringError

__all__ = ["install", "uninstall", "xla_backend"]


class _SymbolicShape(Exception):
    """A result shape is symbolic: not something concrete data can have."""


_REFERENCE: Any = object()
"""Cache entry of an operation the eager backend leaves to core's reference."""


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
        self.default: CompiledCall = self.on(_jaxlib.default_device())
        single = not prim.multiple_results and not self.default.float0_outs
        self.single_aval: ShapedArray | None = out_avals[0] if single else None
        # What the short path needs, unpacked (a default call has no constants
        # and takes every operand: eager ops keep unused ones).
        self.executable = self.default.executable if not self.default.const_bufs else None
        self.handlers = self.default.handlers
        self.device = self.default.device

    def on(self, device: _jaxlib.Device) -> CompiledCall:
        return compiled_call(self.jaxpr, self.in_avals, device, DEFAULT_JIT_INFO, self.prim.name)


_ops: dict[Hashable, _EagerOp] = {}
_ops_lock = threading.RLock()
_MAX_OPS = 8192


def xla_backend(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    """Evaluate ``prim`` on concrete ``args`` with XLA; returns Arrays."""
    try:
        op = _ops[(prim, tuple(params.items()), tuple([a.aval for a in args]))]
        # A committed operand reads True and a deleted one None: the run
        # refuses both before it starts, and the general path takes over.
        outs = _run(op.executable, [a._committed or a._buf for a in args], op.handlers)
    except Exception:
        return _general(prim, args, params)
    aval = op.single_aval
    if aval is not None:
        return Array(outs[0], aval, op.device, False)
    return op.default.wrap(outs, False)


_run = _jaxlib.execute


def _general(prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    if prim is closed_call_p:
        return _eager_call(args, params)
    where = f"an argument of {prim.name}"
    in_avals = tuple([a.aval if type(a) is Array else get_aval(a, where) for a in args])
    if prim is convert_element_type_p and type(args[0]) is not Array and not in_avals[0].shape:
        folded = _convert_host_scalar(args[0], in_avals[0], params)
        if folded is not None:
            return folded
    device, committed = computation_device(args, None, prim.name)
    key: Hashable | None = (prim, tuple(params.items()), in_avals)
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
    device, committed = computation_device(args, info.device, f"jit({name})", info.names)
    call = compiled_call(body, tuple(body.in_avals), device, info, name)
    return call.call(args, committed, f"jit({name})")


def install() -> None:
    """Make XLA core's eager backend (done when plait_dispatch is imported)."""
    set_eager_backend(xla_backend)


def uninstall() -> None:
    """Give eager evaluation back to core's NumPy backend."""
    set_eager_backend(None)


def clear_eager_cache() -> None:
    """Forget the compiled single operations."""
    with _ops_lock:
        _ops.clear()
