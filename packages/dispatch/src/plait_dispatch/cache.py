"""Compiled computations, where they run, and the caches that keep them.

A :class:`CompiledCall` is one closed jaxpr lowered to StableHLO and compiled
for one device: it knows which operands the executable takes (unused ones are
pruned unless ``keep_unused``), which are donated, and how to turn the raw
outputs back into :class:`~plait_dispatch.array.Array`\\ s.  :func:`compiled_call`
makes them once per (jaxpr, operand types, device, :class:`JitInfo`) and keeps
them; ``jit`` and the eager backend both go through it, so a ``closed_call``
evaluated eagerly and the jitted call it came from share one executable.

:func:`computation_device` decides where a computation runs from its
operands' placement (see :mod:`plait_dispatch.placement`), and
:func:`explain_cache_miss` says why a jitted function traced again when
``plait_core.config.explain_cache_misses`` (``$PLAIT_EXPLAIN_CACHE_MISSES``)
is on.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from plait_core import ClosedJaxpr, ShapedArray, config, dce_closed_jaxpr, dtypes, to_numpy
from plait_core.sharding import NamedSharding, PartitionSpec, TiledSharding
from plait_core.tree_util import PyTreeDef
from plait_dispatch import _jaxlib, persistent_cache
from plait_dispatch.array import Array

__all__ = [
    "CacheStats",
    "CompiledCall",
    "DEFAULT_JIT_INFO",
    "JitInfo",
    "Signature",
    "compiled_call",
    "computation_device",
    "explain_cache_miss",
    "lower_for_call",
    "stats",
]

logger = logging.getLogger("plait_dispatch.cache")


# ---------------------------------------------------------------------------
# What a call carries for dispatch.


class JitInfo:
    """The ``jit_info`` param of the ``closed_call`` that ``jit`` binds.

    ``device``: where the call must run (``None``: where its committed
    operands are).  ``donated``: one flag per operand of the call.
    ``keep_unused``: whether unused operands stay parameters of the compiled
    computation.  ``names``: per operand, the argument it came from (for
    messages; ``None`` for captured constants).  ``shardings``: ``None``, or
    the layouts ``jit(in_shardings=, out_shardings=)`` asks for, one per
    operand and one per output (``None`` entries: unconstrained); such a call
    runs as an SPMD computation (:mod:`plait_dispatch.spmd`).  Hashable and
    compared by value so equal calls share executables.
    """

    __slots__ = ("_hash", "device", "donated", "keep_unused", "names", "shardings")

    def __init__(
        self,
        device: _jaxlib.Device | None,
        donated: tuple[bool, ...],
        keep_unused: bool,
        names: tuple[str | None, ...] = (),
        shardings: tuple[tuple[Any, ...], tuple[Any, ...]] | None = None,
    ) -> None:
        self.device = device
        self.donated = donated
        self.keep_unused = keep_unused
        self.names = names
        self.shardings = shardings
        self._hash = hash((device, donated, keep_unused, names, shardings))

    def remap_operands(self, origin: tuple[int | None, ...]) -> JitInfo:
        """The info of a call built from part of this call's operands:
        ``origin[k]`` is the old index of new operand ``k`` (``None`` for a new
        operand, which is never donated)."""
        donated = tuple(o is not None and o < len(self.donated) and self.donated[o] for o in origin)
        names = tuple(self.name_of(o) if o is not None else None for o in origin)
        shardings = None
        if self.shardings is not None:
            ins = self.shardings[0]
            shardings = (tuple(ins[o] if o is not None and o < len(ins) else None for o in origin), ())
        return JitInfo(self.device, donated, self.keep_unused, names, shardings)

    def batch_operands(self, batched: tuple[bool, ...]) -> JitInfo:
        """The info of this call under ``vmap``: an operand flagged in
        ``batched`` carries the batch in front, unsplit (as JAX's ``vmap`` of
        a ``jit`` with ``in_shardings``), so its requested sharding gets a
        leading dimension that is not split."""
        if self.shardings is None or not any(batched):
            return self
        ins = tuple(
            _with_leading_dim(s) if s is not None and k < len(batched) and batched[k] else s
            for k, s in enumerate(self.shardings[0])
        )
        return JitInfo(self.device, self.donated, self.keep_unused, self.names, (ins, ()))

    def name_of(self, k: int) -> str | None:
        """The argument name of operand ``k``, if known."""
        return self.names[k] if k < len(self.names) else None

    def is_donated(self, k: int) -> bool:
        """Whether operand ``k`` is donated."""
        return k < len(self.donated) and self.donated[k]

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is JitInfo
            and self.device is other.device
            and self.donated == other.donated
            and self.keep_unused == other.keep_unused
            and self.names == other.names
            and self.shardings == other.shardings
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        dev = "None" if self.device is None else _jaxlib.device_description(self.device)
        donated = tuple(i for i, d in enumerate(self.donated) if d)
        return f"JitInfo(device={dev}, donated={donated}, keep_unused={self.keep_unused})"


def _with_leading_dim(sharding: Any) -> Any:
    """``sharding`` for arrays with one more, unsplit, leading dimension."""
    if isinstance(sharding, NamedSharding):
        return sharding.with_spec(PartitionSpec(None, *sharding.spec))
    if isinstance(sharding, TiledSharding):
        return TiledSharding(sharding._device_assignment, sharding._assignment[None])
    return sharding  # a SingleDeviceSharding lays out any rank


DEFAULT_JIT_INFO = JitInfo(None, (), True)
"""The info of a call with nothing special (``named_call``, eager ops)."""


# ---------------------------------------------------------------------------
# Statistics (for tests and for curiosity; the hot path does not count).


@dataclass
class CacheStats:
    """Counters of tracing and compilation: ``traces`` (tracing-cache
    misses of jitted functions), ``trace_hits`` (slow-path hits; fast-path
    calls are not counted), ``compiles`` and ``compile_hits`` (of the
    in-memory cache of compiled calls).  Of the ``compiles``:
    ``xla_compiles`` ran XLA's compiler, ``persistent_cache_hits`` loaded an
    executable from the persistent compilation cache instead
    (:mod:`plait_dispatch.persistent_cache`), ``persistent_cache_writes``
    stored one there.  Seconds spent: ``trace_seconds`` (tracing jitted
    functions), ``lower_seconds`` (jaxpr to StableHLO), ``xla_compile_seconds``."""

    traces: int = 0
    trace_hits: int = 0
    compiles: int = 0
    compile_hits: int = 0
    xla_compiles: int = 0
    persistent_cache_hits: int = 0
    persistent_cache_writes: int = 0
    trace_seconds: float = 0.0
    lower_seconds: float = 0.0
    xla_compile_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    _FIELDS = (
        "traces", "trace_hits", "compiles", "compile_hits", "xla_compiles", "persistent_cache_hits",
        "persistent_cache_writes", "trace_seconds", "lower_seconds", "xla_compile_seconds",
    )

    def bump(self, name: str, amount: float = 1) -> None:
        """Add ``amount`` to the counter ``name``."""
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    def snapshot(self) -> dict[str, float]:
        """The counters as a dict."""
        return {k: getattr(self, k) for k in self._FIELDS}


stats = CacheStats()


# ---------------------------------------------------------------------------
# Where a computation runs.


def _describe(names: Sequence[str | None] | None, k: int) -> str:
    name = names[k] if names is not None and k < len(names) else None
    return f"argument {name!r}" if name else f"operand {k}"


spmd_primitives: set[Any] = set()
"""Primitives that always run as SPMD computations eagerly (they name a mesh:
``shard_map``, ``sharding_constraint``); filled by their lowering rules."""


def computation_device(
    operands: Sequence[Any],
    fixed: _jaxlib.Device | None,
    what: str,
    names: Sequence[str | None] | None = None,
) -> tuple[_jaxlib.Device, bool]:
    """Where a computation on ``operands`` runs, and whether its results are committed.

    A committed Array pins the computation to its device; uncommitted Arrays
    and host values follow.  ``fixed`` (``jit(device=...)``) pins it too.
    Committed operands on different devices (or on another device than
    ``fixed``) are a ``ValueError`` naming both.  With nothing committed the
    computation runs on the default device and its results stay uncommitted.
    """
    device = fixed
    first = -1
    for k, x in enumerate(operands):
        if type(x) is Array and x._committed:
            d = x._device
            if d is None:  # jit and eager calls send these to the SPMD path first; ahead of time does not
                raise NotImplementedError(
                    f"{what}: {_describe(names, k)} lives on several devices ({x._sharding!r}); ahead-of-time "
                    "lowering and compiling (.lower().compile()) of SPMD programs is not supported: call the "
                    "jitted function itself, which compiles for its arguments' layouts"
                )
            if device is None:
                device, first = d, k
            elif d is not device:
                here = f"{_describe(names, k)} is committed to {_jaxlib.device_description(d)}"
                if first < 0:
                    there = f"the computation is placed on {_jaxlib.device_description(device)} (device=)"
                else:
                    there = f"{_describe(names, first)} is committed to {_jaxlib.device_description(device)}"
                raise ValueError(
                    f"{what}: arrays committed to different devices cannot be used in one computation: "
                    f"{there} and {here}. Move them to one device with device_put(x, device)"
                )
    if device is None:
        return _jaxlib.default_device(), False
    return device, True


def operand_buffer(
    x: Any, aval: ShapedArray, device: _jaxlib.Device, use: str, shareable: bool = False
) -> _jaxlib.Buffer:
    """The device buffer holding operand ``x`` on ``device``: an Array's own
    buffer (copied when it lives elsewhere), or host data transferred once.
    ``shareable``: the computation will not donate it, so a host scalar may
    come from a small cache of device scalars (``x + 1.0`` in a loop
    transfers ``1.0`` once)."""
    if type(x) is Array:
        buf = x._live_buffer(use)
        return buf if x._device is device else _jaxlib.copy_buffer(buf, device)
    value = host_value(x, aval)
    if shareable and value.ndim == 0:
        return shared_scalar_buffer(value, aval, device)
    return _jaxlib.device_put(value, aval, device, False)


def host_value(x: Any, aval: ShapedArray) -> np.ndarray:
    """``x`` (NumPy array, scalar, or a value core knows) as NumPy data of ``aval``'s dtype."""
    t = type(x)
    if t is np.ndarray and x.dtype == aval.dtype:
        return x  # type: ignore[no-any-return]
    if t is float or t is int or t is bool or t is complex:
        return np.asarray(x, aval.dtype)
    return to_numpy(x, aval.dtype)


