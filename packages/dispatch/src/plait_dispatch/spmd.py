"""SPMD computations: one program over several devices, partitioned by XLA.

A computation takes this path (instead of the single-device one of
:mod:`plait_dispatch.cache`) when an operand is a multi-device Array, when
``jit`` was given ``in_shardings``/``out_shardings``, or when its program
names a mesh (``shard_map``, ``with_sharding_constraint``).  It is lowered
with an ``mhlo.sharding`` per input and output and compiled for as many
partitions as its devices; XLA's SPMD partitioner propagates the input
layouts through the program and inserts the collectives it needs.  Outputs
without a requested sharding get the layout XLA chose, described as a
:class:`~plait_core.sharding.NamedSharding` of the program's mesh when one
describes it.

All shardings of one computation must use one device list (one mesh);
single-device and host operands are replicated onto it.  An operand laid
out otherwise than its computation wants is re-laid out through the host.
The single-device paths never come here: a computation of single-device
Arrays costs nothing more than before.
"""

from __future__ import annotations

import itertools
import operator
import threading
import time
from collections.abc import Hashable, Sequence
from typing import Any, Final

import numpy as np

from plait_core import ClosedJaxpr, ShapedArray, config, dtypes, get_aval
from plait_core.jaxpr import Jaxpr
from plait_core.sharding import (
    Mesh,
    NamedSharding,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    TiledSharding,
    spec_of,
)
from plait_core.tree_util import tree_unflatten
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.cache import JitInfo, check_execution, host_value, log_compile, register_clear_hook, stats
from plait_dispatch.lowering import SpmdLayout, lower_jaxpr
from plait_dispatch.sharded import from_host, jaxlib_sharding

__all__ = ["MISS", "SpmdCall", "SpmdFast", "mesh_of_jaxpr", "run_spmd", "spmd_call", "spmd_fast_handler", "wants_spmd"]

_MESH_PARAMS = ("mesh", "sharding")


def _meshes_in(jaxpr: Jaxpr, out: list[Any]) -> None:
    for eqn in jaxpr.eqns:
        for name in _MESH_PARAMS:
            v = eqn.params.get(name)
            if isinstance(v, (Mesh, Sharding)):
                out.append(v)
        for v in eqn.params.values():
            if isinstance(v, ClosedJaxpr):
                _meshes_in(v.jaxpr, out)
            elif isinstance(v, Jaxpr):
                _meshes_in(v, out)
            elif isinstance(v, tuple):
                for w in v:
                    if isinstance(w, ClosedJaxpr):
                        _meshes_in(w.jaxpr, out)


_mesh_cache: dict[int, tuple[ClosedJaxpr, tuple[Any, ...]]] = {}
_mesh_lock = threading.Lock()


def mesh_of_jaxpr(closed: ClosedJaxpr) -> tuple[Any, ...]:
    """The meshes and shardings a program names (``shard_map``,
    ``with_sharding_constraint``), also inside called jaxprs; cached per program."""
    hit = _mesh_cache.get(id(closed))
    if hit is not None and hit[0] is closed:
        return hit[1]
    found: list[Any] = []
    _meshes_in(closed.jaxpr, found)
    with _mesh_lock:
        if len(_mesh_cache) > 4096:
            _mesh_cache.clear()
        _mesh_cache[id(closed)] = (closed, tuple(found))
    return tuple(found)


def wants_spmd(closed: ClosedJaxpr, operands: Sequence[Any], info: JitInfo | None) -> bool:
    """Whether a computation of ``closed`` on ``operands`` takes the SPMD path."""
    if info is not None and info.shardings is not None:
        return True
    for x in operands:
        if type(x) is Array and x._device is None:
            return True
    return bool(mesh_of_jaxpr(closed))


def _devices_of(thing: Any) -> tuple[Any, ...]:
    if isinstance(thing, Mesh):
        return thing._flat_devices
    return tuple(thing._device_assignment)


def _choose_devices(candidates: Sequence[tuple[str, Any]], what: str) -> tuple[tuple[Any, ...], Mesh | None]:
    """The one device list of a computation (and a mesh describing it, if any)."""
    devices: tuple[Any, ...] | None = None
    mesh: Mesh | None = None
    first = ""
    for label, thing in candidates:
        devs = _devices_of(thing)
        m = thing if isinstance(thing, Mesh) else getattr(thing, "mesh", None)
        if devices is None:
            devices, first = devs, label
        elif tuple(map(id, devs)) != tuple(map(id, devices)):
            if len(devs) == 1 and not isinstance(thing, (Mesh, NamedSharding)):
                continue
            raise ValueError(
                f"{what}: all shardings of one computation must use the same devices in the same order; "
                f"{first} uses {_describe(devices)} and {label} uses {_describe(devs)}. "
                "Put the arguments on one mesh with device_put(x, NamedSharding(mesh, spec))"
            )
        if mesh is None and isinstance(m, Mesh) and m._flat_devices == devices:
            mesh = m
    assert devices is not None
    return devices, mesh


