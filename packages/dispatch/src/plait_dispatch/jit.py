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
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
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
from plait_core.trace import EvalTrace, Trace
from plait_core.trace import _state as _trace_state
from plait_core.tree_util import (
    DictKey,
    PyTreeDef,
    SequenceKey,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_structure,
    tree_unflatten,
)
from plait_dispatch import _jaxlib, fast_tree
from plait_dispatch.aot import Lowered, StagedCall, Traced
from plait_dispatch.array import _DONATED, _LIVE, Array
from plait_dispatch.cache import (
    CompiledCall,
    JitInfo,
    Signature,
    compiled_call,
    computation_device,
    explain_cache_miss,
    log_trace,
    operand_buffer,
    stats,
)
from plait_dispatch.eager import _HOST_SCALAR_TYPES, _host_scalars, _learn_host_scalars
from plait_dispatch.layouts import ShardingRequest
from plait_dispatch.spmd import MISS as _SPMD_MISS
from plait_dispatch.spmd import SpmdCall, SpmdFast, spmd_call, spmd_fast_handler, wants_spmd

__all__ = ["JitWrapped", "jit"]

F = TypeVar("F", bound=Callable[..., Any])

_MISS: Final = object()
"""What a fast handler returns when the arguments are not its case."""

_MAX_SIGNATURES: Final = 4096


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
# Argument specifications: statics and donations by position and by name.