_scalars: OrderedDict[tuple[Any, ...], _jaxlib.Buffer] = OrderedDict()
_scalars_lock = threading.Lock()
_MAX_SCALARS = 1024


def shared_scalar_buffer(value: np.ndarray, aval: ShapedArray, device: _jaxlib.Device) -> _jaxlib.Buffer:
    """A device scalar holding ``value`` (NumPy data of ``aval``'s dtype), shared
    by computations that only read it (never handed out inside an Array, so
    nothing can delete it)."""
    key = (device, value.dtype, value.tobytes())
    buf = _scalars.get(key)
    if buf is None:
        buf = _jaxlib.device_put(value, aval.strip_weak_type(), device, False)
        with _scalars_lock:
            _scalars[key] = buf
            if len(_scalars) > _MAX_SCALARS:
                _scalars.popitem(last=False)
    return buf


# ---------------------------------------------------------------------------
# Compiled calls.


def _lower(closed: ClosedJaxpr, name: str, donated: tuple[bool, ...], in_avals: Sequence[ShapedArray]) -> Any:
    from plait_dispatch.lowering import lower_jaxpr

    return lower_jaxpr(
        closed, name=name, donated_invars=donated, arg_avals=list(in_avals), platform=_jaxlib.PLATFORM
    )


class CompiledCall:
    """A closed jaxpr compiled for one device.

    ``kept`` lists the operands the executable takes (the others are unused
    and pruned); ``donated`` flags every operand; outputs of dtype ``float0``
    are not computed on the device but made as NumPy zeros.
    """

    __slots__ = (
        "all_kept",
        "any_donated",
        "const_bufs",
        "device",
        "donated",
        "effects",
        "executable",
        "float0_outs",
        "handlers",
        "in_avals",
        "info_names",
        "kept",
        "lowered",
        "name",
        "out_avals",
    )

    def __init__(
        self,
        name: str,
        executable: _jaxlib.Executable,
        device: _jaxlib.Device,
        in_avals: tuple[ShapedArray, ...],
        out_avals: tuple[ShapedArray, ...],
        kept: tuple[int, ...],
        donated: tuple[bool, ...],
        const_bufs: list[_jaxlib.Buffer],
        float0_outs: tuple[int, ...],
        lowered: Any,
        info_names: tuple[str | None, ...] = (),
    ) -> None:
        self.name = name
        self.info_names = info_names
        self.executable = executable
        self.device = device
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.kept = kept
        self.donated = donated
        self.const_bufs = const_bufs
        self.float0_outs = float0_outs
        self.lowered = lowered
        self.effects = bool(getattr(lowered, "host_callbacks", ()))  # its runs are waited for by effects_barrier
        self.all_kept = len(kept) == len(in_avals)
        self.any_donated = any(donated)
        f0 = set(float0_outs)
        self.handlers = [_jaxlib.result_handler(a, device) for i, a in enumerate(out_avals) if i not in f0]

    def execute(self, bufs: list[_jaxlib.Buffer]) -> list[_jaxlib.Buffer]:
        """Run on the buffers of the kept operands (live, on this device)."""
        if config.no_execution:
            raise no_execution_error(self.name)
        if self.const_bufs:
            bufs = self.const_bufs + bufs
        return _jaxlib.execute(self.executable, bufs, self.handlers, self.effects)

    def wrap(self, bufs: list[_jaxlib.Buffer], committed: bool) -> list[Any]:
        """The outputs as Arrays (and NumPy ``float0`` zeros)."""
        device = self.device
        if not self.float0_outs:
            return [Array(b, a, device, committed) for b, a in zip(bufs, self.out_avals)]
        it = iter(bufs)
        out: list[Any] = []
        for i, a in enumerate(self.out_avals):
            if i in self.float0_outs:
                out.append(np.zeros(a.shape, dtypes.float0))
            else:
                out.append(Array(next(it), a, device, committed))
        return out

    def call(self, operands: Sequence[Any], committed: bool, what: str) -> list[Any]:
        """Run on ``operands`` (Arrays or host values, one per operand of the
        jaxpr): transfers what is not on the device, checks liveness, marks
        donated Arrays deleted afterwards."""
        use = f"pass it to {what}"
        if not self.all_kept:
            for x in operands:
                if type(x) is Array:
                    x._live_buffer(use)
        device = self.device
        avals = self.in_avals
        donated = self.donated
        if self.any_donated:
            self.check_donated_once(operands, what)
        bufs = []
        sent: dict[int, _jaxlib.Buffer] = {}  # host values passed twice are transferred once
        for i in self.kept:
            x = operands[i]
            if type(x) is Array or donated[i]:
                bufs.append(operand_buffer(x, avals[i], device, use, False))
            else:
                buf = sent.get(id(x))
                if buf is None:
                    buf = sent[id(x)] = operand_buffer(x, avals[i], device, use, True)
                bufs.append(buf)
        try:
            outs = self.execute(bufs)
        except _jaxlib.XlaRuntimeError:
            for x in operands:  # a buffer deleted by another thread meanwhile
                if type(x) is Array:
                    x._live_buffer(use)
            raise
        if self.any_donated:
            self.mark_donated(operands)
        return self.wrap(outs, committed)

    def check_donated_once(self, operands: Sequence[Any], what: str) -> None:
        """A donated Array must not be passed anywhere else in the same call."""
        first: dict[int, int] = {}
        for k, x in enumerate(operands):
            if type(x) is not Array or x._buf is None:
                continue
            j = first.setdefault(id(x._buf), k)
            if j != k and (self.donated[j] or self.donated[k]):
                raise ValueError(
                    f"{what}: the same Array is passed as {_describe(self.names, j)} and as "
                    f"{_describe(self.names, k)}, and one of them is donated; a donated buffer is consumed by "
                    "the call, so it cannot also be read. Pass a copy (x.copy()) for one of them"
                )

    @property
    def names(self) -> tuple[str | None, ...]:
        return self.info_names

    def mark_donated(self, operands: Sequence[Any]) -> None:
        """Donated Arrays count as deleted after the call (XLA freed the ones it
        reused; the others are freed here)."""
        for x, d in zip(operands, self.donated):
            if d and type(x) is Array:
                x._donate()


