"""The fast paths of a jitted function: calls whose arguments are all live
Arrays (found by their types alone), calls with static arguments, with
pytrees, and with sharded Arrays (SPMD).  A mixin of :class:`_JitState`
(:mod:`plait_dispatch.jit`), which owns the caches these methods fill."""

from __future__ import annotations

import operator
import threading
from collections.abc import Hashable
from typing import Any, cast

from plait_core import (
    config,
)
from plait_dispatch import _jaxlib, fast_tree
from plait_dispatch.aot import StagedCall
from plait_dispatch.array import _LIVE, Array
from plait_dispatch.cache import (
    CompiledCall,
)
from plait_dispatch.eager import _HOST_SCALAR_TYPES, _learn_host_scalars
from plait_dispatch.jit_handlers import _General, _handler_for, _learn_pacing, _pace, _Simple
from plait_dispatch.jit_signature import MISS as _MISS
from plait_dispatch.jit_signature import _ArgSpec, _flat_tree, _mixed_leaves, _positions
from plait_dispatch.layouts import ShardingRequest
from plait_dispatch.spmd import MISS as _SPMD_MISS
from plait_dispatch.spmd import SpmdCall, SpmdFast, spmd_fast_handler

_cpp_flatten = fast_tree.flatten
_buffer_is_deleted = _jaxlib.buffer_is_deleted
_run = _jaxlib.run_executable
_consume = _jaxlib.consume_results
_new = object.__new__
_get_aval = operator.attrgetter("aval")
_get_sharding = operator.attrgetter("_sharding")

TREE_SCAN = 8
"""Signatures of one pytree structure that the tree fast path compares one by
one (the common case: one or two, matched by the identity of their types).
A structure with more has all of its signatures in ``tree_more``, found by
the hash of their types (sharded ones: ``spmd_fast`` and ``spmd_more``, by
their types and layouts)."""


