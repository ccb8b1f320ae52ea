"""``jit``: stage a function once per signature, compile it with XLA, cache it.

A jitted function traces its Python function once per *signature* (the
arguments' pytree structure, the shape, dtype and weak type of every leaf,
the values of the static arguments, the x64 flag and bound axis names),
lowers it to StableHLO and compiles it.

Calling it binds core's ``closed_call`` with a :class:`~plait_dispatch.cache.JitInfo`
(device, donations), so every interpreter (autodiff, batching, staging)
sees one call.  Outside any transformation the call runs the compiled
executable directly: the first call of a signature computes a *handler*
for it, and later calls whose arguments are all live, uncommitted Arrays
find it by their types alone (one dictionary lookup, or none when the types
are the last call's), with no flattening and no re-validation of what the
cache proved.  Liveness is asked of each buffer, so that XLA never sees a
dead one (one shared with a deleted Array).  Other calls (pytrees, host values,
static or keyword arguments, committed Arrays) flatten their arguments and
look the signature up in the tracing cache first.

This module holds the wrapper and its options and the state of one jitted
function (tracing, the caches, the general call path, AOT); the fast paths
are :mod:`plait_dispatch.jit_fast` (a mixin of the state), the per-signature
handlers :mod:`plait_dispatch.jit_handlers`, argument specifications and
cache keys :mod:`plait_dispatch.jit_signature`.
"""

from __future__ import annotations

import functools
import threading
import time
import weakref
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Final, Protocol, TypeVar, cast

from plait_core import (
    ConcretizationTypeError,
    ShapedArray,
    ShapeDtypeStruct,
    Tracer,
    config,
    eval_jaxpr,
    shaped_abstractify,
    trace_to_jaxpr,
)
from plait_core.primitives.calls import (
    closed_call_p,
    context_key,
    fun_name,
    hoist_consts,
)
from plait_core.staging import check_output_leaves, check_tracing_allowed
from plait_core.trace import EvalTrace
from plait_core.trace import _state as _trace_state
from plait_core.tree_util import (
    DictKey,
    PyTreeDef,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_unflatten,
)
from plait_core.wrapping import update_wrapper
from plait_dispatch import _jaxlib
from plait_dispatch.aot import Lowered, StagedCall, Traced
from plait_dispatch.array import _DONATED, _LIVE, Array
from plait_dispatch.cache import (
    JitInfo,
    Signature,
    compiled_call,
    computation_device,
    explain_cache_miss,
    log_trace,
    stats,
)
from plait_dispatch.jit_fast import FastPaths
from plait_dispatch.jit_handlers import _General, _OneDonated, _Simple
from plait_dispatch.jit_signature import MISS as _MISS
from plait_dispatch.jit_signature import (
    _ArgSpec,
    _as_ints,
    _as_names,
    _definition_site,
    _flat_tree,
    _positions,
    _short,
    _signature,
    _sizes_from_vmap,
)
from plait_dispatch.layouts import ShardingRequest
from plait_dispatch.spmd import SpmdFast, spmd_call, wants_spmd

__all__ = ["JitWrapped", "jit"]

F = TypeVar("F", bound=Callable[..., Any])

_MAX_SIGNATURES: Final = 4096

_new = object.__new__