class _CompileCache:
    """Compiled calls by (jaxpr, operand types, device, info); least recently
    used entries go when it is full.  Fills are serialised; hits take no lock."""

    def __init__(self, maxsize: int = 4096) -> None:
        self.entries: OrderedDict[Hashable, CompiledCall] = OrderedDict()
        self.maxsize = maxsize
        self.lock = threading.RLock()

    def get(
        self,
        closed: ClosedJaxpr,
        in_avals: tuple[ShapedArray, ...],
        device: _jaxlib.Device,
        info: JitInfo,
        name: str,
        lowered: tuple[Any, tuple[int, ...]] | None,
        compiler_options: _jaxlib.CompilerOptions = (),
    ) -> CompiledCall:
        key = (closed, in_avals, device, info, compiler_options)
        hit = self.entries.get(key)
        if hit is not None:
            stats.bump("compile_hits")
            return hit
        with self.lock:
            hit = self.entries.get(key)
            if hit is None:
                hit = _compile(closed, in_avals, device, info, name, lowered, compiler_options)
                self.entries[key] = hit
                if len(self.entries) > self.maxsize:
                    self.entries.popitem(last=False)
            return hit

    def clear(self) -> None:
        with self.lock:
            self.entries.clear()


_cache = _CompileCache()


def log_compile(name: str, in_avals: Sequence[ShapedArray], where: str, seconds: float) -> None:
    """Log one compilation of ``name`` for operands of ``in_avals`` (on this
    module's logger, ``plait_dispatch.cache``): at WARNING level while
    ``config.log_compiles`` is on (``plait.log_compiles()``), else at DEBUG level."""
    level = logging.WARNING if config.log_compiles else logging.DEBUG
    if logger.isEnabledFor(level):
        types = ", ".join(a.str_short() for a in in_avals)
        logger.log(level, "Compiled %s for (%s) %s in %.6f sec", name, types, where, seconds)