def _describe(devs: Sequence[Any]) -> str:
    ids = [d.id for d in devs]
    return f"{len(ids)} device(s) {ids}" if len(ids) <= 8 else f"{len(ids)} devices"


def _canonical(assignment: np.ndarray) -> tuple[Any, ...]:
    a = np.sort(assignment, axis=-1)
    return (a.shape, tuple(a.flat))


def describe_layout(devices: tuple[Any, ...], assignment: np.ndarray, mesh: Mesh | None) -> Sharding:
    """A sharding for a layout XLA chose: a NamedSharding of ``mesh`` when one
    lays the data out the same way, else a TiledSharding."""
    ndim = assignment.ndim - 1
    if mesh is not None and ndim <= 6 and len(mesh.axis_names) <= 4:
        want = _canonical(assignment)
        names = mesh.axis_names
        for placement in itertools.product(range(-1, ndim), repeat=len(names)):
            for order in ((lambda ns: ns), (lambda ns: tuple(reversed(ns)))):
                dims: dict[int, tuple[Hashable, ...]] = {}
                for n, d in zip(names, placement):
                    if d >= 0:
                        dims[d] = dims.get(d, ()) + (n,)
                dims = {d: order(ns) for d, ns in dims.items()}
                candidate = NamedSharding(mesh, spec_of(dims, ndim))
                if _canonical(candidate._tiling(ndim).assignment) == want:
                    return candidate
    return TiledSharding(devices, assignment)


