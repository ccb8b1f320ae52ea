"""The eager backend's shortcuts for the NumPy layer (issue 17).

Core's :mod:`plait_core.eager_fast` lets ``plait.numpy`` functions whose
outcome is one primitive bound on their operands (``sin`` of a floating
array, ``add`` of two arrays of one type, ``x * 2.0``, ``sum(x)``) ask the
backend directly, skipping the NumPy layer, ``lax`` and ``bind``.  This
module answers them.

Each answer comes from a table keyed by the primitive, the *identity* of
the operands' abstract values (and of the params dict, one object per call
site in core) and the x64 flag, so that a lookup hashes a few ints and never
calls ``ShapedArray.__hash__`` or ``__eq__``; the entry holds those objects,
so an id in a key cannot be reused by another object while the entry lives.
An entry is made after the backend's own short path (:func:`xla_backend`)
ran the same operation, from the compiled operation it cached: the shortcut
runs the same executable on the same buffers, so it never changes a result
or an error, only the cost.  Anything unusual (a committed, deleted or
multi-device operand, a host scalar without a device copy yet, a guarded
configuration, an operation with several results or constants) goes the
usual way.
"""

from __future__ import annotations

from typing import Any, Final

from plait_core import Primitive, ShapedArray, config
from plait_core.eager_fast import Runner, forget_runners, no_runner, set_eager_shortcuts
from plait_dispatch import _jaxlib
from plait_dispatch.array import _LIVE, Array
from plait_dispatch.eager import (
    _HOST_SCALAR_TYPES,
    _EagerOp,
    _host_scalars,
    _op_key,
    _ops,
    register_eager_clear_hook,
    xla_backend,
)

__all__ = ["clear", "install"]

_MAX_ENTRIES: Final = 4096

# (prim, id(params), id(aval), x64) -> (aval, params, executable, handlers, out aval, device, x64)
_unary: dict[tuple[Any, ...], tuple[Any, ...]] = {}
# (prim, id(x's aval), id(y's aval), x64) -> (x aval, y aval, executable, handlers, out aval, device, numpy_ok, x64)
_binary: dict[tuple[Any, ...], tuple[Any, ...]] = {}
# prim -> its last entry of the tables above (checked by identity before the table is asked)
_last_unary: dict[Primitive, tuple[Any, ...]] = {}
_last_binary: dict[Primitive, tuple[Any, ...]] = {}

_run = _jaxlib.run_executable
_consume = _jaxlib.consume_results
_buffer_is_deleted = _jaxlib.buffer_is_deleted
_XlaRuntimeError = _jaxlib.XlaRuntimeError
_new = object.__new__


def _compiled(prim: Primitive, params: dict[str, Any], avals: tuple[ShapedArray, ...], device: Any) -> _EagerOp | None:
    """The cached single-output operation the short path runs for these
    operand types on ``device``, if there is one."""
    try:
        op = _ops.get(_op_key(prim, params, avals))
    except TypeError:  # an unhashable param
        return None
    if (
        type(op) is not _EagerOp
        or op.executable is None
        or op.single_aval is None
        or op.device is not device
        or len(op.in_avals) != len(avals)
    ):
        return None
    return op


def eager_unary(prim: Primitive, params: dict[str, Any], x: Array) -> Any:
    """``prim.bind(x, **params)`` for an Array ``x`` on the eager trace."""
    buf = x._buf
    if not (x._committed or buf is None or config.guarded or _buffer_is_deleted(buf)):
        aval = x.aval
        x64 = config.x64_enabled
        # The primitive's last signature first: a few identity tests instead
        # of building and hashing a key (a loop repeats one signature).
        e = _last_unary.get(prim)
        if e is None or e[0] is not aval or e[1] is not params or e[6] is not x64:
            e = _unary.get((prim, id(params), id(aval), x64))
            if e is not None and e[0] is aval and e[1] is params:
                _last_unary[prim] = e
        if e is not None and e[0] is aval and e[1] is params and x._device is e[5]:
            try:
                outs = _consume(_run(e[2], [buf]), e[3])
            except _XlaRuntimeError:
                pass  # the usual path reports it
            else:
                # ``Array(outs[0], e[4], e[5], False)`` without its __init__ frame.
                out = _new(Array)
                out._buf = outs[0]
                out.aval = e[4]
                out._device = e[5]
                out._committed = False
                out._state = _LIVE
                return out
        else:
            out = xla_backend(prim, (x,), params)
            op = _compiled(prim, params, (aval,), x._device)
            if op is not None:
                if len(_unary) >= _MAX_ENTRIES:
                    _unary.clear()
                    _last_unary.clear()
                _unary[(prim, id(params), id(aval), x64)] = (
                    aval, params, op.executable, op.handlers, op.single_aval, op.device, x64,
                )
            return out
    return xla_backend(prim, (x,), params)