def log_trace(name: str, seconds: float) -> None:
    """Log one trace of the Python function of ``name`` (a jit cache miss)."""
    level = logging.WARNING if config.log_compiles else logging.DEBUG
    if logger.isEnabledFor(level):
        logger.log(level, "Finished tracing %s in %.6f sec", name, seconds)


def check_execution(name: str) -> None:
    """Raise :func:`no_execution_error` while ``config.no_execution`` is on."""
    if config.no_execution:
        raise no_execution_error(name)


def no_execution_error(name: str) -> RuntimeError:
    """The error of running ``name`` while ``config.no_execution`` is on."""
    return RuntimeError(
        f"plait tried to execute {name}, but no_execution is set "
        "(plait.no_execution(False) or config.update('jax_no_execution', False) allows it)"
    )


def compiled_call(
    closed: ClosedJaxpr,
    in_avals: tuple[ShapedArray, ...],
    device: _jaxlib.Device,
    info: JitInfo = DEFAULT_JIT_INFO,
    name: str = "main",
    lowered: tuple[Any, tuple[int, ...]] | None = None,
    compiler_options: _jaxlib.CompilerOptions = (),
) -> CompiledCall:
    """The compiled form of ``closed`` on operands of ``in_avals`` for
    ``device`` (made once per ``compiler_options``, then cached).  ``lowered``:
    the result of :func:`lower_for_call` when the caller has it already;
    ``compiler_options``: XLA option overrides (``Lowered.compile``'s)."""
    return _cache.get(closed, in_avals, device, info, name, lowered, compiler_options)