class FastPaths:
    """The fast-path methods of a jitted function's state (see the module's docstring).
    :class:`plait_dispatch.jit._JitState` sets these attributes."""

    static: _ArgSpec
    has_statics: bool
    lock: threading.RLock
    fast: dict[tuple[Any, ...], _Simple | _General]
    memo: list[tuple[list[Any], Any]]
    layouts: ShardingRequest | None
    tree_fast: dict[Hashable, tuple[list[Any], ...]]
    tree_more: dict[Hashable, dict[tuple[Any, ...], _Simple | _General]]
    static_split: dict[int, tuple[tuple[int, ...], tuple[int, ...]]]
    spmd_fast: dict[Hashable, tuple[SpmdFast, ...]]
    spmd_more: dict[Hashable, dict[tuple[Any, ...], SpmdFast]]

    def install_fast(self, entry: StagedCall, call: CompiledCall) -> None:
        """Remember a handler for calls with all-Array arguments of this signature."""
        handler = _handler_for(entry, call)
        if handler is None:
            return
        with self.lock:
            self.fast[entry.in_avals] = handler

    def fast_key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Hashable]:
        """``(dynamic arguments as (args, kwargs), static values)``: what the
        tree fast path flattens and what it keys on besides the structure
        (each static value with its type, as the tracing cache keys them)."""
        if not self.has_statics:
            return (args, kwargs), None
        nargs = len(args)
        split = self.static_split.get(nargs)
        if split is None:
            static_pos = _positions(self.static.nums, nargs)
            split = (tuple(sorted(static_pos)), tuple(i for i in range(nargs) if i not in static_pos))
            self.static_split[nargs] = split
        spos, dpos = split
        skey: list[Any] = [(args[i].__class__, args[i]) for i in spos]
        dyn_kwargs = kwargs
        if kwargs:
            names = self.static.names
            dyn_kwargs = {}
            for k, v in kwargs.items():
                if k in names:
                    skey.append((k, v.__class__, v))
                else:
                    dyn_kwargs[k] = v
        return (tuple([args[i] for i in dpos]), dyn_kwargs), tuple(skey)

    def static_call(self, args: tuple[Any, ...]) -> Any:
        """The fast path of a function with static arguments, called
        positionally with live uncommitted Arrays for the others: the handler
        found by the static values and the Arrays' types (no flattening);
        ``_MISS`` otherwise."""
        split = self.static_split.get(len(args))
        if split is None:
            return _MISS
        spos, dpos = split
        key: list[Any] = []  # the Arrays' types, then each static value's class and value
        bufs: list[Any] = []
        for i in dpos:
            a = args[i]
            if a.__class__ is not Array:
                return _MISS
            buf = a._buf
            if a._committed or buf is None or _buffer_is_deleted(buf):
                return _MISS
            key.append(a.aval)
            bufs.append(buf)
        for i in spos:
            v = args[i]
            key.append(v.__class__)
            key.append(v)
        # The last signature first (``memo`` is free: the all-Array path above
        # never runs for a function with static arguments): equal static values
        # of the same classes and identical types (results share theirs).
        last = self.memo[0]
        try:
            if key == last[0]:
                handler = last[1]
            else:
                handler = self.fast.get((tuple([(args[i].__class__, args[i]) for i in spos]), *key[: len(dpos)]))
                if handler is not None:
                    self.memo[0] = (key, handler)
        except Exception:  # an unhashable (or uncomparable) static value: the general path says so
            return _MISS
        if handler is None or handler.x64 is not config.x64_enabled:
            return _MISS
        if handler.__class__ is _Simple:
            try:
                outs = _consume(_run(handler.executable, bufs), handler.handlers)
            except _jaxlib.XlaRuntimeError:
                return _MISS  # the general path reports it
            out = _new(Array)  # ``Array(...)`` without its __init__ frame
            out._buf = outs[0]
            out.aval = handler.aval
            out._device = handler.device
            out._committed = False
            out._state = _LIVE
            return out
        return cast(_General, handler)([args[i] for i in dpos], bufs)

    def install_static(self, entry: StagedCall, call: CompiledCall, leaves: list[Any], args: tuple[Any, ...]) -> None:
        """Remember a handler for positional calls with these static values and
        live uncommitted Arrays of this signature's types for the other arguments."""
        if self.layouts is not None:
            return
        try:
            (dyn_args, _), skey = self.fast_key(args, {})
            key = (skey, *entry.in_avals)
            hash(key)
        except Exception:
            return
        if (
            len(dyn_args) != len(leaves)
            or any(type(a) is not Array for a in dyn_args)
            or entry.in_tree != _flat_tree(len(dyn_args))
        ):
            return
        handler = _handler_for(entry, call)
        if handler is None:
            return
        with self.lock:
            self.fast[key] = handler

    def tree_key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[list[Any], Hashable]:
        """The leaves of the dynamic arguments (flattened in C++) and the key of
        ``tree_fast``: for positional calls of a function without static
        arguments, the C++ structure of ``args`` itself (a ``PyTreeDef``, never
        equal to a tuple); otherwise ``(structure of (args, kwargs), static values)``."""
        if not kwargs and not self.has_statics:
            leaves, structure = _cpp_flatten(args)
            return leaves, structure
        dyn, skey = self.fast_key(args, kwargs)
        leaves, structure = _cpp_flatten(dyn)
        return leaves, (structure, skey)

    def tree_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The fast path of a signature with pytree, host-scalar, static or
        keyword arguments (outside transformations): the dynamic arguments
        flattened in C++ (:mod:`plait_dispatch.fast_tree`), the handler found by
        their structure and static values, then by the leaves' types; no
        re-validation of what the tracing cache proved.  ``_MISS`` for
        whatever is not a case it knows (the general path takes it)."""
        try:
            if not kwargs and not self.has_statics:
                # Positional dynamic arguments only (the common case): the
                # structure of ``args`` itself is the key (see ``tree_key``).
                leaves, key = _cpp_flatten(args)
            else:
                leaves, key = self.tree_key(args, kwargs)
            cands = self.tree_fast.get(key)
        except Exception:  # unhashable statics, unsortable keys: the general path says why
            return _MISS
        if cands is None:
            return _MISS
        if cands[0][1].mixed:
            # The signature had host scalars among its leaves: the loop that
            # takes them, without first failing on them (an exception costs
            # about a tenth of the whole call).
            mixed = _mixed_leaves(leaves)
            if mixed is None:
                return _MISS
            avals, bufs = mixed
        else:
            # Every leaf a live uncommitted Array (the common case).  One loop:
            # on Python 3.11 it costs about half of four ``map`` passes over the
            # leaves with ``attrgetter`` (0.57 against 1.05 us for 10 leaves).
            bufs = []
            avals = []
            for a in leaves:
                if a.__class__ is not Array:
                    mixed = _mixed_leaves(leaves)
                    if mixed is None:
                        return _MISS
                    avals, bufs = mixed
                    break
                buf = a._buf
                if a._committed or buf is None or _buffer_is_deleted(buf):
                    return _MISS
                bufs.append(buf)
                avals.append(a.aval)
        x64 = config.x64_enabled
        handler: Any  # narrowed by its class below
        more = self.tree_more.get(key) if self.tree_more else None
        if more is not None:
            # Many signatures of this structure (a loop over sequences of many
            # lengths): found by their types' hash, not compared one by one.
            try:
                found = more.get((tuple(avals), x64))
            except TypeError:  # an unhashable type: the general path
                return _MISS
            if found is None:
                return _MISS
            handler = found
        else:
            for pair in cands:
                if pair[0] == avals and pair[1].x64 is x64:
                    handler = pair[1]
                    # Identical types match faster next time (results of one
                    # computation share their abstract values).
                    pair[0] = avals
                    break
            else:
                return _MISS
        if handler.__class__ is _Simple:
            try:
                outs = _consume(_run(handler.executable, bufs), handler.handlers)
            except _jaxlib.XlaRuntimeError:
                return _MISS  # the general path reports it
            out = _new(Array)  # ``Array(...)`` without its __init__ frame
            out._buf = outs[0]
            out.aval = handler.aval
            out._device = handler.device
            out._committed = False
            out._state = _LIVE
            return out
        if handler.plain:
            # A pytree in, a pytree out, nothing donated, pruned or captured
            # (a training step): ``_General.__call__`` inlined, one frame less.
            try:
                outs = _consume(_run(handler.executable, bufs), handler.handlers)
            except _jaxlib.XlaRuntimeError:
                return _MISS  # the general path reports it
            if handler.chained:
                _pace(handler, bufs[0], outs)
            res: list[Array] = []
            append = res.append
            device = handler.device
            for buf, aval in zip(outs, handler.out_avals):
                out = _new(Array)
                out._buf = buf
                out.aval = aval
                out._device = device
                out._committed = False
                out._state = _LIVE
                append(out)
            return handler.out_structure.unflatten(res)
        return handler(leaves, bufs)

    def install_tree(
        self, entry: StagedCall, call: CompiledCall, leaves: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        """Remember a handler for calls of this signature whose leaves are all
        uncommitted Arrays or host scalars (pytrees, statics, keywords)."""
        if self.layouts is not None:
            return
        for x in leaves:
            if type(x) is not Array and x.__class__ not in _HOST_SCALAR_TYPES:
                return
        try:
            cpp_leaves, key = self.tree_key(args, kwargs)
            hash(key)
        except Exception:
            return
        if len(cpp_leaves) != len(leaves) or any(a is not b for a, b in zip(cpp_leaves, leaves)):
            return  # the two flatteners disagree on this tree: leave it to core's
        handler = _handler_for(entry, call)
        if handler is None:
            return
        if handler.__class__ is _General and any(type(leaves[k]) is not Array for k in handler.donated):
            return
        _learn_host_scalars(leaves, entry.in_avals)
        mixed = _mixed_leaves(leaves)
        if mixed is None:
            return  # a host scalar the table does not keep (0.0, NaN)
        handler.mixed = any(type(x) is not Array for x in leaves)
        if handler.__class__ is _General:
            handler.out_structure = fast_tree.structure_of(entry.out_tree)
            handler.plain = (
                handler.out_structure is not None
                and handler.out_avals is not None
                and not handler.single
                and not handler.donated
                and handler.passed_args is None
                and not handler.passed_consts
            )
            if handler.plain and handler.out_avals:
                _learn_pacing(handler)
        with self.lock:
            cands = self.tree_fast.get(key, ())
            # A signature already there missed only because its host scalars
            # were forgotten (the table is full): they are learnt again above.
            x64 = handler.x64
            if any(pair[0] == mixed[0] and pair[1].x64 is x64 for pair in cands):
                return
            if len(cands) < TREE_SCAN:
                self.tree_fast[key] = (*cands, [mixed[0], handler])
                return
            # More signatures than the scan keeps: from now on all of them (the
            # scanned ones too) by their types' hash.  Before, the ones past the
            # scan took the general path on every call, and installed again.
            try:
                more = self.tree_more.get(key)
                if more is None:
                    more = {(tuple(pair[0]), pair[1].x64): pair[1] for pair in cands}
                more[(tuple(mixed[0]), x64)] = handler
            except TypeError:  # an unhashable type: the general path keeps this signature
                return
            self.tree_more[key] = more

    def spmd_fast_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The fast path of a sharded signature: the dynamic arguments
        flattened in C++, the handler found by their structure and static
        values, then by the leaves' types and shardings (:class:`SpmdFast`);
        ``_MISS`` for the general path otherwise."""
        try:
            dyn, skey = self.fast_key(args, kwargs) if self.has_statics else ((args, kwargs), None)
            leaves, structure = _cpp_flatten(dyn)
            key = (structure, skey)
            cands = self.spmd_fast.get(key)
        except Exception:  # unhashable statics, unsortable keys: the general path says why
            return _MISS
        if cands is None:
            return _MISS
        x64 = config.x64_enabled
        more = self.spmd_more.get(key) if self.spmd_more else None
        if more is not None:
            # Many signatures of this structure: by the leaves' types and layouts.
            try:
                found = more.get((tuple(map(_get_aval, leaves)), tuple(map(_get_sharding, leaves)), x64))
            except (AttributeError, TypeError):  # not all multi-device Arrays, or unhashable
                return _MISS
            if found is None:
                return _MISS
            out = found(leaves)
            return _MISS if out is _SPMD_MISS else out
        for handler in cands:
            if handler.x64 is x64:
                out = handler(leaves)
                if out is not _SPMD_MISS:
                    return out
        return _MISS

    def install_spmd(
        self, entry: StagedCall, call: SpmdCall, operands: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> None:
        """Remember a fast handler for sharded calls of this signature (every
        leaf a multi-device Array laid out as the call wants it)."""
        try:
            dyn, skey = self.fast_key(args, kwargs)
            cpp_leaves, structure = _cpp_flatten(dyn)
            key = (structure, skey)
            hash(key)
        except Exception:
            return
        nc = len(entry.consts)
        if len(cpp_leaves) != len(operands) - nc or any(a is not b for a, b in zip(cpp_leaves, operands[nc:])):
            return  # the two flatteners disagree on this tree: leave it to core's
        handler = spmd_fast_handler(call, operands, nc, entry.out_tree)
        if handler is None:
            return
        handler.out_structure = fast_tree.structure_of(entry.out_tree)
        with self.lock:
            cands = self.spmd_fast.get(key, ())
            if any(h.same_signature(handler) for h in cands):
                return
            if len(cands) < TREE_SCAN:
                self.spmd_fast[key] = (*cands, handler)
                return
            # More signatures than the scan keeps: all of them by their types and
            # layouts (as ``tree_more``); before, the others took the general path.
            try:
                more = self.spmd_more.get(key)
                if more is None:
                    more = {h.lookup_key(): h for h in cands}
                more[handler.lookup_key()] = handler
            except TypeError:
                return
            self.spmd_more[key] = more