def unary_runner(prim: Primitive, params: dict[str, Any], x: Array) -> Runner:
    """The runner of the signature :func:`eager_unary` just handled for ``x``
    (see :mod:`plait_core.eager_fast`): ``prim`` on an operand of exactly
    ``x``'s abstract value (the same object), live, uncommitted and on the
    same device, under the same x64 flag and no guarded configuration; ``None``
    for anything else.  The NumPy function keeps it and calls it first, so a
    repeated call costs that function, the runner and the execution."""
    aval = x.aval
    e = _unary.get((prim, id(params), id(aval), config.x64_enabled))
    if e is None or e[0] is not aval or e[1] is not params:
        return no_runner
    executable, handlers, out_aval, device, x64 = e[2], e[3], e[4], e[5], e[6]
    cfg = config

    def run(y: Any) -> Any:
        buf = y._buf
        if (
            y.aval is not aval
            or y._committed
            or buf is None
            or y._device is not device
            or cfg.guarded
            or cfg.x64_enabled is not x64
            or _buffer_is_deleted(buf)
        ):
            return None
        try:
            outs = _consume(_run(executable, [buf]), handlers)
        except _XlaRuntimeError:
            return None  # the shortcut's usual path reports it
        out = _new(Array)  # ``Array(outs[0], out_aval, device, False)`` without its __init__ frame
        out._buf = outs[0]
        out.aval = out_aval
        out._device = device
        out._committed = False
        out._state = _LIVE
        return out

    return run


_NO_PARAMS: Final[dict[str, Any]] = {}


def eager_binary(prim: Primitive, x: Array, y: Any, numpy: bool) -> Any:
    """``prim.bind(x, y)`` for an Array ``x`` and an Array or host scalar ``y``
    on the eager trace, or ``None`` (the caller's usual path); with ``numpy``
    only for equal non-boolean types (see :mod:`plait_core.eager_fast`)."""
    buf = x._buf
    if x._committed or buf is None or config.guarded or _buffer_is_deleted(buf):
        return None
    x64 = config.x64_enabled
    ax = x.aval
    t = y.__class__
    if t is Array:
        ybuf = y._buf
        if y._committed or ybuf is None or _buffer_is_deleted(ybuf) or y._device is not x._device:
            return None
        ay = y.aval
    elif t in _HOST_SCALAR_TYPES:
        const = _host_scalars[x64].get((t, y))
        if const is None:
            return None  # the usual path makes its device copy
        ay, ybuf = const
    else:
        return None
    e = _last_binary.get(prim)  # the primitive's last signature first, as in eager_unary
    if e is None or e[0] is not ax or e[1] is not ay or e[7] is not x64:
        e = _binary.get((prim, id(ax), id(ay), x64))
        if e is not None and e[0] is ax and e[1] is ay:
            _last_binary[prim] = e
    if e is not None and e[0] is ax and e[1] is ay:
        if (numpy and not e[6]) or x._device is not e[5]:
            return None
        try:
            outs = _consume(_run(e[2], [buf, ybuf]), e[3])
        except _XlaRuntimeError:
            return None  # the usual path reports it
        out = _new(Array)  # ``Array(outs[0], e[4], e[5], False)`` without its __init__ frame
        out._buf = outs[0]
        out.aval = e[4]
        out._device = e[5]
        out._committed = False
        out._state = _LIVE
        return out
    numpy_ok = ax.dtype.kind != "b" and ax == ay
    if numpy and not numpy_ok:
        return None
    out = xla_backend(prim, (x, y), _NO_PARAMS)
    op = _compiled(prim, _NO_PARAMS, (ax, ay), x._device)
    if op is not None:
        if len(_binary) >= _MAX_ENTRIES:
            _binary.clear()
            _last_binary.clear()
        _binary[(prim, id(ax), id(ay), x64)] = (
            ax, ay, op.executable, op.handlers, op.single_aval, op.device, numpy_ok, x64
        )
    return out


def clear() -> None:
    """Forget every shortcut (with the eager cache)."""
    _unary.clear()
    _binary.clear()
    _last_unary.clear()
    _last_binary.clear()
    forget_runners()


register_eager_clear_hook(clear)


def install() -> None:
    """Offer the shortcuts to core (done when plait_dispatch is imported)."""
    set_eager_shortcuts(Array, eager_unary, eager_binary, xla_backend, unary_runner)