_clear_hooks: list[Callable[[], None]] = []


def register_clear_hook(hook: Callable[[], None]) -> None:
    """Have :func:`clear_caches` also call ``hook`` (the caches of compiled calls
    kept by modules above this one: the SPMD calls)."""
    _clear_hooks.append(hook)


def clear_caches() -> None:
    """Forget every compiled computation (so that XLA frees the executables no
    live jitted function still holds)."""
    _cache.clear()
    for hook in _clear_hooks:
        hook()


def lower_for_call(
    closed: ClosedJaxpr, in_avals: Sequence[ShapedArray], info: JitInfo, name: str
) -> tuple[Any, tuple[int, ...]]:
    """Lower ``closed`` to StableHLO as a call with ``info`` compiles it:
    unused operands pruned unless ``info.keep_unused``, donated operands
    marked.  Returns the lowered module and the kept operand indices."""
    n = len(in_avals)
    if info.keep_unused:
        body, kept = closed, tuple(range(n))
    else:
        body, used = dce_closed_jaxpr(closed, None, prune_inputs=True)
        kept = tuple(k for k, u in enumerate(used) if u)
    donated = tuple(info.is_donated(k) for k in kept)
    return _lower(body, name, donated, [in_avals[k] for k in kept]), kept


def _compile(
    closed: ClosedJaxpr,
    in_avals: tuple[ShapedArray, ...],
    device: _jaxlib.Device,
    info: JitInfo,
    name: str,
    lowered_kept: tuple[Any, tuple[int, ...]] | None,
    compiler_options: _jaxlib.CompilerOptions = (),
) -> CompiledCall:
    stats.bump("compiles")
    start = time.perf_counter()
    if lowered_kept is None:
        lowered, kept = lower_for_call(closed, in_avals, info, name)
        stats.bump("lower_seconds", time.perf_counter() - start)
    else:
        lowered, kept = lowered_kept
    executable, outcome, xla_seconds = persistent_cache.compile_stablehlo(
        lowered.text, device, lowered.host_callbacks, compiler_options
    )
    if outcome == "hit":
        stats.bump("persistent_cache_hits")
    else:
        stats.bump("xla_compiles")
        stats.bump("xla_compile_seconds", xla_seconds)
        if outcome == "written":
            stats.bump("persistent_cache_writes")
    log_compile(name, in_avals, f"on {_jaxlib.device_description(device)}", time.perf_counter() - start)
    donated = tuple(info.is_donated(k) for k in range(len(in_avals)))
    _warn_unusable_donations(lowered, info, donated, kept, name, in_avals)
    const_bufs = [
        operand_buffer(c, a, device, f"use as a constant of {name}")
        for c, a in zip(lowered.const_args, lowered.const_avals)
    ]
    float0_ins = set(lowered.float0_inputs)  # carry no data: not passed
    passed = tuple(k for j, k in enumerate(kept) if j not in float0_ins)
    return CompiledCall(
        name,
        executable,
        device,
        in_avals,
        tuple(closed.out_avals),
        passed,
        donated,
        const_bufs,
        tuple(lowered.float0_outputs),
        lowered,
        info.names,
    )