class JitWrapped(Protocol):
    """A jitted function: call it, or stage it ahead of time."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def trace(self, *args: Any, **kwargs: Any) -> Traced: ...

    def lower(self, *args: Any, **kwargs: Any) -> Lowered: ...

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any: ...

    def clear_cache(self) -> None: ...

    def _cache_size(self) -> int: ...


def jit(
    fun: Callable[..., Any] | None = None,
    /,
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    device: Any = None,
    inline: bool = False,
    keep_unused: bool = False,
    backend: str | None = None,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Any:
    """Compile ``fun`` with XLA: the result computes what ``fun`` does, tracing
    and compiling once per signature and reusing the executable after.

    * ``static_argnums`` / ``static_argnames``: arguments passed to ``fun`` as
      Python values (they must be hashable; a new value traces again).  Given
      one, the other is inferred from ``fun``'s signature.
    * ``donate_argnums`` / ``donate_argnames``: arguments whose buffers the
      computation may reuse for outputs of the same shape and dtype.  Donated
      Arrays are deleted by the call (using them again raises
      :class:`~plait_core.DeletedArrayError`); a donation no output can use
      warns once.
    * ``device``: run on this device (committed results).  By default a call
      runs where its committed arguments are, else on the default device.
    * ``inline``: inside another transformation, stage ``fun``'s equations
      directly instead of one call.
    * ``keep_unused``: keep arguments ``fun`` does not use as parameters of
      the compiled computation (by default they are pruned).
    * ``in_shardings`` / ``out_shardings``: how the arguments (positional
      ones) and the outputs are laid out over devices: one sharding for all,
      or a tuple with one entry per positional argument (a pytree prefix of
      the output for ``out_shardings``); ``None`` entries leave the layout to
      the argument (or to XLA).  Such a function compiles with XLA's SPMD
      partitioner, and so does any call with an argument laid out on several
      devices; results carry the layout in ``.sharding``.

    Under :func:`plait_core.disable_jit` (``plait.disable_jit()``) a jitted
    function runs its Python body directly, for debugging.

    The jitted function has ``.trace(*args)``, ``.lower(*args)``,
    ``.eval_shape(*args)`` and ``.clear_cache()``.  Used without ``fun``
    (``@jit(static_argnames="n")``) it returns a decorator.
    """
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            donate_argnames=donate_argnames,
            device=device,
            inline=inline,
            keep_unused=keep_unused,
            backend=backend,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
        )
    if not callable(fun):
        raise TypeError(f"jit: expected a function, got {type(fun).__name__}: {fun!r}")
    if backend is not None and backend != _jaxlib.PLATFORM:
        raise ValueError(f"jit: unknown backend {backend!r}; plait runs on {_jaxlib.PLATFORM!r}")
    if device is not None:
        _check_device(device)
    for flag, name in ((inline, "inline"), (keep_unused, "keep_unused")):
        if not isinstance(flag, bool):
            raise TypeError(f"jit: {name} must be a bool, got {flag!r}")
    if device is not None and (in_shardings is not None or out_shardings is not None):
        raise ValueError("jit: device= cannot be combined with in_shardings / out_shardings; use shardings only")
    options = (
        _hashable_option(static_argnums), _hashable_option(static_argnames), _hashable_option(donate_argnums),
        _hashable_option(donate_argnames), device, inline, keep_unused, in_shardings, out_shardings,
    )  # fmt: skip
    state = _shared_state(fun, options)
    if state is None:
        state = _JitState(
            fun, static_argnums, static_argnames, donate_argnums, donate_argnames, device, inline, keep_unused
        )
        if in_shardings is not None or out_shardings is not None:
            state.layouts = ShardingRequest(in_shardings, out_shardings, state.desc)
        _share_state(fun, options, state)
    return state.make_wrapper()


def _keeping(fun: Callable[..., Any], method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)``, holding ``fun`` alive meanwhile."""
    del fun
    return method(*args, **kwargs)


# As in JAX, jit(f) made twice with the same options shares one cache: the states are
# kept per function, weakly (a state holds its function weakly, its wrappers strongly).
_SHARED: weakref.WeakKeyDictionary[Any, dict[Hashable, _JitState]] = weakref.WeakKeyDictionary()


