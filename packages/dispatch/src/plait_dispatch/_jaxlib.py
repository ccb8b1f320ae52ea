"""The one module of plait that touches jaxlib.

Everything else in plait-dispatch goes through the functions here, and sees
jaxlib's objects (clients, devices, buffers, executables) as opaque handles
typed ``Any``: jaxlib's own typing is partial, and keeping the boundary this
thin means a jaxlib upgrade is one file's problem.

Facts about ``jaxlib==0.10.2`` that this module relies on, found by trying them
(CPU client, Python 3.11); each one shapes a choice below:

* ``xla_client.make_cpu_client(num_devices=N)`` makes a client with N CPU
  devices in ~3 ms, without importing ``jax``.  Devices are hashable, compare
  by identity (``client.devices()`` returns the same objects each time) and
  print as ``CpuDevice(id=0)``.
* Several ``ArrayImpl`` methods call back into the Python package ``jax`` (they
  ``import jax.core``), which plait must never import: the host transfers
  ``_single_device_array_to_np_array_did_copy`` and
  ``_copy_single_device_array_to_host_async``, ``unsafe_buffer_pointer``,
  ``_arrays``/``_fully_replicated_shard``, ``repr`` of an ``ArrayImpl``, and
  ``ExecuteResults.disassemble_into_single_device_arrays`` (it builds jax's
  ``ShapedArray`` avals).  Safe (checked): ``batched_device_put``,
  ``block_until_ready``, ``is_ready``, ``is_deleted``, ``delete``, ``clone``,
  ``on_device_size_in_bytes``, ``batched_copy_array_to_devices_with_sharding``,
  ``compile_and_load``, ``execute_sharded``, ``consume_with_handlers`` with
  handlers from ``array_result_handler(..., _skip_checks=True)`` (without
  ``_skip_checks`` it calls ``ArrayImpl._check_and_rearrange``, a method only
  ``jax`` installs), and ``buffer_to_dlpack_managed_tensor``.
* So data comes back to the host through DLPack: ``np.from_dlpack`` on the
  capsule is a zero-copy view that holds an *external reference* on the
  buffer.  Deleting a buffer while such a reference is alive aborts the whole
  process (``Check failed: holds_[i] == 0``), and executing with it donated
  silently skips the donation.  Hence :func:`to_numpy` copies out of the view
  and drops it at once, under :data:`_hold_lock`, which :func:`delete` takes
  too; and :func:`dlpack_capsule` exports a private device copy.
* NumPy refuses DLPack's bfloat16 and float8 type codes; the capsule's
  ``DLDataType`` (offset 20 of ``DLManagedTensor``) is rewritten to an unsigned
  integer of the same width and the result viewed as the real dtype.
* ``batched_device_put(aval, sharding, [x], [device], committed, force_copy,
  enable_x64=...)`` copies the host data (mutating ``x`` afterwards does not
  change the buffer).  ``aval`` may be any object with ``shape``, ``dtype``,
  ``weak_type``, ``ndim``; plait passes its own ``ShapedArray`` and jaxlib
  hands the very same object back as ``.aval`` of results.  With
  ``enable_x64=False`` a 64-bit input is silently narrowed, whatever ``aval``
  says, so callers pass data already canonicalised.
* ``ArrayImpl`` cannot be subclassed (and monkey-patching it would fight with
  ``jax`` in the same process), so plait's ``Array`` wraps one.
* ``clone()`` shares the device buffer: deleting one deletes both.
* ``batched_copy_array_to_devices_with_sharding`` with ``REUSE_INPUT`` on the
  same device returns the input object itself; ``DONATE_INPUT`` does not delete
  the input on the same device and *segfaults* across devices: never used.
* ``compile_and_load`` needs ``CompileOptions.device_assignment`` set to the
  target device; the ``DeviceList`` alone still assigns replica 0 to device 0.
* ``execute_sharded`` on a deleted buffer fails with an unhelpful message
  ("Expected args ... to have 1 shards, got: [0, 1]") and, before raising,
  XLA logs an error line to stderr ("E... Invalid buffer passed to
  Execute() ... Buffer has been deleted or donated"); on the wrong device it
  fails with a ``JaxRuntimeError``.  Callers check liveness and placement
  first; liveness as ``ArrayImpl.is_deleted`` of the buffer itself, since a
  buffer shared by two Arrays dies for both when one is deleted.
  A donated input (``tf.aliasing_output``) reports ``is_deleted()`` after.

Measured costs (tiny ``add`` of two ``f32[3]``, warm; a busy 2-core VM, so
medians of 25 interleaved rounds, JAX 0.10.2 measured in the same process):

=====================================================  ========  ==========
path                                                   median    vs JAX jit
=====================================================  ========  ==========
``jax.jit`` cached call (C++ dispatch)                 6.2 us    1.00
``execute_sharded`` alone                              4.3 us    0.69
``execute_sharded`` + ``consume_with_handlers``        4.8 us    0.77
lean Python cached call (signature key from avals,     6.7 us    1.08
dict lookup, unwrap, execute, wrap in ``Array``)
same, fixed arity (no generic loops): lower bound      6.1 us    0.98
=====================================================  ========  ==========

Other costs: a Python callable as result handler 8.6 us per call (use
prebuilt handlers); ``disassemble_into_single_device_arrays`` 5.4 us (and it
imports ``jax``); ``execute`` 5.8 us; ``Array(...)`` construction 0.15 us;
core's ``tree_flatten((args, {}))`` 1.4 us; ``is_deleted()`` 0.02 us (so the
hot paths ask it of every buffer); ``DeviceList((dev,))`` 0.2 us; the sync
and async CPU clients execute equally fast.  A ``device_put`` of a scalar
costs 3.5 us; computations on host scalars use device scalars made once.

Later measurements (``f32[8]``, warm, same machine kind; min of interleaved
rounds): ``execute_sharded`` + ``consume_with_handlers`` 3.3 us with one
operand, 3.4 us with two; wrapping the result in an ``Array`` 0.15 us more.
``jax.jit``'s cached call of ``a * b + a`` is 4.15 us; plait's is 4.4 us.

Why plait's ``jit`` does not ride jaxlib's C++ dispatcher (``_jax.pjit``):
that dispatcher takes its fast path only for arguments whose type *is*
jaxlib's ``ArrayImpl`` and returns ``ArrayImpl`` results, whose Python
methods (operators, ``repr``, ``__array__``) the ``jax`` package installs on
the C++ type.  plait's ``Array`` wraps an ``ArrayImpl`` (the type cannot be
subclassed, and installing plait's methods on it would fight ``jax`` in the
same process), so each call would need an unwrap before and a wrap after the
C++ call: at least JAX's own 4.15 us plus plait's wrapping, more than the
lean Python path above.  The floor of any Python path is the execute-and-
consume pair, 3.3 to 3.4 us, about 0.8 of ``jax.jit``'s whole call.

Pytree arguments (issue 17; 2-core VM at load ~10, so medians of interleaved
rounds; JAX 0.10.2 in the same process):

==========================================================  ==========  ==============
flattening, warm (per call)                                 dict of 10  100 leaves
==========================================================  ==========  ==============
core's ``tree_flatten((args, {}))`` (Python, type caches)   3.2 us      33.5 us
jaxlib's C++ ``PyTreeRegistry.flatten``                     1.3 us      10.7 us
core's ``tree_unflatten`` (with ``tree_structure``)         8.6 us      74.7 us
C++ ``PyTreeDef.unflatten``                                 0.4 us      6.7 us
per-leaf checks, Python loop / four ``map`` passes in C     --          10.8 / 7.7 us
==========================================================  ==========  ==============

So the cached call over pytrees, host scalars, static and keyword arguments
keys its fast handlers by the C++ structure (:mod:`plait_dispatch.fast_tree`,
kept in step with core's registry through a registration hook) plus the
static values, then by the leaves' types, and rebuilds the outputs with the
C++ structure; calls with static arguments and Arrays skip flattening (the
handler is found by the static values and the Arrays' types).  Cached-call
cost, plait / JAX (benchmark ``latency``, median of neighbouring ratios),
before (core's flatten, the tracing-cache lookup, the compiled-call lookup
and per-leaf checks on every call) -> after: dict of 10 1.74x -> 1.25x; 100
leaves 1.58x -> 1.09x; Python scalars mixed in 5.5x -> 0.95x; a static int
8.7x -> 1.17x; donated ``x = f(x)`` 1.54x -> 1.20x; one array 1.01x ->
1.04x (unchanged path); a 1,000-step small-MLP loop 1.64x -> 1.13x.

The floor of any Python path: ``execute_sharded`` + ``consume_with_handlers``
alone cost 0.80-0.81x of JAX's whole cached call for one array, a dict of 10
(11.5 us against 14.3 us) and 100 leaves (104 us against 129 us) alike.
JAX's C++ spends about 2.8 us around the execution of the dict of 10; plait's
Python about 5.7 us (C++ flatten 1.3, handler lookup 0.3, per-leaf checks
1.7, ten ``Array`` wrappers 2.2, C++ unflatten 0.4).  So 0.9x of JAX is out
of reach of a Python path for pytrees: it leaves 1.4 us for everything that
is not the execution.

Riding ``_jax.pjit`` (JAX's C++ dispatcher), estimated with JAX's own cached
call as the C++ part (same process, medians of 21 neighbouring ratios): with
plait's ``Array`` kept as a wrapper (unwrap the leaves, the C++ call, wrap the
outputs and rebuild the dict) one array costs 1.06x of ``jax.jit`` and a dict
of 10 1.17x, against 1.04x and 1.25x for plait's Python path above; with
jaxlib's ``ArrayImpl`` as plait's array type (plait's methods installed on it
only when ``jax`` is not loaded) it would be JAX's cost, 1.00x, by
construction.  No option reaches 0.9x for pytrees; the wrapper variant would
gain 0.08x on the dict of 10 for a second dispatch path to keep correct
(donation, deleted buffers, x64, weak types), so plait stays on its own.

Riding ``_jax.pjit`` for real (issue 17: a prototype, ``jax`` not imported
for the run itself; 2-core VM, medians of 30 interleaved rounds against
``jax.jit`` of the same ``add`` of two ``f32[4]`` in one process):

* ``_jax.pjit(name, fun, cache_miss, static_argnums, static_argnames,
  global_cache_key, registry, shard_arg_fallback, cache)`` runs without
  ``jax`` only once three process-wide C++ states are set:
  ``jax_jit.set_disable_jit_state``, ``set_enable_x64_state`` and
  ``set_post_hook_state``, each given a ``jaxlib._jax.config.Config`` (without
  them a call raises "disable_jit_state is not set").  ``jax`` sets the same
  three when imported, replacing what was there; set by plait after ``jax``,
  they would take ``jax.disable_jit`` and ``jax_enable_x64`` away from JAX.
  One of the two packages would have to give them up.
* ``cache_miss(*args, **kwargs)`` returns ``(outputs, fastpath_data, False)``;
  ``fastpath_data`` must be a tuple with the fields of JAX's
  ``MeshExecutableFastpathData`` in order (``xla_executable,
  out_pytree_def, in_shardings, out_shardings, out_avals, out_committed,
  kept_var_bitvec, in_device_local_layouts, const_args``; an object with those
  attributes fails with ``std::bad_cast``).  A later call of the same
  signature then never reaches Python.
* Cost with jaxlib's ``ArrayImpl`` in and out (plait's executable, sharding
  and result handler): 3.81 us against ``jax.jit``'s 3.63 us, 1.05x.  With
  plait's ``Array`` registered in the call's registry as a dataclass node
  (data field ``_buf``; meta fields ``_device`` and ``_committed``, so the
  C++ flattener unwraps the leaves and ``out_pytree_def`` rebuilds Arrays by
  calling ``Array(_buf=..., _device=..., _committed=...)``): 1.24x to 1.38x.
  Flattening ``(x, x)`` through such nodes costs 0.44 us and rebuilding one
  Array 0.56 us, against about 0.6 us for plait's whole Python path around
  the execution (1.01x in the same runs).

So the C++ dispatcher takes no call of plait's ``Array`` below 0.9x: the
wrapper costs more inside C++ than in Python, and only jaxlib's own array
type as plait's array (with the global states shared with ``jax``) would
reach JAX's cost, and not below it.  The execution alone
(``execute_sharded`` + ``consume_with_handlers``) stays at 0.77-0.83x of a
``jax.jit`` call (0.77x for ``sin`` of ``f32[8]``, 0.92x of a whole step of
the 1,000-step MLP loop, whose compiled programs are the same HLO on both
sides), which is the floor of every cached call here.

Issue 17, second pass (2026-11-27; 2-core VM at load 2 to 10 from other
work, so medians of 31-41 interleaved rounds of 200 calls, JAX 0.10.2 in the
same process; ratios are to JAX's whole call of the same case):

=============================================  =========  ==========  =========
piece                                          one f32[4] sin f32[8]  dict of 10
=============================================  =========  ==========  =========
``jax.jit`` / ``jnp.sin`` whole call           3.3 us     3.2-3.5 us  14.4-15.1 us
``execute_sharded`` alone                      0.74x      --          --
``execute_sharded`` + ``consume_with_handlers``  0.83-0.84x 0.83-0.86x  0.80-0.82x
JAX's own executable, ``execute_sharded``      0.73x      --          --
alone (its client, its ``ArrayImpl``)
same + one ``Array`` (``__init__``)            0.89-0.90x 0.87-0.89x  --
``execute`` (the older entry point)            1.34x      --          --
``consume_with_handlers(..., strict=False)``,  0.83-0.84x --          --
a tuple of buffers, a bound method
=============================================  =========  ==========  =========

So plait's executable and JAX's run equally fast (0.73x each without the
results), and no other entry point of jaxlib is cheaper: the execution with
its results is 0.80-0.86x of JAX's whole call in every case, leaving 0.04-0.1x
(0.15-0.3 us for one array) for everything else below a 0.9x target.  An
``Array`` made by ``__init__`` costs about 0.09 us in isolation and 0.06x in
the call (its deallocation included); made by ``object.__new__`` and five slot
stores inline it costs a third less, which the hot paths now do.  For the
dict of 10 the pieces around the execution are: C++ flatten 0.07x, handler
lookup (the structure's hash and equality) 0.02x, leaf checks in four ``map``
passes 0.08x (one Python loop now: 0.045x), ten Arrays 0.09x (built inline
now: about 0.06x), C++ unflatten 0.03x: 0.29x (now about 0.25x), so 0.9x is
out of reach of any path that rebuilds plait's ``Array`` wrappers (JAX's C++
spends 0.19x around the same execution).  With host scalars (``f(x, 2.0, 3)``) JAX
converts the scalars on every call (6.1 us) while plait reuses device copies;
failing over to the scalar loop through an ``AttributeError`` cost 0.09x of
that call and is now skipped (0.81x).  jaxlib's pytree ``PyTreeDef`` hash of
the 100-leaf tree costs 0.85 us and its equality 2.1 us (a dict lookup by it
3.2 us): keying by the hash alone would be cheaper but could confuse two
structures, so the lookup keeps the equality, as JAX's C++ does.

The 1,000-step MLP loop: XLA's cost analysis gives the step 116,769 flops,
above the 1,000 under which the CPU client runs a program inline in the
caller's thread (its ``cheap_computation_``), so it runs on XLA's worker
threads: ``execute_sharded`` returns after 6.3 us and the step is done 16.6
us later.  The loop's time is the executions', and they run slower when the
dispatching thread runs far ahead of them: plait's loop took 18.5 ms with an
unbounded queue, 14.6 ms when each call waited for the call before the
previous one, 16.4-16.7 ms with 2-4 us of busy waiting per step; JAX 17.5 ms.
Compile options do not change the step (``xla_cpu_multi_thread_eigen`` off:
1.01x; ``xla_backend_optimization_level`` 0: 1.22x).  So chained calls of such
programs are paced (``jit._pace``): 0.81x of JAX in the benchmark.

Checking the leaves of a pytree call: one Python loop (``a._buf``,
``a._committed``, ``is_deleted``, ``a.aval``) costs 0.57 us for 10 leaves and
5.8 us for 100, four ``map`` passes with ``operator.attrgetter`` 1.05 and
7.5 us, one ``attrgetter`` of three names and ``zip(*...)`` 1.35 and 10.0 us
(Python 3.11: its specialised attribute loads beat ``attrgetter`` calls).

Riding ``_jax.pjit`` remains as measured above (1.05x with jaxlib's
``ArrayImpl`` in and out, 1.24-1.38x with plait's ``Array``): JAX's own cost
at best, so not below 0.9x either; using jaxlib's ``ArrayImpl`` as plait's
array type would save the ``Array`` wrappers (0.06x of a one-array call,
0.09x of the dict of 10) but not the flatten, lookup and checks, and would
put plait's methods on a type that ``jax`` owns when imported.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import threading
from collections.abc import Sequence
from typing import Any, Final

import numpy as np

# Quiet jaxlib's INFO log lines ("PjRt-IFRT device count ...") unless the user
# asked for them; must be set before jaxlib's C++ logging starts.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")

from jaxlib import xla_client as _xc

from plait_core.config import config as _config

# jaxlib's C++ module ships without stubs: reach it untyped.
_jax: Any = importlib.import_module("jaxlib._jax")
_version: Any = importlib.import_module("jaxlib.version")

Device = Any
"""A jaxlib device (``CpuDevice(id=0)``): opaque outside this module."""
DEVICE_CLASS: type = _xc.Device
"""The class of every jaxlib device (JAX's ``jax.Device``), for ``isinstance``."""
Buffer = Any
"""A jaxlib single-device array (``ArrayImpl``): opaque outside this module."""
Executable = Any
"""A compiled, loaded jaxlib executable: opaque outside this module."""
ResultHandler = Any
"""What turns one output of an execution into a :data:`Buffer`."""

JAXLIB_VERSION: Final[str] = str(_version.__version__)
XlaRuntimeError: type[Exception] = _xc.XlaRuntimeError
CompilerOptions = tuple[tuple[str, "str | bool | int | float"], ...]
"""XLA compile option overrides, ``(name, value)`` pairs in a fixed order (hashable)."""
"""The exception jaxlib raises for runtime and compile failures."""

NUM_CPU_DEVICES_ENV: Final[str] = "PLAIT_NUM_CPU_DEVICES"
PLATFORM: Final[str] = "cpu"

# ---------------------------------------------------------------------------
# The client: one per process, made on first use.

_client_lock = threading.Lock()
_client: Any = None
_requested_num_devices: int | None = None


_XLA_DEVICE_COUNT_FLAG: Final[str] = "--xla_force_host_platform_device_count="


def _num_devices_from_env() -> int:
    """``$PLAIT_NUM_CPU_DEVICES``; without it, JAX's way of asking for CPU devices,
    ``--xla_force_host_platform_device_count=N`` in ``$XLA_FLAGS`` (flax's tests set
    it); else 1."""
    raw = os.environ.get(NUM_CPU_DEVICES_ENV)
    if raw is None or raw.strip() == "":
        for flag in os.environ.get("XLA_FLAGS", "").split():
            if flag.startswith(_XLA_DEVICE_COUNT_FLAG):
                value = flag[len(_XLA_DEVICE_COUNT_FLAG):]
                if not value.isdigit() or int(value) < 1:
                    raise ValueError(f"XLA_FLAGS: {flag} must give a positive integer device count")
                return int(value)
        return 1
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"{NUM_CPU_DEVICES_ENV} must be a positive integer, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"{NUM_CPU_DEVICES_ENV} must be a positive integer, got {raw!r}")
    return n


def set_num_cpu_devices(n: int) -> None:
    """Ask for ``n`` CPU devices; overrides ``$PLAIT_NUM_CPU_DEVICES``.

    Only possible before the client exists (before the first device, array
    or computation); afterwards ``RuntimeError`` (the device count of a
    client is fixed when it is made).
    """
    global _requested_num_devices
    if type(n) is not int or n < 1:
        raise ValueError(f"set_num_cpu_devices: expected a positive int, got {n!r}")
    with _client_lock:
        if _client is not None:
            have = _client.device_count()
            if have == n:
                return
            raise RuntimeError(
                f"set_num_cpu_devices({n}): the CPU client already exists with {have} device(s); "
                f"set it (or ${NUM_CPU_DEVICES_ENV}) before the first use of a device"
            )
        _requested_num_devices = n


def client() -> Any:
    """The process's CPU client, made on first call with
    ``$PLAIT_NUM_CPU_DEVICES`` devices (default 1)."""
    c = _client
    if c is not None:
        return c
    return _make_client()


def _make_client() -> Any:
    global _client
    with _client_lock:
        if _client is None:
            n = _requested_num_devices or _num_devices_from_env()
            if _distributed is None:
                _client = _xc.make_cpu_client(num_devices=n)
            else:
                dist, node_id, num_nodes = _distributed
                _client = _xc.make_cpu_client(
                    distributed_client=dist,
                    node_id=node_id,
                    num_nodes=num_nodes,
                    collectives=_jax.make_gloo_tcp_collectives(dist),
                    num_devices=n,
                )
            _shardings.clear()
        return _client


# ---------------------------------------------------------------------------
# Several processes: jaxlib's distributed runtime (a coordination service in
# process 0, a client in every process) and gloo's TCP collectives for CPUs.
# The CPU client of each process is then made with the distributed client,
# its node id and the node count: ``devices()`` lists every process's
# devices, and SPMD programs run across all of them.

_distributed: tuple[Any, int, int] | None = None


def client_started() -> bool:
    """Whether the process's client exists (devices were used)."""
    return _client is not None


def start_coordinator(address: str, num_nodes: int) -> Any:
    """Start the coordination service on ``address`` (``host:port``) for
    ``num_nodes`` processes; keep the returned handle alive."""
    port = address.rsplit(":", 1)[-1]
    return _jax.get_distributed_runtime_service(f"[::]:{port}", num_nodes)


def connect(address: str, node_id: int, timeout_s: int) -> Any:
    """Connect this process to the coordinator at ``address``; raises
    ``RuntimeError`` (jaxlib's, without a useful message) if it cannot within
    ``timeout_s`` seconds.  Without an error callback jaxlib *aborts the
    process* when the connection fails; with one, ``connect`` raises."""
    dist = _jax.get_distributed_runtime_client(
        address,
        node_id,
        init_timeout=timeout_s,
        shutdown_on_destruction=False,
        missed_heartbeat_callback=_ignore_error,
    )
    dist.connect()
    return dist


def _ignore_error(*args: Any) -> None:
    """The distributed client's error callback (its presence keeps jaxlib
    from aborting the process; the error is raised where it happens)."""


def use_distributed(dist: Any, node_id: int, num_nodes: int) -> None:
    """Make the process's client (on first use) a node of a distributed run."""
    global _distributed
    with _client_lock:
        if _client is not None:
            raise RuntimeError("the CPU client already exists")
        _distributed = (dist, node_id, num_nodes)


def forget_distributed() -> None:
    """Stop making distributed clients (after shutdown; the client stays)."""
    global _distributed
    _distributed = None


def make_standalone_client(num_devices: int) -> Any:
    """A fresh client that is *not* the process's client (for tests of the
    adapter itself; arrays of different clients must not be mixed)."""
    return _xc.make_cpu_client(num_devices=num_devices)


def devices() -> list[Device]:
    """All devices of the process's client (of every process), in id order."""
    return list(client().devices())


def process_index() -> int:
    """This process's index in a distributed run (0 alone)."""
    return int(client().process_index())


def default_device() -> Device:
    """The device uncommitted values live on: ``config.default_device`` when it
    names a device (``plait.default_device(d)``), else this process's first device."""
    d = _config.default_device
    if d is None or d.__class__ is str:
        return client().local_devices()[0]
    return d


def first_device() -> Device:
    """This process's first device (the default device when none is configured)."""
    return client().local_devices()[0]


def default_backend() -> str:
    """The platform name of the client: always ``"cpu"`` here."""
    return PLATFORM


def is_device(obj: object) -> bool:
    """Whether ``obj`` is a jaxlib device (of any client)."""
    return isinstance(obj, _xc.Device)


def owns_device(device: Device) -> bool:
    """Whether ``device`` belongs to the process's client."""
    return any(d is device for d in client().devices())


def device_description(device: Device) -> str:
    """Short text naming a device in messages, e.g. ``cpu:1``."""
    return f"{device.platform}:{device.id}"


# ---------------------------------------------------------------------------
# Shardings: what jaxlib asks of a sharding for a single-device array.


class _SingleDevice(_xc.SingleDeviceSharding):  # type: ignore[misc]
    """A sharding placing a whole array on one device.

    ``batched_device_put`` and result handlers read ``_device_assignment``,
    ``_internal_device_list``, ``memory_kind`` and call
    ``_to_xla_hlo_sharding(ndim)``; the base class supplies ``_device``,
    ``_internal_device_list`` and ``_memory_kind``.
    """

    @property
    def memory_kind(self) -> None:
        return None

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return _xc.HloSharding.replicate()


_shardings: dict[Device, Any] = {}


def sharding_for(device: Device) -> Any:
    """The (cached) single-device sharding of ``device``."""
    s = _shardings.get(device)
    if s is None:
        s = _shardings[device] = _SingleDevice(device)
    return s


# ---------------------------------------------------------------------------
# Shardings over several devices (multi-device arrays and SPMD programs).
#
# A plait sharding reaches jaxlib as a ``GSPMDSharding`` over a device list
# and an ``HloSharding`` built from its tiling: an integer array with one axis
# per array dimension (pieces of that dimension) and a last axis of replicas,
# whose entries are positions in the device list (XLA's logical device ids:
# the SPMD executable's device assignment is that list).  Facts (tried):
# ``ArrayImpl(aval, sharding, shards, committed, _skip_checks=True)`` builds a
# multi-device array from single-device ones without ``jax``; ``._arrays`` of
# one gives its shards back (in device-list order), also without ``jax``.


class _Tiled(_xc.GSPMDSharding):  # type: ignore[misc]
    """A multi-device sharding as jaxlib reads it (see ``_SingleDevice``)."""

    @property
    def memory_kind(self) -> None:
        return None

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return tuple(self._devices)

    def _to_xla_hlo_sharding(self, ndim: int) -> Any:
        return self._hlo_sharding


def hlo_sharding(assignment: np.ndarray) -> Any:
    """XLA's sharding of a tiling (see above); all pieces whole: replicated."""
    tiles = assignment.shape[:-1]
    if all(t == 1 for t in tiles):
        return _xc.HloSharding.replicate()
    op = _xc.OpSharding()
    op.type = _xc.OpSharding.Type.OTHER
    replicated = assignment.shape[-1] > 1
    dims = list(assignment.shape) if replicated else list(tiles)
    op.tile_assignment_dimensions = dims
    op.tile_assignment_devices = [int(p) for p in assignment.flat]
    op.replicate_on_last_tile_dim = replicated
    return _xc.HloSharding.from_proto(op)


def hlo_sharding_text(assignment: np.ndarray) -> str:
    """The ``mhlo.sharding`` attribute text of a tiling."""
    return str(hlo_sharding(assignment))


def manual_sharding_text() -> str:
    """The ``mhlo.sharding`` text of a value each device holds its own piece of
    (inside ``shard_map``)."""
    return str(_xc.HloSharding.manual())


def maximal_sharding_text(index: int) -> str:
    """The ``mhlo.sharding`` text of an operation placed on the device at
    position ``index`` of the program's device list (a host callback run
    once, on the whole values)."""
    return f"{{maximal device={int(index)}}}"


def maximal_device(hlo: Any) -> int | None:
    """The device position an ``HloSharding`` places a whole value on, or
    ``None`` when it is not maximal (an output of a host callback placed on
    one device)."""
    if hlo.is_replicated() or not hlo.is_maximal():  # (XLA counts a replicated value as maximal)
        return None
    devices = list(hlo.tile_assignment_devices()) or list(hlo.to_proto().tile_assignment_devices)
    return int(devices[0])


def tiling_of(hlo: Any, ndim: int, num_devices: int) -> np.ndarray:
    """The tiling (see above) of an ``HloSharding`` XLA chose, for rank ``ndim``."""
    if hlo.is_replicated() or ndim == 0:
        return np.arange(num_devices, dtype=np.int64).reshape((1,) * ndim + (num_devices,))
    if hlo.is_maximal():
        raise ValueError(f"a computation output is placed on one device only ({hlo}); plait cannot describe it")
    dims = list(hlo.tile_assignment_dimensions())
    devs = np.asarray(hlo.tile_assignment_devices(), np.int64).reshape(dims)
    if len(dims) == ndim:
        return devs.reshape(*dims, 1)
    if len(dims) == ndim + 1 and hlo.replicate_on_last_tile_dim():
        return devs
    rest = int(np.prod(dims[ndim:]))
    return devs.reshape(*dims[:ndim], rest)


_tiled: dict[tuple[Any, ...], Any] = {}


def multi_device_sharding(devices: tuple[Device, ...], assignment: np.ndarray) -> Any:
    """The (cached) jaxlib sharding of a tiling over ``devices``."""
    key = (devices, assignment.shape, assignment.tobytes())
    s = _tiled.get(key)
    if s is None:
        s = _tiled[key] = _Tiled(_xc.DeviceList(devices), hlo_sharding(assignment))
    return s


def hlo_sharding_of(devices: tuple[Device, ...], hlo: Any) -> Any:
    """The jaxlib sharding of an ``HloSharding`` XLA chose, over ``devices``."""
    return _Tiled(_xc.DeviceList(devices), hlo)


def put_shards(aval: Any, sharding: Any, values: list[np.ndarray], devices: list[Device]) -> Buffer:
    """A multi-device array of ``aval`` from one host piece per device
    (``devices`` in the order of ``sharding``'s device list).  Each piece is
    put on its device alone and the pieces assembled: ``batched_device_put``
    of a sharding with replicas fails in jaxlib without ``jax``
    ("bad_function_call")."""
    shards = []
    for v, d in zip(values, devices):
        shard_aval = _ShardAval(v.shape, aval.dtype, aval.weak_type)
        check_device_type(np.dtype(v.dtype))
        shards.append(_xc.batched_device_put(shard_aval, sharding_for(d), [v], [d], True, True, enable_x64=True))
    return assemble(aval, sharding, shards)


class _ShardAval:
    """What ``batched_device_put`` reads of an abstract value, for one piece."""

    __slots__ = ("dtype", "ndim", "shape", "weak_type")

    def __init__(self, shape: tuple[int, ...], dtype: Any, weak_type: bool) -> None:
        self.shape = shape
        self.dtype = dtype
        self.weak_type = weak_type
        self.ndim = len(shape)


def assemble(aval: Any, sharding: Any, shards: list[Buffer]) -> Buffer:
    """A multi-device array from single-device buffers, one per device of
    ``sharding``'s list, in its order (no copy)."""
    return _jax.ArrayImpl(aval, sharding, shards, True, _skip_checks=True)


def shards_of(buf: Buffer) -> list[Buffer]:
    """The single-device buffers of a multi-device array, in device-list order."""
    return list(buf._arrays)


def compile_spmd(
    text: str, devices: tuple[Device, ...], propagate: Sequence[bool], host_callbacks: Sequence[Any] = ()
) -> Executable:
    """Compile a module for ``len(devices)`` partitions with XLA's SPMD
    partitioner; partition ``i`` runs on ``devices[i]``.  ``propagate``: per
    output, whether XLA chooses its layout (else its ``mhlo.sharding`` holds).
    ``host_callbacks``: as :func:`compile_stablehlo`'s."""
    options = _xc.CompileOptions()
    options.num_partitions = len(devices)
    options.num_replicas = 1
    # One device needs no partitioner, unless the program has its custom calls
    # (``@Sharding``: shard_map, with_sharding_constraint).
    options.executable_build_options.use_spmd_partitioning = len(devices) > 1 or '"Sharding"' in text
    # Outputs without an ``mhlo.sharding`` take the layout XLA propagates to them.
    options.executable_build_options.allow_spmd_sharding_propagation_to_output = list(propagate) or [False]
    ids = np.array([[d.id for d in devices]], dtype=np.int32).reshape(1, len(devices))
    options.device_assignment = _xc.DeviceAssignment.create(ids)
    if host_callbacks:
        return client().compile_and_load(
            _parse_module(text), _xc.DeviceList(devices), options, host_callbacks=list(host_callbacks)
        )
    return client().compile_and_load(text, _xc.DeviceList(devices), options)


def output_hlo_shardings(executable: Executable, n: int) -> list[Any]:
    """The ``HloSharding`` of each of the ``n`` outputs of an SPMD executable
    (for one partition XLA reports none: everything is replicated)."""
    ops = executable.get_output_shardings()
    if ops is None:
        return [_xc.HloSharding.replicate()] * n
    return [_xc.HloSharding.from_proto(op) for op in ops]


def multi_device_handler(aval: Any, sharding: Any) -> ResultHandler:
    """A handler turning an output of an SPMD executable into a multi-device array."""
    return _xc.array_result_handler(aval, sharding, True, _skip_checks=True)


# ---------------------------------------------------------------------------
# Host <-> device transfers.


def _no_device_types() -> frozenset[np.dtype[Any]]:
    import ml_dtypes

    return frozenset(np.dtype(t) for t in (ml_dtypes.float6_e2m3fn, ml_dtypes.float6_e3m2fn, ml_dtypes.int1,
                                           ml_dtypes.uint1))


_NO_DEVICE_TYPES: Final[frozenset[np.dtype[Any]]] = _no_device_types()
"""Narrow types XLA cannot hold (see ``lowering.module.NO_XLA_TYPE``)."""


def check_device_type(dtype: np.dtype[Any]) -> None:
    """Refuse a dtype XLA cannot hold, naming it and why: ``JaxRuntimeError``
    for the 6-bit floats (XLA has no such primitive type, as JAX reports),
    ``ValueError`` for the 1-bit integers (StableHLO cannot express them)."""
    if dtype in _NO_DEVICE_TYPES:
        from plait_dispatch.lowering.module import refuse_dtype

        refuse_dtype(dtype, "hold")


def device_put(value: np.ndarray, aval: Any, device: Device, committed: bool) -> Buffer:
    """Copy a NumPy array (already of ``aval``'s canonical dtype and shape) to
    ``device``; the result owns its memory."""
    if value.dtype.kind == "V":
        check_device_type(value.dtype)
    return _xc.batched_device_put(aval, sharding_for(device), [value], [device], committed, True, enable_x64=True)


def copy_buffer(buf: Buffer, device: Device) -> Buffer:
    """A fresh device copy of ``buf`` on ``device`` (same or another device)."""
    out = _xc.batched_copy_array_to_devices_with_sharding(
        [buf], [_xc.DeviceList((device,))], [sharding_for(device)], [_xc.ArrayCopySemantics.ALWAYS_COPY]
    )
    return out[0]


_hold_lock = threading.Lock()
"""Serialises DLPack views (external references) against deletion: deleting a
buffer while a view is alive aborts the process."""

_DL_UINT: Final[int] = 1
_DL_DTYPE_OFFSET: Final[int] = 20  # DLManagedTensor.dl_tensor.dtype.code
_NUMPY_DLPACK_KINDS: Final[frozenset[str]] = frozenset("biufc")

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Capsule:
    """Hands one DLPack capsule to ``np.from_dlpack``."""

    __slots__ = ("capsule",)

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self.capsule

    def __dlpack_device__(self) -> tuple[int, int]:
        return (1, 0)  # kDLCPU


def to_numpy(buf: Buffer, dtype: np.dtype[Any]) -> np.ndarray:
    """The data of ``buf`` as a new NumPy array (writable, owning its memory).

    ``dtype`` is the array's dtype (ml_dtypes types such as bfloat16 are
    fetched as unsigned integers of their width and viewed back)."""
    with _hold_lock:
        capsule = _jax.buffer_to_dlpack_managed_tensor(buf)
        if dtype.kind in _NUMPY_DLPACK_KINDS and dtype.type.__module__ == "numpy":  # (float8_e5m2 has kind f)
            return np.from_dlpack(_Capsule(capsule)).copy()
        address = _capsule_pointer(capsule, b"dltensor")
        ctypes.c_uint8.from_address(address + _DL_DTYPE_OFFSET).value = _DL_UINT
        return np.from_dlpack(_Capsule(capsule)).view(dtype).copy()


_DL_BYTE_OFFSET: Final[int] = 40  # DLManagedTensor.dl_tensor.byte_offset (data is at 0)


def buffer_pointer(buf: Buffer) -> int:
    """The address of ``buf``'s data in its device's memory.

    ``ArrayImpl.unsafe_buffer_pointer`` calls back into ``jax``, so the address
    is read from a DLPack export of the buffer (``data + byte_offset``), which
    is dropped at once: unconsumed, its capsule's destructor releases the
    external reference, under :data:`_hold_lock` as every view here is."""
    with _hold_lock:
        capsule = _jax.buffer_to_dlpack_managed_tensor(buf)
        address = _capsule_pointer(capsule, b"dltensor")
        data = ctypes.c_uint64.from_address(address).value
        offset = ctypes.c_uint64.from_address(address + _DL_BYTE_OFFSET).value
        del capsule
    return int(data + offset)


def dlpack_capsule(buf: Buffer, device: Device) -> Any:
    """A DLPack capsule of a private copy of ``buf``: the consumer may keep it
    as long as it likes while the original is deleted or donated."""
    return _jax.buffer_to_dlpack_managed_tensor(copy_buffer(buf, device))


# ---------------------------------------------------------------------------
# Buffers.


def delete(buf: Buffer) -> None:
    """Free a buffer now (no-op if it already is)."""
    with _hold_lock:
        buf.delete()


def is_deleted(buf: Buffer) -> bool:
    """Whether the buffer was deleted or donated."""
    return bool(buf.is_deleted())


def block_until_ready(bufs: Sequence[Buffer]) -> None:
    """Wait until every buffer's value is computed."""
    if len(bufs) == 1:
        bufs[0].block_until_ready()
    elif bufs:
        _xc.batched_block_until_ready(list(bufs))


def nbytes_on_device(buf: Buffer) -> int:
    """Bytes the buffer occupies on its device."""
    return int(buf.on_device_size_in_bytes())


# ---------------------------------------------------------------------------
# Compilation and execution.


def compile_stablehlo(
    text: str, device: Device, host_callbacks: Sequence[Any] = (), compiler_options: CompilerOptions = ()
) -> Executable:
    """Compile a StableHLO module given as MLIR text for one device.

    The module's entry is ``func.func public @main``; a donated argument
    carries ``{tf.aliasing_output = k : i32}`` naming the output it may reuse.
    ``host_callbacks`` are the Python functions the module's
    :data:`HOST_CALLBACK_TARGET` custom calls name by index (their
    ``backend_config = {index = k : ui64}``); the executable keeps them.
    ``compiler_options`` are XLA's option overrides (``(name, value)`` pairs, as
    JAX's ``compile(compiler_options=...)``); an unknown name is an
    :data:`XlaRuntimeError` ("No such compile option").
    Raises :data:`XlaRuntimeError` with XLA's message on invalid input.
    """
    options = _xc.CompileOptions()
    options.device_assignment = _xc.DeviceAssignment.create(np.array([[device.id]], dtype=np.int32))
    if compiler_options:
        options.env_option_overrides = list(compiler_options)
    if not host_callbacks and HOST_CALLBACK_TARGET in text:
        # XLA would call into a missing function (a crash, not an error).
        raise ValueError("compile_stablehlo: the module calls host callbacks, but none were given (host_callbacks)")
    if host_callbacks:
        # Only the MLIR-module overload takes host callbacks: parse the text.
        return client().compile_and_load(
            _parse_module(text), _xc.DeviceList((device,)), options, host_callbacks=list(host_callbacks)
        )
    return client().compile_and_load(text, _xc.DeviceList((device,)), options)


def serialize_executable(executable: Executable) -> bytes:
    """The bytes of a compiled executable (without host callbacks), which
    :func:`deserialize_executable` turns back into a loaded executable in
    this or another process of the same jaxlib and device kind."""
    return bytes(client().serialize_executable(executable))


def deserialize_executable(data: bytes, device: Device) -> Executable:
    """An executable from :func:`serialize_executable`'s bytes, loaded for
    ``device`` (a tenth of a second where compiling took seconds).  Raises
    :data:`XlaRuntimeError` on bytes it cannot read."""
    options = _xc.CompileOptions()
    options.device_assignment = _xc.DeviceAssignment.create(np.array([[device.id]], dtype=np.int32))
    return client().deserialize_executable(data, _xc.DeviceList((device,)), options)


def compiler_fingerprint(device: Device) -> str:
    """What besides a module decides the executable XLA makes for ``device``:
    jaxlib's version, the platform's version and the device kind (a part of
    the persistent cache's key)."""
    return f"jaxlib {_version.__version__}; {client().platform_version}; {device.device_kind}"


HOST_CALLBACK_TARGET: Final[str] = "xla_ffi_python_cpu_callback"
"""The typed-FFI custom-call target of jaxlib's CPU client that calls a Python
function given at compile time: it receives the operands as NumPy arrays
(and any ``!stablehlo.token`` operand as an opaque value to hand back) and
returns a tuple of arrays, one per result."""

PARTITIONED_HOST_CALLBACK_TARGET: Final[str] = "xla_ffi_partitioned_python_cpu_callback"
"""The same as :data:`HOST_CALLBACK_TARGET`, with a partitioner in jaxlib that
keeps the operands' layouts: in an SPMD program every device calls the
function on its own pieces (no results)."""

_mlir_context: list[Any] = []
_mlir_lock = threading.Lock()


def _parse_module(text: str) -> Any:
    """``text`` as an MLIR module of jaxlib's bundled MLIR (one context, made
    on first use, with the dialects StableHLO modules use)."""
    ir: Any = importlib.import_module("jaxlib.mlir.ir")
    with _mlir_lock:
        if not _mlir_context:
            ext: Any = importlib.import_module("jaxlib.mlir._mlir_libs._jax_mlir_ext")
            stablehlo: Any = importlib.import_module("jaxlib.mlir.dialects.stablehlo")
            # chlo too: lowerings emit its ops (chlo.next_after, ...), which XLA expands
            chlo: Any = importlib.import_module("jaxlib.mlir.dialects.chlo")
            registry = ir.DialectRegistry()
            ext.register_dialects(registry)
            context = ir.Context()
            context.append_dialect_registry(registry)
            context.load_all_available_dialects()
            stablehlo.register_dialect(context)
            chlo.register_dialect(context)
            _mlir_context.append(context)
        with _mlir_context[0]:
            return ir.Module.parse(text)


def mlir_module(text: str) -> Any:
    """The StableHLO module ``text`` as an MLIR ``Module`` object of jaxlib's
    bundled MLIR (what ``jax``'s ``compiler_ir("stablehlo")`` returns)."""
    return _parse_module(text)


def xla_computation(text: str) -> Any:
    """The StableHLO module ``text`` converted to an XLA HLO computation
    (jaxlib's ``XlaComputation``: ``as_hlo_text()``, ``as_hlo_module()``,
    ``program_shape()``), untupled arguments and results as lowered."""
    return _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)