def _warn_unusable_donations(
    lowered: Any, info: JitInfo, donated: tuple[bool, ...], kept: tuple[int, ...], name: str,
    in_avals: Sequence[ShapedArray],
) -> None:  # fmt: skip
    aliased = _aliases_by_kept_operand(lowered, len(kept))
    position = {k: j for j, k in enumerate(kept)}
    unusable: list[str] = []
    types: list[str] = []
    for k, d in enumerate(donated):
        if not d:
            continue
        j = position.get(k)
        if j is None or aliased[j] is None:
            who = info.name_of(k) or f"operand {k}"
            why = "it is not used" if j is None else "no output has its shape and dtype"
            unusable.append(f"{who} ({why})")
            if j is not None:
                types.append(in_avals[k].str_short())
    if unusable:
        # JAX's words first ("Some donated buffers were not usable: f32[10]."), which libraries match.
        warnings.warn(
            f"Some donated buffers were not usable: {', '.join(types) or 'none used'}. {name}: the donated "
            f"buffers of {', '.join(unusable)} could not be reused by the computation. They are deleted all "
            "the same; donate only arguments whose memory an output of the same shape and dtype can take over",
            UserWarning,
            stacklevel=_user_stacklevel(),
        )


def _user_stacklevel() -> int:
    """The ``stacklevel`` that attributes a warning to the first frame outside
    plait's own packages (the user's call), however deep the call path is."""
    level = 1
    frame = sys._getframe(1)
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("plait"):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def _aliases_by_kept_operand(lowered: Any, n: int) -> list[int | None]:
    aliased: list[int | None] = list(lowered.aliased_outputs)
    return aliased if len(aliased) == n else [None] * n