class SpmdCall:
    """A closed jaxpr compiled for several devices (see the module docs)."""

    def __init__(
        self,
        closed: ClosedJaxpr,
        in_avals: tuple[ShapedArray, ...],
        devices: tuple[Any, ...],
        mesh: Mesh | None,
        in_shardings: tuple[Sharding, ...],
        out_shardings: tuple[Sharding | None, ...],
        info: JitInfo,
        name: str,
    ) -> None:
        self.devices = devices
        self.in_avals = in_avals
        self.info = info
        in_texts = tuple(
            _jaxlib.hlo_sharding_text(s._tiling(len(a.shape)).assignment) for s, a in zip(in_shardings, in_avals)
        )
        out_texts = tuple(
            None if s is None else _jaxlib.hlo_sharding_text(s._tiling(len(a.shape)).assignment)
            for s, a in zip(out_shardings, closed.out_avals)
        )
        layout = SpmdLayout(devices, in_texts, out_texts)
        donated = tuple(info.is_donated(k) for k in range(len(in_avals)))
        module = lower_jaxpr(
            closed, name=name, donated_invars=donated, arg_avals=list(in_avals), platform=_jaxlib.PLATFORM, spmd=layout
        )
        propagate = [t is None for j, t in enumerate(out_texts) if j not in module.float0_outputs]
        start = time.perf_counter()
        try:
            executable = _jaxlib.compile_spmd(module.text, devices, propagate, module.host_callbacks)
        except _jaxlib.XlaRuntimeError as e:
            # A donated input aliased to an output of its global shape whose
            # per-device pieces differ (another layout) cannot share memory:
            # compile without aliases; the donated inputs are deleted all the same.
            if not any(donated) or "alias" not in str(e):
                raise
            module = lower_jaxpr(closed, name=name, arg_avals=list(in_avals), platform=_jaxlib.PLATFORM, spmd=layout)
            executable = _jaxlib.compile_spmd(module.text, devices, propagate, module.host_callbacks)
        self.module = module
        self.executable = executable
        self.effects = bool(module.host_callbacks)  # runs are waited for by effects_barrier
        stats.bump("compiles")
        log_compile(name, in_avals, f"on {len(devices)} devices", time.perf_counter() - start)
        self.in_shardings = in_shardings
        self.float0_outs = set(module.float0_outputs)
        n_results = len(module.out_avals) - len(module.float0_outputs)
        chosen = iter(_jaxlib.output_hlo_shardings(self.executable, n_results))
        self.out_shardings: list[Sharding | None] = []
        self.handlers = []
        # Outputs XLA placed on one device (a host callback's results, run
        # once): position in ``devices`` by output index.
        self.on_one_device: dict[int, int] = {}
        for j, (aval, want) in enumerate(zip(module.out_avals, out_shardings)):
            if j in self.float0_outs:
                self.out_shardings.append(None)
                continue
            hlo = next(chosen)
            k = _jaxlib.maximal_device(hlo) if want is None and len(devices) > 1 else None
            if k is not None:
                self.on_one_device[j] = k
                self.out_shardings.append(SingleDeviceSharding(devices[k]))
                self.handlers.append(_jaxlib.multi_device_handler(aval, _jaxlib.hlo_sharding_of(devices, hlo)))
                continue
            if want is None:
                want = describe_layout(devices, _jaxlib.tiling_of(hlo, len(aval.shape), len(devices)), mesh)
            self.out_shardings.append(want)
            self.handlers.append(_jaxlib.multi_device_handler(aval, jaxlib_sharding(want, len(aval.shape))))
        self.const_bufs = [
            from_host(np.asarray(c), a, _replicated(devices))._buf
            for c, a in zip(module.const_args, module.const_avals)
        ]

    def call(self, operands: Sequence[Any], what: str) -> list[Any]:
        """Run on ``operands`` (Arrays anywhere, or host values)."""
        check_execution(what)
        use = f"pass it to {what}"
        if any(self.info.donated):
            self._check_donated_once(operands, what)
        bufs = list(self.const_bufs)
        skip = set(self.module.float0_inputs)
        for i in range(len(operands)):
            if i not in skip:
                bufs.append(self._operand(operands[i], i, use))
        outs = _jaxlib.execute(self.executable, bufs, self.handlers, self.effects)
        for x, d in zip(operands, self.info.donated):
            if d and type(x) is Array:
                x._donate()
        it = iter(outs)
        result: list[Any] = []
        for j, aval in enumerate(self.module.out_avals):
            if j in self.float0_outs:
                result.append(np.zeros(aval.shape, dtypes.float0))
            elif j in self.on_one_device:
                k = self.on_one_device[j]
                result.append(Array(_jaxlib.shards_of(next(it))[k], aval, self.devices[k], True))
            else:
                sharding = self.out_shardings[j]
                assert sharding is not None
                result.append(Array._multi(next(it), aval, sharding))
        return result

    def _check_donated_once(self, operands: Sequence[Any], what: str) -> None:
        """A donated Array must not be passed anywhere else in the same call
        (XLA would be handed one buffer to consume and to read)."""
        first: dict[int, int] = {}
        for k, x in enumerate(operands):
            if type(x) is not Array or x._buf is None:
                continue
            j = first.setdefault(id(x._buf), k)
            if j != k and (self.info.is_donated(j) or self.info.is_donated(k)):
                raise ValueError(
                    f"{what}: the same Array is passed as {_label(self.info, j)} and as {_label(self.info, k)}, "
                    "and one of them is donated; a donated buffer is consumed by the call, so it cannot also "
                    "be read. Pass a copy (x.copy()) for one of them"
                )

    def _operand(self, x: Any, i: int, use: str) -> Any:
        want = self.in_shardings[i]
        aval = self.in_avals[i]
        if type(x) is Array:
            if x._device is None and self._lays_out_as(x._sharding, want, x.ndim):
                return x._live_buffer(use)
            value = x._value(use)
        else:
            value = host_value(x, aval)
        return from_host(np.asarray(value), aval, want)._buf


    def _lays_out_as(self, have: Sharding, want: Sharding, ndim: int) -> bool:
        """Whether ``have`` puts the same pieces on the same devices as ``want``."""
        if have is want or have == want:
            return True
        return tuple(map(id, have._device_assignment)) == tuple(map(id, self.devices)) and _canonical(
            have._tiling(ndim).assignment
        ) == _canonical(want._tiling(ndim).assignment)


def _replicated(devices: tuple[Any, ...]) -> Sharding:
    return TiledSharding(devices, np.arange(len(devices), dtype=np.int64).reshape(1, len(devices)))


