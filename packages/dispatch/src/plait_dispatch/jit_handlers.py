"""The fast call handlers of ``jit``: one object per compiled signature,
specialised to what a call must do (plain arguments, constants, donations,
host scalars), and the pacing of chained calls on XLA's worker threads."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import Any, Final

from plait_core import (
    ShapedArray,
    config,
)
from plait_core.tree_util import (
    tree_structure,
    tree_unflatten,
)
from plait_dispatch import _jaxlib
from plait_dispatch.aot import StagedCall
from plait_dispatch.array import _DONATED, _LIVE, Array
from plait_dispatch.cache import (
    CompiledCall,
    operand_buffer,
)
from plait_dispatch.jit_signature import MISS as _MISS
from plait_dispatch.jit_signature import _tuple_tree

_buffer_is_deleted = _jaxlib.buffer_is_deleted

_LEAF: Final = tree_structure(0)

_run = _jaxlib.run_executable
_consume = _jaxlib.consume_results
_new = object.__new__



# ---------------------------------------------------------------------------
# Fast handlers: one closure per signature, specialised to what it must do.


class _Simple:
    """The fast handler of a signature with one output and nothing donated,
    pruned or captured: its pieces, run inline by the jitted wrapper."""

    __slots__ = ("aval", "device", "executable", "handlers", "mixed", "x64")

    def __init__(
        self, executable: Any, handlers: list[Any], aval: ShapedArray, device: Any, x64: bool
    ) -> None:
        self.executable = executable
        self.handlers = handlers
        self.aval = aval
        self.device = device
        self.x64 = x64
        self.mixed = False  # whether the tree fast path saw host scalars among its leaves


class _General:
    """The fast handler of any other signature: called with the arguments
    (live uncommitted Arrays of the signature's types) and their buffers;
    returns ``_MISS`` when the run fails, for the general path to report."""

    __slots__ = (
        "call",
        "chained",
        "device",
        "donated",
        "executable",
        "flat_tuple",
        "handlers",
        "mixed",
        "out_avals",
        "out_structure",
        "out_tree",
        "pace_out",
        "pace_wait",
        "passed_args",
        "passed_consts",
        "plain",
        "single",
        "x64",
    )

    def __init__(self, entry: StagedCall, call: CompiledCall, const_bufs: list[Any], x64: bool) -> None:
        nc = len(entry.consts)
        passed = call.kept
        self.call = call
        # Buffers passed before the arguments': the compiled call's own
        # constants, then the captured constants the executable keeps.
        self.passed_consts = call.const_bufs + [const_bufs[k] for k in passed if k < nc]
        self.executable = call.executable
        self.handlers = call.handlers
        self.device = call.device
        self.out_avals = None if call.float0_outs else call.out_avals
        passed_args = tuple(k - nc for k in passed if k >= nc)
        self.passed_args = None if passed_args == tuple(range(len(entry.in_avals))) else passed_args
        self.donated = tuple(k - nc for k, d in enumerate(call.donated) if d and k >= nc)
        self.out_tree = entry.out_tree
        self.single = entry.out_tree == _LEAF and not call.float0_outs
        self.flat_tuple = entry.out_tree == _tuple_tree(len(entry.out_avals))
        self.x64 = x64
        self.out_structure: Any = None  # the C++ output structure, when known (faster to rebuild)
        # Whether the tree fast path may run it inline: nothing donated, pruned
        # or captured, several outputs rebuilt by ``out_structure``.
        self.plain = False
        self.mixed = False  # whether the tree fast path saw host scalars among its leaves
        # Pacing of chained calls (``_pace``): whether to pace, the index of the
        # output to wait on, and (id of the last call's first output, that
        # call's output to wait on at the next chained call).
        self.chained = False
        self.pace_out = 0
        self.pace_wait: tuple[int, Any] = (0, None)

    def __call__(self, args: Sequence[Any], bufs: list[Any]) -> Any:
        donated = self.donated
        if donated and len(bufs) > 1 and len(set(map(id, bufs))) != len(bufs):
            # One buffer passed twice with a donation: the general path says
            # why that is refused (XLA would log an error line first).
            return _MISS
        if self.passed_args is not None:
            bufs = [bufs[k] for k in self.passed_args]
        if self.passed_consts:
            bufs = self.passed_consts + bufs
        try:
            outs = _consume(_run(self.executable, bufs), self.handlers)
        except _jaxlib.XlaRuntimeError:
            return _MISS
        for k in donated:
            # ``Array._donate`` inlined: the Array is marked donated and its
            # buffer freed unless XLA reused it (it did whenever it could).
            a = args[k]
            if a._state == _LIVE:
                buf = a._buf
                a._state = _DONATED
                a._buf = None
                if not _buffer_is_deleted(buf):
                    _jaxlib.delete(buf)
        avals = self.out_avals
        if avals is None:
            res = self.call.wrap(outs, False)
        elif self.single:
            return Array(outs[0], avals[0], self.device, False)
        else:
            # One Array per output, made without __init__ frames (a third cheaper).
            res = []
            append = res.append
            device = self.device
            for buf, aval in zip(outs, avals):
                out = _new(Array)
                out._buf = buf
                out.aval = aval
                out._device = device
                out._committed = False
                out._state = _LIVE
                append(out)
        if self.single:
            return res[0]
        if self.flat_tuple:
            return tuple(res)
        if self.out_structure is not None:
            return self.out_structure.unflatten(res)
        return tree_unflatten(self.out_tree, res)


# ---------------------------------------------------------------------------
# Pacing chained calls.
#
# XLA's CPU client runs a program of 1,000 flops or more on its worker
# threads; a Python loop ``p = step(p, ...)`` then dispatches step k + 1
# while step k runs.  When the dispatching thread runs ahead of the
# executions (plait's fast path dispatches a small training step in less
# time than XLA takes to run it), the executions queue up and each one costs
# more: on this 2-core machine the 1,000-step MLP loop of the benchmarks
# takes 18.5 ms with an unbounded queue and 14.6 ms when the loop waits for
# step k - 1 before dispatching step k + 1 (JAX, which never waits: 17.5 ms).
# So a chained call (its first argument leaf is the previous call's first
# result) waits for the call before the previous one: at most two
# executions of the signature in flight, every call still returning before
# its own execution ends.


_PACING_FLOPS: Final = 1000.0  # XLA's CPU client runs cheaper programs inline, in the caller's thread


def _learn_pacing(handler: _General) -> None:
    """Decide whether ``handler``'s calls are paced: its program runs on XLA's
    worker threads.  The output waited on is the smallest (held a call
    longer than the user might)."""
    try:
        flops = float(_jaxlib.cost_analysis(handler.executable).get("flops", 0.0))
    except Exception:
        return
    avals = handler.out_avals
    if flops < _PACING_FLOPS or not avals:
        return
    handler.pace_out = min(range(len(avals)), key=lambda k: math.prod(avals[k].shape))
    handler.chained = True


def _pace(handler: _General, first_in: Any, outs: list[Any]) -> None:
    """After a call of a paced handler: when it consumed the previous call's
    first result, wait for the call before that one (see above)."""
    last_id, wait_on = handler.pace_wait
    handler.pace_wait = (id(outs[0]), outs[handler.pace_out])
    if wait_on is not None and id(first_in) == last_id and not _buffer_is_deleted(wait_on):
        with contextlib.suppress(Exception):  # a failure is reported where its value is used
            _jaxlib.block_until_ready([wait_on])


def _fast_handler(entry: StagedCall, call: CompiledCall, const_bufs: list[Any]) -> _Simple | _General:
    """The handler running ``call`` on uncommitted Arrays of the signature's types."""
    x64 = config.x64_enabled
    single = entry.out_tree == _LEAF and not call.float0_outs
    nc = len(entry.consts)
    simple = (
        single
        and call.kept == tuple(range(nc, nc + len(entry.in_avals)))
        and not call.any_donated
        and not call.const_bufs
    )
    if simple:
        return _Simple(call.executable, call.handlers, entry.out_avals[0], call.device, x64)
    general = _General(entry, call, const_bufs, x64)
    if (
        single
        and len(entry.in_avals) == 1
        and general.donated == (0,)
        and general.passed_args is None
        and not general.passed_consts
        and general.out_avals is not None
    ):
        return _OneDonated(entry, call, const_bufs, x64)
    return general


class _OneDonated(_General):
    """The handler of a function of one donated Array with one output and
    nothing pruned or captured (``x = f(x)``): the jitted wrapper runs it
    inline; elsewhere it is a :class:`_General`."""

    __slots__ = ("out_aval",)

    def __init__(self, entry: StagedCall, call: CompiledCall, const_bufs: list[Any], x64: bool) -> None:
        super().__init__(entry, call, const_bufs, x64)
        self.out_aval = call.out_avals[0]


def _handler_for(entry: StagedCall, call: CompiledCall) -> _Simple | _General | None:
    """The fast handler of a staged call, its constants placed on the call's
    device once; ``None`` when a constant cannot be placed, or the program calls
    the host (its runs keep a token for ``effects_barrier``): the slow path stays."""
    if call.effects:
        return None
    try:
        const_bufs = [operand_buffer(c, a, call.device, "use") for c, a in zip(entry.consts, entry.operand_avals)]
    except Exception:
        return None
    return _fast_handler(entry, call, const_bufs)