# ---------------------------------------------------------------------------
# Why a jitted function traced again.


class Signature(NamedTuple):
    """What a tracing cache keys on, kept readable for explanations."""

    in_tree: PyTreeDef
    avals: tuple[ShapedArray, ...]
    statics: tuple[tuple[str, Any], ...]
    context: Hashable


def _aval_changes(name: str, old: ShapedArray, new: ShapedArray) -> list[str]:
    out = []
    if old.shape != new.shape:
        out.append(f"{name}: shape changed from {old.shape} to {new.shape}")
    if old.dtype != new.dtype:
        out.append(f"{name}: dtype changed from {old.dtype.name} to {new.dtype.name}")
    if old.weak_type != new.weak_type:
        now = "weakly typed (a Python scalar)" if new.weak_type else "strongly typed"
        out.append(f"{name}: weak type changed ({old.str_short()} is now {now})")
    return out


def _differences(old: Signature, new: Signature, leaf_names: Sequence[str]) -> list[str]:
    out: list[str] = []
    if old.context != new.context:
        out.append(f"the context changed (x64 flag and bound axis names: {old.context} -> {new.context})")
    old_statics = dict(old.statics)
    for name, value in new.statics:
        if name not in old_statics:
            out.append(f"static argument {name} is new (value {value!r})")
        elif not _same_static(old_statics[name], value):
            out.append(f"static argument {name} changed from {old_statics[name]!r} to {value!r}")
    for name in old_statics:
        if name not in dict(new.statics):
            out.append(f"static argument {name} is no longer passed")
    if old.in_tree != new.in_tree:
        out.append(f"the argument structure changed from {old.in_tree} to {new.in_tree}")
        return out
    for k, (a, b) in enumerate(zip(old.avals, new.avals)):
        if a != b:
            out.extend(_aval_changes(leaf_names[k] if k < len(leaf_names) else f"leaf {k}", a, b))
    return out


def _same_static(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def explain_cache_miss(
    fun_desc: str, new: Signature, seen: Sequence[Signature], leaf_names: Sequence[str]
) -> str:
    """The explanation logged (at WARNING level, logger ``plait_dispatch.cache``)
    when ``fun_desc`` traces for the signature ``new``: what differs from the
    closest signature traced before."""
    if not seen:
        msg = f"TRACING CACHE MISS: {fun_desc}: first call, nothing was traced for it before"
    else:
        best = min((_differences(old, new, leaf_names) for old in seen), key=len)
        if not best:
            best = [
                "an argument or static value is equal but was not found in the cache (unhashable equality?)"
            ]
        msg = f"TRACING CACHE MISS: {fun_desc} traced again because " + "; ".join(best)
    logger.warning(msg)
    return msg