class SpmdFast:
    """The fast handler of one sharded ``jit`` signature (see
    :func:`spmd_fast_handler`): called with the argument leaves; each must be
    a live multi-device Array of the signature's type and layout (the same
    sharding object, or an equal one), and its buffer goes to the executable
    as it is.  Returns ``MISS`` for anything else, or when the run fails, for
    the general path to handle or report."""

    __slots__ = (
        "avals",
        "const_bufs",
        "donated",
        "executable",
        "float0_outs",
        "handlers",
        "out_avals",
        "out_shardings",
        "out_structure",
        "out_tree",
        "passed",
        "shardings",
        "x64",
    )

    def __init__(
        self, call: SpmdCall, leaves: Sequence[Array], const_bufs: list[Any], out_tree: Any, x64: bool
    ) -> None:
        nc = len(call.in_avals) - len(leaves)
        self.avals = [x.aval for x in leaves]
        self.shardings = [x._sharding for x in leaves]
        skip = set(call.module.float0_inputs)
        self.const_bufs = list(call.const_bufs) + const_bufs
        passed = tuple(k - nc for k in range(nc, len(call.in_avals)) if k not in skip)
        self.passed = None if passed == tuple(range(len(leaves))) else passed
        self.donated = tuple(k - nc for k, d in enumerate(call.info.donated) if d and k >= nc)
        self.executable = call.executable
        self.handlers = call.handlers
        self.float0_outs = bool(call.float0_outs)
        self.out_avals = [a for j, a in enumerate(call.module.out_avals) if j not in call.float0_outs]
        self.out_shardings: list[Any] = [s for j, s in enumerate(call.out_shardings) if j not in call.float0_outs]
        self.out_tree = out_tree
        self.out_structure: Any = None  # the C++ output structure, when known (faster to rebuild)
        self.x64 = x64
        if self.float0_outs:
            self.out_avals = list(call.module.out_avals)
            self.out_shardings = list(call.out_shardings)

    def lookup_key(self) -> tuple[Any, ...]:
        """``(leaf types, leaf layouts, x64 flag)``: what a call's leaves are looked up by
        among many signatures of one structure (``TypeError`` if a layout is unhashable)."""
        key = (tuple(self.avals), tuple(self.shardings), self.x64)
        hash(key)
        return key

    def same_signature(self, other: SpmdFast) -> bool:
        """Whether ``other`` handles the same leaves (types, layouts, x64 flag)."""
        return self.x64 is other.x64 and self.avals == other.avals and self.shardings == other.shardings

    def __call__(self, leaves: list[Any]) -> Any:
        try:
            # Each leaf a live multi-device Array: a few passes in C.  A
            # single-device Array has no ``_sharding`` (AttributeError), a
            # host value no ``aval``; a dead buffer is None (TypeError).
            if list(map(_get_sharding, leaves)) != self.shardings or list(map(_get_aval, leaves)) != self.avals:
                return MISS
            bufs = list(map(_get_buf, leaves))
            if any(map(_buffer_is_deleted, bufs)):
                return MISS
        except (AttributeError, TypeError):
            return MISS
        donated = self.donated
        if donated and len(set(map(id, bufs))) != len(bufs):
            return MISS  # one buffer passed twice with a donation: the general path says why not
        if self.passed is not None:
            bufs = [bufs[k] for k in self.passed]
        try:
            outs = _consume(_run(self.executable, self.const_bufs + bufs), self.handlers)
        except _jaxlib.XlaRuntimeError:
            return MISS
        for k in donated:
            leaves[k]._donate()
        if self.float0_outs:
            it = iter(outs)
            res: list[Any] = [
                np.zeros(a.shape, dtypes.float0) if s is None else Array._multi(next(it), a, s)
                for a, s in zip(self.out_avals, self.out_shardings)
            ]
        else:
            res = list(map(_multi, outs, self.out_avals, self.out_shardings))
        if self.out_structure is not None:
            return self.out_structure.unflatten(res)
        return tree_unflatten(self.out_tree, res)


MISS: Final = object()
"""What a fast handler returns when the general path must take the call."""

_get_sharding = operator.attrgetter("_sharding")
_get_aval = operator.attrgetter("aval")
_get_buf = operator.attrgetter("_buf")
_buffer_is_deleted = _jaxlib.buffer_is_deleted
_run = _jaxlib.run_executable
_consume = _jaxlib.consume_results
_multi = Array._multi