def _as_ints(value: int | Sequence[int] | None, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    seq = (value,) if isinstance(value, int) else tuple(value)
    for v in seq:
        if type(v) is not int:
            raise TypeError(f"jit: {what} must be ints, got {v!r}")
    return seq


def _as_names(value: str | Iterable[str] | None, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    seq = (value,) if isinstance(value, str) else tuple(value)
    for v in seq:
        if not isinstance(v, str):
            raise TypeError(f"jit: {what} must be strings, got {v!r}")
    return seq


class _ArgSpec:
    """Which arguments are static / donated, by position and by name, with
    the inference JAX does between the two from the function's signature."""

    def __init__(
        self,
        fun: Callable[..., Any],
        nums: tuple[int, ...],
        names: tuple[str, ...],
        what: str,
        infer_nums: bool,
        infer_names: bool,
    ) -> None:
        params = _positional_params(fun)
        self.param_names = params
        if params is not None:
            var_pos = _has_var_positional(fun)
            for n in nums:
                if not var_pos and not -len(params) <= n < len(params):
                    raise ValueError(
                        f"jit of {fun_name(fun)}: {what}_argnums contains {n}, but the function takes "
                        f"{len(params)} positional argument(s)"
                    )
            kw = _keyword_names(fun)
            if kw is not None:
                for name in names:
                    if name not in kw:
                        raise ValueError(
                            f"jit of {fun_name(fun)}: {what}_argnames contains {name!r}, which is not a "
                            f"parameter of the function (parameters: {', '.join(kw) or 'none'})"
                        )
            if infer_names:
                names = names + tuple(params[n] for n in nums if -len(params) <= n < len(params))
            if infer_nums:
                nums = nums + tuple(i for i, p in enumerate(params) if p in names)
        self.nums = tuple(sorted(set(n if n >= 0 or params is None else n + len(params) for n in nums)))
        self.names = frozenset(names)


def _signature(fun: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _positional_params(fun: Callable[..., Any]) -> tuple[str, ...] | None:
    sig = _signature(fun)
    if sig is None:
        return None
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return tuple(p.name for p in sig.parameters.values() if p.kind in kinds)


def _keyword_names(fun: Callable[..., Any]) -> tuple[str, ...] | None:
    """Names that may be passed by keyword, or None when any name may."""
    sig = _signature(fun)
    if sig is None:
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return tuple(p.name for p in sig.parameters.values() if p.kind in kinds)


def _has_var_positional(fun: Callable[..., Any]) -> bool:
    sig = _signature(fun)
    return sig is not None and any(
        p.kind is inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()
    )


def _definition_site(fun: Callable[..., Any]) -> str:
    f: Any = inspect.unwrap(fun) if callable(fun) else fun
    while isinstance(f, functools.partial):
        f = f.func
    code = getattr(f, "__code__", None)
    if code is None:
        return "an unknown place"
    return f"{code.co_filename}:{code.co_firstlineno}"


# ---------------------------------------------------------------------------
# The state of one jitted function.


class _JitState:
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
        # Fast handlers of the other signatures (pytrees, host scalars, static
        # and keyword arguments): by (C++ structure of the dynamic arguments,
        # static values) -> [leaf types, handler] pairs.
        self.tree_fast: dict[Hashable, tuple[list[Any], ...]] = {}  # [types, _Simple | _General]
        self.static_split: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        # Fast handlers of sharded signatures (multi-device Arrays, shardings), keyed the same way.
        self.spmd_fast: dict[Hashable, tuple[SpmdFast, ...]] = {}

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
        functools.update_wrapper(jitted, fun)
        wrapper = cast(Any, jitted)
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
            self.spmd_fast.clear()
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
                    self.spmd_fast.clear()
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
            if len(cands) < 8 and not any(pair[0] == mixed[0] and pair[1].x64 is x64 for pair in cands):
                self.tree_fast[key] = (*cands, [mixed[0], handler])

    def spmd_fast_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The fast path of a sharded signature: the dynamic arguments
        flattened in C++, the handler found by their structure and static
        values, then by the leaves' types and shardings (:class:`SpmdFast`);
        ``_MISS`` for the general path otherwise."""
        try:
            dyn, skey = self.fast_key(args, kwargs) if self.has_statics else ((args, kwargs), None)
            leaves, structure = _cpp_flatten(dyn)
            cands = self.spmd_fast.get((structure, skey))
        except Exception:  # unhashable statics, unsortable keys: the general path says why
            return _MISS
        if cands is None:
            return _MISS
        x64 = config.x64_enabled
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
            if len(cands) < 8 and not any(h.same_signature(handler) for h in cands):
                self.spmd_fast[key] = (*cands, handler)

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


def _sizes_from_vmap(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether an argument is an integer scalar of a trace that can use such a
    value as a size (``vmap`` over sizes: see ``Trace.to_symbolic_dim``)."""
    for x in tree_flatten((args, kwargs))[0]:
        if isinstance(x, Tracer) and type(x._trace).to_symbolic_dim is not Trace.to_symbolic_dim:
            aval = x.aval
            if aval.shape == () and aval.dtype.kind in "iu":
                return True
    return False


def _positions(nums: tuple[int, ...], nargs: int) -> set[int]:
    """Argument positions among ``nargs`` named by ``nums`` (negative ones count from the end)."""
    return {n + nargs if n < 0 else n for n in nums if -nargs <= n < nargs}


@functools.lru_cache(maxsize=64)
def _flat_tree(n: int) -> PyTreeDef:
    return tree_structure((tuple(range(n)), {}))


@functools.lru_cache(maxsize=64)
def _tuple_tree(n: int) -> PyTreeDef:
    return tree_structure(tuple(range(n)))


_LEAF: Final = tree_structure(0)

_cpp_flatten = fast_tree.flatten
_buffer_is_deleted = _jaxlib.buffer_is_deleted
_run = _jaxlib.run_executable
_consume = _jaxlib.consume_results
_new = object.__new__


def _mixed_leaves(leaves: list[Any]) -> tuple[list[ShapedArray], list[Any]] | None:
    """The types and buffers of leaves that are live uncommitted Arrays or host
    scalars with a device scalar in the eager table; ``None`` otherwise."""
    table = _host_scalars[config.x64_enabled]
    avals: list[ShapedArray] = []
    bufs: list[Any] = []
    for a in leaves:
        if a.__class__ is Array:
            buf = a._buf
            if a._committed or buf is None or _buffer_is_deleted(buf):
                return None
            avals.append(a.aval)
            bufs.append(buf)
        elif a.__class__ in _HOST_SCALAR_TYPES:
            const = table.get((a.__class__, a))
            if const is None:
                return None
            avals.append(const[0])
            bufs.append(const[1])
        else:
            return None
    return avals, bufs


def _short(x: Any) -> str:
    r = repr(x)
    return r if len(r) <= 60 else r[:57] + "..."


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


def jit_state(f: Any) -> _JitState | None:
    """The state behind a jitted function (``None`` if ``f`` is not one)."""
    s = getattr(f, "__plait_jit__", None)
    return s if isinstance(s, _JitState) else None