def result_handler(aval: Any, device: Device) -> ResultHandler:
    """A handler turning an output of ``aval`` on ``device`` into a buffer whose
    ``.aval`` is ``aval`` itself.  Build once per compiled signature."""
    return _xc.array_result_handler(aval, sharding_for(device), True, _skip_checks=True)


def execute(
    executable: Executable, args: list[Buffer], handlers: list[ResultHandler], effects: bool = False
) -> list[Buffer]:
    """Run ``executable`` on live buffers already on its device; one handler per
    output.  Donated inputs are deleted by XLA when it could reuse them.
    ``effects``: the program calls the host; its completion token is kept for
    :func:`effects_barrier`."""
    if not effects:
        return executable.execute_sharded(args).consume_with_handlers(handlers)  # type: ignore[no-any-return]
    results = executable.execute_sharded(args, with_tokens=True)
    token = results.consume_token()
    outs = results.consume_with_handlers(handlers)
    with _effects_lock:
        if len(_effect_tokens) >= _MAX_EFFECT_TOKENS:  # the oldest are done long since: wait, forget them
            old = _effect_tokens[: _MAX_EFFECT_TOKENS // 2]
            del _effect_tokens[: _MAX_EFFECT_TOKENS // 2]
            for t in old:
                t.block_until_ready()
        _effect_tokens.append(token)
    return outs  # type: ignore[no-any-return]


_effects_lock = threading.Lock()
_effect_tokens: list[Any] = []
_MAX_EFFECT_TOKENS: Final[int] = 256


def effects_barrier() -> None:
    """Wait until every program with host callbacks started so far has finished
    (and so have its callbacks)."""
    with _effects_lock:
        tokens = list(_effect_tokens)
        _effect_tokens.clear()
    for t in tokens:
        t.block_until_ready()


# The same steps as jaxlib's unbound methods, for the hot paths (a cached jit
# call, an eager operation): calling them costs no Python frame, which is a
# tenth of the overhead those paths have left above the execution itself.
# ``consume_results(run_executable(executable, bufs), handlers)`` is
# :func:`execute`; ``buffer_is_deleted(buf)`` is :func:`is_deleted`.
run_executable: Any = _jax.LoadedExecutable.execute_sharded
consume_results: Any = _jax.ExecuteResults.consume_with_handlers
buffer_is_deleted: Any = _jax.ArrayImpl.is_deleted


def pytree_registry() -> Any:
    """A fresh C++ pytree registry of jaxlib (``jaxlib._jax.pytree``) knowing
    ``None``, tuples, named tuples, lists and dicts (children in sorted key
    order, as plait's); more node types with ``register_node(type, flatten,
    unflatten)``.  Its ``flatten(tree)`` returns ``(leaves, treedef)``; the
    treedef is hashable and has ``unflatten(leaves)``.  See
    :mod:`plait_dispatch.fast_tree` for how plait keeps it in step with core's."""
    return _jax.pytree.PyTreeRegistry()


def memory_stats(executable: Executable) -> dict[str, int]:
    """XLA's compiled memory statistics, by field name (``argument_size_in_bytes``,
    ``output_size_in_bytes``, ``alias_size_in_bytes``, ``temp_size_in_bytes``,
    ``generated_code_size_in_bytes``, ``peak_memory_in_bytes`` and host_*)."""
    stats = executable.get_compiled_memory_stats()
    out: dict[str, int] = {}
    for name in dir(stats):
        if name.endswith("_in_bytes"):
            out[name] = int(getattr(stats, name))
    return out


def cost_analysis(executable: Executable) -> dict[str, float]:
    """XLA's cost estimate (``flops``, ``bytes accessed``, ...)."""
    return {str(k): float(v) for k, v in executable.cost_analysis().items()}


def hlo_text(executable: Executable) -> str:
    """The optimised HLO of a compiled executable, as text."""
    return str(executable.get_hlo_text())


# ---------------------------------------------------------------------------
# LAPACK kernels for the CPU.
#
# jaxlib ships LAPACK's factorisations as typed-FFI custom-call targets:
# ``jaxlib.cpu._lapack.registrations()`` maps ``lapack_{s,d,c,z}<routine>_ffi``
# to a capsule, and XLA calls one once it is registered for the ``cpu``
# platform with ``api_version=1`` (typed FFI).  ``_lapack.initialize()`` binds
# the kernels to the LAPACK routines jaxlib links.  Both happen once, on the
# first lowering that needs a kernel (before its compilation).

_lapack: Any = importlib.import_module("jaxlib.cpu._lapack")
_lapack_lock = threading.Lock()
_lapack_registered = False
_LAPACK_PREFIX: Final[dict[str, str]] = {"float32": "s", "float64": "d", "complex64": "c", "complex128": "z"}


def lapack_target(routine: str, dtype: np.dtype[Any]) -> str:
    """The custom-call target of LAPACK's ``routine`` (``"potrf"``, ``"getrf"``,
    ...) for ``dtype``, e.g. ``lapack_spotrf_ffi``; registers jaxlib's LAPACK
    kernels with XLA on first use.  ``KeyError`` for a dtype LAPACK lacks."""
    global _lapack_registered
    if not _lapack_registered:
        with _lapack_lock:
            if not _lapack_registered:
                _lapack.initialize()
                for name, capsule in _lapack.registrations().items():
                    _xc.register_custom_call_target(name, capsule, platform="cpu", api_version=1)
                _lapack_registered = True
    return f"lapack_{_LAPACK_PREFIX[dtype.name]}{routine}_ffi"