def spmd_fast_handler(call: SpmdCall, operands: Sequence[Any], n_consts: int, out_tree: Any) -> SpmdFast | None:
    """A fast handler for later calls like this one (``operands``: the
    captured constants, then the argument leaves), or ``None`` where the
    general path must stay: a leaf that is not a multi-device Array laid out
    as the call wants it (it is placed anew on every call), an unhashable
    sharding.  The constants are placed once, here."""
    if call.effects or call.on_one_device:
        return None  # host callbacks: each run's token is kept for effects_barrier, on the general path
    leaves = operands[n_consts:]
    for k, x in enumerate(leaves):
        want = call.in_shardings[n_consts + k]
        if type(x) is not Array or x._device is not None or not call._lays_out_as(x._sharding, want, x.ndim):
            return None
    try:
        hash(tuple(x._sharding for x in leaves))
        skip = set(call.module.float0_inputs)
        const_bufs = [
            call._operand(operands[k], k, "use it") for k in range(n_consts) if k not in skip
        ]
    except Exception:
        return None
    return SpmdFast(call, leaves, const_bufs, out_tree, config.x64_enabled)


_calls: dict[Hashable, SpmdCall] = {}
_calls_lock = threading.RLock()


_known: dict[Hashable, SpmdCall] = {}
"""Calls by (program, info, per operand: its type and multi-device layout):
what a repeated call looks up before anything else."""


def _clear() -> None:
    with _calls_lock:
        _calls.clear()
        _known.clear()
        _mesh_cache.clear()


register_clear_hook(_clear)


def run_spmd(closed: ClosedJaxpr, operands: Sequence[Any], info: JitInfo | None, name: str, what: str) -> list[Any]:
    """Run ``closed`` on ``operands`` as one SPMD computation (see the module docs)."""
    if info is None:
        info = JitInfo(None, (False,) * len(operands), True)
    return spmd_call(closed, operands, info, name, what).call(operands, what)


def spmd_call(closed: ClosedJaxpr, operands: Sequence[Any], info: JitInfo, name: str, what: str) -> SpmdCall:
    """The compiled call :func:`run_spmd` runs ``operands`` with."""
    try:
        sig = (closed, info, *[
            (x.aval, x._sharding if x._device is None else None) if type(x) is Array else (type(x), _aval(x, what))
            for x in operands
        ])
        known = _known.get(sig)
    except TypeError:  # an unhashable sharding
        sig, known = None, None
    if known is not None:
        return known
    call = _find_call(closed, operands, info, name, what)
    if sig is not None:
        if len(_known) > 4096:
            _known.clear()
        _known[sig] = call
    return call


def _find_call(closed: ClosedJaxpr, operands: Sequence[Any], info: JitInfo, name: str, what: str) -> SpmdCall:
    """The compiled call for these operands: devices and layouts chosen, compiled once."""
    in_avals = tuple(
        x.aval if type(x) is Array else _aval(x, what) for x in operands
    )
    requested_in = info.shardings[0] if info.shardings is not None else (None,) * len(operands)
    n_out = len(closed.out_avals)
    requested_out: tuple[Any, ...] = (None,) * n_out
    if info.shardings is not None and len(info.shardings[1]) == n_out:
        requested_out = tuple(info.shardings[1])
    candidates: list[tuple[str, Any]] = []
    for k, s in enumerate(requested_in):
        if s is not None:
            candidates.append((f"in_shardings of {_label(info, k)}", s))
    for k, s in enumerate(requested_out):
        if s is not None:
            candidates.append((f"out_shardings of output {k}", s))
    for k, x in enumerate(operands):
        if type(x) is Array and x._device is None:
            candidates.append((_label(info, k), x._sharding))
    for m in mesh_of_jaxpr(closed):
        candidates.append(("a mesh of the program", m))
    devices, mesh = _choose_devices(candidates, what)
    replicated = _replicated(devices) if mesh is None else NamedSharding(mesh, PartitionSpec())
    in_shardings = []
    for k, x in enumerate(operands):
        s = requested_in[k]
        if s is None:
            s = x._sharding if type(x) is Array and x._device is None else replicated
        in_shardings.append(s)
    key = (closed, in_avals, tuple(map(id, devices)), tuple(in_shardings), tuple(requested_out), info)
    call = _calls.get(key)
    if call is None:
        with _calls_lock:
            call = _calls.get(key)
            if call is None:
                call = SpmdCall(closed, in_avals, devices, mesh, tuple(in_shardings), tuple(requested_out), info, name)
                if len(_calls) > 1024:
                    _calls.clear()
                _calls[key] = call
    else:
        stats.bump("compile_hits")
    return call


def _label(info: JitInfo, k: int) -> str:
    name = info.name_of(k)
    return f"argument {name!r}" if name else f"operand {k}"


def _aval(x: Any, what: str) -> ShapedArray:
    return get_aval(x, f"an argument of {what}")