def _hashable_option(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _shared_state(fun: Callable[..., Any], options: tuple[Any, ...]) -> _JitState | None:
    try:
        per_fun = _SHARED.get(fun)
        return None if per_fun is None else per_fun.get(options)
    except TypeError:  # an unhashable option or callable, or one without weak references
        return None


def _share_state(fun: Callable[..., Any], options: tuple[Any, ...], state: _JitState) -> None:
    try:
        hash(options)
        _SHARED.setdefault(fun, {})[options] = state
    except TypeError:
        pass


def _check_device(device: Any) -> None:
    if not _jaxlib.is_device(device):
        raise TypeError(
            f"jit: device must be a device from plait.devices(), got {type(device).__name__}: {device!r}"
        )
    if not _jaxlib.owns_device(device):
        raise ValueError(f"jit: device {device!r} is not one of plait's devices {_jaxlib.devices()}")




# ---------------------------------------------------------------------------
# The state of one jitted function.


class _JitState(FastPaths):
    def __init__(
        self,
        fun: Callable[..., Any],
        static_argnums: int | Sequence[int] | None,
        static_argnames: str | Iterable[str] | None,
        donate_argnums: int | Sequence[int] | None,
        donate_argnames: str | Iterable[str] | None,
        device: Any,
        inline: bool,
        keep_unused: bool,
    ) -> None:
        # Weakly, so that the cache shared through _SHARED dies with the function;
        # every wrapper keeps the function alive (its __wrapped__).
        try:
            self._fun_ref: Callable[[], Any] = weakref.ref(fun)
        except TypeError:
            self._fun_ref = lambda: fun
        self.name = fun_name(fun)
        self.desc = f"jit({self.name})"
        s_nums, s_names = (
            _as_ints(static_argnums, "static_argnums"),
            _as_names(static_argnames, "static_argnames"),
        )
        d_nums, d_names = (
            _as_ints(donate_argnums, "donate_argnums"),
            _as_names(donate_argnames, "donate_argnames"),
        )
        self.static = _ArgSpec(
            fun, s_nums, s_names, "static", static_argnums is None, static_argnames is None
        )
        self.donate = _ArgSpec(
            fun, d_nums, d_names, "donate", donate_argnums is None, donate_argnames is None
        )
        both = set(self.static.nums) & set(self.donate.nums) or self.static.names & self.donate.names
        if both:
            raise ValueError(
                f"jit of {self.name}: arguments {sorted(both, key=str)} are both static and donated; "
                "static arguments are Python values and cannot be donated"
            )
        self.param_names = self.static.param_names
        self.device = device
        self.inline = inline
        self.keep_unused = keep_unused
        self.has_statics = bool(self.static.nums or self.static.names)
        self.entries: dict[Hashable, StagedCall] = {}
        self.seen: list[Signature] = []
        self.lock = threading.RLock()
        self.fast: dict[tuple[Any, ...], _Simple | _General] = {}
        self.memo: list[tuple[list[Any], Any]] = [([_MISS], None)]
        self.layouts: ShardingRequest | None = None
        self._fun_signature: Any = _MISS  # the function's signature, computed for the first wrapper
        # Fast handlers of the other signatures (pytrees, host scalars, static
        # and keyword arguments): by (C++ structure of the dynamic arguments,
        # static values) -> [leaf types, handler] pairs.
        self.tree_fast: dict[Hashable, tuple[list[Any], ...]] = {}  # [types, _Simple | _General]
        # Every signature of a structure with more than ``TREE_SCAN``: by (leaf types, x64).
        self.tree_more: dict[Hashable, dict[tuple[Any, ...], _Simple | _General]] = {}
        self.static_split: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        # Fast handlers of sharded signatures (multi-device Arrays, shardings), keyed the same way.
        self.spmd_fast: dict[Hashable, tuple[SpmdFast, ...]] = {}
        self.spmd_more: dict[Hashable, dict[tuple[Any, ...], SpmdFast]] = {}  # as ``tree_more``

    # -- the wrapper -------------------------------------------------------

    def make_wrapper(self) -> JitWrapped:
        fast = self.fast
        slow = self.call
        state = _trace_state
        cfg = config
        run, consume, is_deleted = _jaxlib.run_executable, _jaxlib.consume_results, _jaxlib.buffer_is_deleted
        memo = self.memo
        tree_fast = self.tree_fast
        tree_call = self.tree_call
        has_statics = self.has_statics  # then ``fast`` is keyed by the static values too
        static_call = self.static_call
        spmd_fast = self.spmd_fast
        spmd_fast_call = self.spmd_fast_call

        fun = self.fun

        def jitted(*args: Any, **kwargs: Any) -> Any:
            if cfg.guarded:  # disable_jit, no_execution or a default device: the general path
                if cfg.jit_disabled:
                    return fun(*args, **kwargs)
                return slow(args, kwargs)
            if not kwargs and not has_statics and state.trace.__class__ is EvalTrace:
                # Every argument a live, uncommitted Array: its buffer goes to
                # the executable as it is.  Liveness is asked of the buffer
                # itself (one shared with a deleted Array is dead too, and XLA
                # must not see it: it would log an error line before failing).
                avals: list[ShapedArray] = []
                bufs: list[Any] = []
                for a in args:
                    if a.__class__ is not Array:
                        break
                    buf = a._buf
                    if a._committed or buf is None or is_deleted(buf):
                        break
                    avals.append(a.aval)
                    bufs.append(buf)
                else:
                    # The last signature is checked first, by identity of the
                    # abstract values (results of a computation share them).
                    last = memo[0]
                    if avals == last[0]:
                        handler = last[1]
                    else:
                        handler = fast.get(tuple(avals))
                        if handler is not None:
                            memo[0] = (avals, handler)
                    if handler is None or cfg.x64_enabled is not handler.x64:
                        pass
                    elif handler.__class__ is _Simple:
                        # The commonest case inlined: one output, nothing
                        # donated, pruned or captured.
                        try:
                            outs = consume(run(handler.executable, bufs), handler.handlers)
                        except _jaxlib.XlaRuntimeError:
                            pass  # the general path reports it
                        else:
                            out = _new(Array)  # ``Array(...)`` without its __init__ frame
                            out._buf = outs[0]
                            out.aval = handler.aval
                            out._device = handler.device
                            out._committed = False
                            out._state = _LIVE
                            return out
                    elif handler.__class__ is _OneDonated:
                        # ``x = f(x)`` with ``x`` donated, inlined as above; the
                        # Array is marked donated as ``Array._donate`` does.
                        try:
                            outs = consume(run(handler.executable, bufs), handler.handlers)
                        except _jaxlib.XlaRuntimeError:
                            pass  # the general path reports it
                        else:
                            a = args[0]
                            if a._state == _LIVE:
                                a._state = _DONATED
                                a._buf = None
                                if not is_deleted(bufs[0]):
                                    _jaxlib.delete(bufs[0])
                            out = _new(Array)  # ``Array(...)`` without its __init__ frame
                            out._buf = outs[0]
                            out.aval = handler.out_aval
                            out._device = handler.device
                            out._committed = False
                            out._state = _LIVE
                            return out
                    else:
                        out = handler(args, bufs)
                        if out is not _MISS:
                            return out
            if has_statics and not kwargs and fast and state.trace.__class__ is EvalTrace:
                out = static_call(args)
                if out is not _MISS:
                    return out
            if tree_fast and state.trace.__class__ is EvalTrace:
                out = tree_call(args, kwargs)
                if out is not _MISS:
                    return out
            if spmd_fast and state.trace.__class__ is EvalTrace:
                out = spmd_fast_call(args, kwargs)
                if out is not _MISS:
                    return out
            return slow(args, kwargs)

        fun = self.fun
        update_wrapper(jitted, fun)
        wrapper = cast(Any, jitted)
        # As JAX's jit object, the wrapper reports the function's signature even
        # to inspect.signature(..., follow_wrapped=False) (chex's fake_pmap reads it).
        if self._fun_signature is _MISS:
            self._fun_signature = _signature(fun)
        if self._fun_signature is not None:
            wrapper.__signature__ = self._fun_signature
        # Each method keeps the function alive (the state holds it weakly): jit(f).lower(x)
        # may drop the wrapper before lower runs.
        wrapper.trace = functools.partial(_keeping, fun, self.trace)
        wrapper.lower = functools.partial(_keeping, fun, self.lower)
        wrapper.eval_shape = functools.partial(_keeping, fun, self.eval_shape)
        wrapper.clear_cache = self.clear_cache
        wrapper._cache_size = self.cache_size
        wrapper.__plait_jit__ = self
        return cast(JitWrapped, wrapper)

    @property
    def fun(self) -> Callable[..., Any]:
        """The jitted function (alive while any of its wrappers is)."""
        fun = self._fun_ref()
        assert fun is not None, "a jit state outlived its function"
        return cast(Callable[..., Any], fun)

    def clear_cache(self) -> None:
        """Forget every traced signature (and its fast handlers)."""
        with self.lock:
            self.entries.clear()
            self.fast.clear()
            self.tree_fast.clear()
            self.tree_more.clear()
            self.spmd_fast.clear()
            self.spmd_more.clear()
            self.memo[0] = ([_MISS], None)
            self.seen.clear()

    def cache_size(self) -> int:
        """Number of signatures traced and cached."""
        return len(self.entries)

    # -- staging -----------------------------------------------------------

    def split(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any], tuple[tuple[str, Any], ...], list[int]]:
        """``(dynamic args, dynamic kwargs, statics as (label, value), positions of the dynamic args)``."""
        if not self.has_statics:
            return args, kwargs, (), list(range(len(args)))
        nargs = len(args)
        static_pos = _positions(self.static.nums, nargs)
        dyn_pos = [i for i in range(nargs) if i not in static_pos]
        statics: list[tuple[str, Any]] = [(self.arg_label(i), args[i]) for i in sorted(static_pos)]
        dyn_kwargs = {}
        for k, v in kwargs.items():
            if k in self.static.names:
                statics.append((k, v))
            else:
                dyn_kwargs[k] = v
        for label, value in statics:
            try:
                hash(value)
            except TypeError:
                raise ValueError(
                    f"{self.desc}: static argument {label} has the unhashable type {type(value).__name__} "
                    f"({_short(value)}); static arguments must be hashable (use a tuple instead of a list, "
                    "or make the argument dynamic)"
                ) from None
        return tuple(args[i] for i in dyn_pos), dyn_kwargs, tuple(statics), dyn_pos

    def arg_label(self, i: int) -> str:
        names = self.param_names
        if names is not None and i < len(names):
            return repr(names[i])
        return f"args[{i}]"

    def leaf_info(self, dyn: Any, dyn_pos: list[int], nargs: int) -> tuple[tuple[str, ...], tuple[bool, ...]]:
        """Per argument leaf: a readable name and whether it is donated."""
        names: list[str] = []
        donated: list[bool] = []
        paths, _ = tree_flatten_with_path(dyn)
        params = self.param_names
        donated_pos = _positions(self.donate.nums, nargs)
        for path, _leaf in paths:
            top, rest = path[:2], path[2:]
            if isinstance(top[0], SequenceKey) and top[0].idx == 0 and isinstance(top[1], SequenceKey):
                pos = dyn_pos[top[1].idx]
                base = params[pos] if params is not None and pos < len(params) else f"args[{pos}]"
                is_donated = pos in donated_pos or base in self.donate.names
            else:
                key = top[1].key if isinstance(top[1], DictKey) else str(top[1])
                base = str(key)
                is_donated = base in self.donate.names
            names.append(base + keystr(rest))
            donated.append(is_donated)
        return tuple(names), tuple(donated)

    def abstractify(
        self, leaves: list[Any], dyn: Any, dyn_pos: list[int], nargs: int
    ) -> tuple[ShapedArray, ...]:
        """The abstract values of the argument leaves; a leaf that is not an
        array or scalar is a ``TypeError`` naming the argument."""
        avals = []
        for k, x in enumerate(leaves):
            if type(x) is Array:
                avals.append(x.aval)
                continue
            try:
                avals.append(shaped_abstractify(x))
            except TypeError:
                names, _ = self.leaf_info(dyn, dyn_pos, nargs)
                raise TypeError(
                    f"{self.desc}: argument {names[k]} has type {type(x).__name__} ({_short(x)}), which is not "
                    "an array or scalar. Pass arrays (or pytrees of arrays), or mark the argument static "
                    "with static_argnums / static_argnames"
                ) from None
        return tuple(avals)

    def staged(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[StagedCall, list[Any]]:
        """The staged call for these arguments (traced on a miss) and their leaves."""
        dyn_args, dyn_kwargs, statics, dyn_pos = self.split(args, kwargs)
        dyn = (dyn_args, dyn_kwargs)
        leaves, in_tree = tree_flatten(dyn)
        avals = self.abstractify(leaves, dyn, dyn_pos, len(args))
        static_key = tuple((label, type(v), v) for label, v in statics)
        key = (in_tree, avals, static_key, context_key())
        entry = self.entries.get(key)
        if entry is not None:
            stats.bump("trace_hits")
            return entry, leaves
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None:
                return entry, leaves
            entry = self.trace_new(leaves, in_tree, avals, statics, dyn, dyn_pos, args, kwargs)
            if not any(isinstance(c, Tracer) for c in entry.consts):
                if len(self.entries) >= _MAX_SIGNATURES:
                    self.entries.clear()
                    self.fast.clear()
                    self.tree_fast.clear()
                    self.tree_more.clear()
                    self.spmd_fast.clear()
                    self.spmd_more.clear()
                self.entries[key] = entry
            return entry, leaves

    def trace_new(
        self,
        leaves: list[Any],
        in_tree: PyTreeDef,
        avals: tuple[ShapedArray, ...],
        statics: tuple[tuple[str, Any], ...],
        dyn: Any,
        dyn_pos: list[int],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
    ) -> StagedCall:
        check_tracing_allowed(f"{self.desc} (defined at {_definition_site(self.fun)})")
        stats.bump("traces")
        start = time.perf_counter()
        leaf_names, leaf_donated = self.leaf_info(dyn, dyn_pos, len(args))
        signature = Signature(in_tree, avals, tuple((label, v) for label, v in statics), context_key())
        if config.explain_cache_misses:
            where = f"{self.desc} (defined at {_definition_site(self.fun)})"
            explain_cache_miss(where, signature, self.seen, leaf_names)
        self.seen.append(signature)
        if len(self.seen) > 64:
            del self.seen[0]
        static_pos = _positions(self.static.nums, len(args))
        static_kwargs = {k: v for k, v in kwargs.items() if k in self.static.names}
        fun = self.fun
        out_trees: list[PyTreeDef] = []
        what = self.desc

        def flat_fun(*tracers: Any) -> list[Any]:
            dargs, dkwargs = tree_unflatten(in_tree, tracers)
            it = iter(dargs)
            full = [args[i] if i in static_pos else next(it) for i in range(len(args))]
            out = fun(*full, **dkwargs, **static_kwargs)
            out_leaves, out_tree = tree_flatten(out)
            check_output_leaves(out_leaves, out_tree, what)
            out_trees.append(out_tree)
            return out_leaves

        closed = trace_to_jaxpr(flat_fun, avals)
        traced = time.perf_counter() - start
        stats.bump("trace_seconds", traced)
        log_trace(self.desc, traced)
        body, consts = hoist_consts(closed)
        nc = len(consts)
        shardings = None
        if self.layouts is not None:
            ins = self.layouts.for_args(dyn, dyn_pos)
            outs = self.layouts.for_outputs(out_trees[0], len(closed.out_avals))
            if any(s is not None for s in (*ins, *outs)):
                # Only requested layouts make the call SPMD: shardings that are all
                # None (flax.nnx.jit passes in_shardings=None, out_shardings=(None, ()))
                # leave every layout to the operands, as a jit without shardings does.
                shardings = ((None,) * nc + ins, outs)
        info = JitInfo(
            self.device,
            (False,) * nc + leaf_donated,
            self.keep_unused,
            (None,) * nc + leaf_names,
            shardings,
        )
        donate_argnums = tuple(sorted(set(dyn_pos) & _positions(self.donate.nums, len(args))))
        return StagedCall(
            self.name,
            self.desc,
            closed,
            body,
            consts,
            tuple(body.in_avals),
            in_tree,
            out_trees[0],
            info,
            leaf_names,
            donate_argnums,
        )

    # -- calling -----------------------------------------------------------

    def call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The general path: flatten, find or trace the signature, then run it
        (outside transformations) or bind it as a call (inside)."""
        try:
            entry, leaves = self.staged(args, kwargs)
        except ConcretizationTypeError:
            if not _sizes_from_vmap(args, kwargs):
                raise
            # Inside vmap over sizes, an integer argument used as a size
            # (``iota(n)``) has one value per element: no one jaxpr has those
            # shapes, so the body is traced under vmap itself, which makes the
            # value ragged (a pile when returned with out_axes=pile_axis).
            return self.fun(*args, **kwargs)
        if _trace_state.trace.__class__ is EvalTrace:
            return self.run(entry, leaves, args, kwargs)
        if self.inline:
            outs = eval_jaxpr(entry.body.jaxpr, [], *entry.consts, *leaves)
        else:
            outs = closed_call_p.bind(
                *entry.consts, *leaves, call_jaxpr=entry.body, name=self.name, jit_info=entry.info
            )
        return tree_unflatten(entry.out_tree, outs)

    def run(self, entry: StagedCall, leaves: list[Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        for x in leaves:
            if isinstance(x, Tracer):  # a value of a transformation that has ended
                _trace_state.trace.check_foreign_tracer(x)
        operands = [*entry.consts, *leaves]
        if wants_spmd(entry.body, operands, entry.info):
            spmd = spmd_call(entry.body, operands, entry.info, self.name, self.desc)
            outs = spmd.call(operands, self.desc)
            self.install_spmd(entry, spmd, operands, args, kwargs)
            return tree_unflatten(entry.out_tree, outs)
        device, committed = computation_device(operands, self.device, self.desc, entry.info.names)
        call = compiled_call(entry.body, entry.operand_avals, device, entry.info, self.desc)
        outs = call.call(operands, committed, self.desc)
        if config.guarded:  # a configured default device: its calls are not the fast paths' default
            return tree_unflatten(entry.out_tree, outs)
        if (
            not committed
            and not kwargs
            and not self.has_statics
            and len(leaves) == len(args)
            and all(type(a) is Array for a in args)
            and entry.in_tree == _flat_tree(len(args))
        ):
            self.install_fast(entry, call)
        elif not committed:
            if self.has_statics and not kwargs:
                self.install_static(entry, call, leaves, args)
            self.install_tree(entry, call, leaves, args, kwargs)
        return tree_unflatten(entry.out_tree, outs)

    # -- ahead of time -------------------------------------------------------

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """Stage for these arguments (static ones fixed): a :class:`Traced`."""
        entry, _ = self.staged(args, kwargs)
        return Traced(entry)

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Stage and lower for these arguments: a :class:`Lowered`."""
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args: Any, **kwargs: Any) -> Any:
        """The output's shapes and dtypes as a tree of ``ShapeDtypeStruct``,
        without compiling or running anything."""
        entry, _ = self.staged(args, kwargs)
        return tree_unflatten(
            entry.out_tree,
            [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in entry.out_avals],
        )


def jit_state(f: Any) -> _JitState | None:
    """The state behind a jitted function (``None`` if ``f`` is not one)."""
    s = getattr(f, "__plait_jit__", None)
    return s if isinstance(s, _JitState) else None
