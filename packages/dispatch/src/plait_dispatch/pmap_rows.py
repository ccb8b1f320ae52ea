"""``pmap`` across processes: this process's rows and the run's global arrays.

In a run of several processes (``plait.distributed``) the mapped axis of
``pmap`` spans the devices of every process, as in JAX: each process passes
the rows of its own devices (the mapped axis has one entry per local device
of the mapping) and gets back the rows its devices computed, while the
program is one SPMD program over the global device list, so collectives,
``axis_index`` and ``ppermute`` see every device of every process.

:func:`to_global` turns one argument leaf (this process's rows) into a global
Array laid out one row per device of the mapping (without a copy when the
rows already lie on their devices, e.g. the result of an earlier ``pmap``);
:func:`to_local` turns a global result back into this process's Array of
its own rows, laid out over its own devices.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from plait_core import ShapedArray, get_aval, to_numpy
from plait_core.sharding import Index, Mesh, NamedSharding, PartitionSpec
from plait_dispatch import _jaxlib
from plait_dispatch.array import Array
from plait_dispatch.sharded import jaxlib_sharding

__all__ = ["is_cross_process", "to_global", "to_local"]


def is_cross_process(devices: Sequence[Any]) -> bool:
    """Whether ``devices`` include a device of another process."""
    me = _jaxlib.process_index()
    return any(d.process_index != me for d in devices)


def _spec(axis: int | None, name: Hashable) -> PartitionSpec:
    return PartitionSpec() if axis is None else PartitionSpec(*([None] * axis), name)


def _row_index(shape: tuple[int, ...], axis: int | None, k: int) -> Index:
    """The slices of row ``k`` along ``axis`` (everything when ``axis`` is None)."""
    return tuple(slice(k, k + 1) if d == axis else slice(None) for d in range(len(shape)))


def _same_index(a: Index, b: Index, shape: tuple[int, ...]) -> bool:
    return all(s.indices(n) == t.indices(n) for s, t, n in zip(a, b, shape))


def to_global(x: Any, axis: int | None, mesh: Mesh, local: Sequence[Any], where: str) -> Array:
    """This process's leaf ``x`` as a global Array over ``mesh`` (one axis).

    With ``axis`` (counted from the front) row ``k`` of ``x`` goes to the
    ``k``-th device of ``local`` (this process's devices of the mapping, in
    the mapping's order) and the global array has one row per device of the
    mapping; with ``None`` every device holds the whole ``x`` (each process
    passes the same value, as JAX assumes)."""
    aval = get_aval(x, f"an argument of {where}")
    shape = tuple(int(n) for n in aval.shape)
    (name,) = mesh.axis_names
    devs = list(mesh.devices.flat)
    global_shape = shape if axis is None else tuple(len(devs) if d == axis else n for d, n in enumerate(shape))
    sharding = NamedSharding(mesh, _spec(axis, name))
    jsharding = jaxlib_sharding(sharding, len(shape))
    global_aval = ShapedArray(global_shape, aval.dtype, aval.weak_type)
    wanted = [_row_index(shape, axis, k) for k in range(len(local))]
    if type(x) is Array and x._device is None:
        # The rows already on their devices (an earlier pmap's result): reuse the buffers.
        by_device = {s.device: s for s in x.addressable_shards}
        shards = [by_device.get(d) for d in local]
        if all(s is not None and _same_index(s.index, idx, shape) for s, idx in zip(shards, wanted)):
            bufs = [s.data._live_buffer(f"pass it to {where}") for s in shards if s is not None]
            return Array._multi(_jaxlib.assemble(global_aval, jsharding, bufs), global_aval, sharding)
    value = x._value(f"pass it to {where}") if type(x) is Array else to_numpy(x, aval.dtype)
    pieces = [np.ascontiguousarray(value[idx]) for idx in wanted]
    return Array._multi(_jaxlib.put_shards(global_aval, jsharding, pieces, list(local)), global_aval, sharding)


def to_local(out: Any, local: Sequence[Any], where: str) -> Array:
    """This process's rows of the global result ``out`` (an Array laid out
    over a one-axis mesh), as an Array over ``local``: the mapped axis has
    one row per local device; an unmapped (replicated) result keeps its
    shape."""
    sharding = out.sharding
    if not isinstance(sharding, NamedSharding) or len(sharding.mesh.axis_names) != 1:
        raise TypeError(f"{where}: internal error: a result laid out as {sharding!r}, not over the pmap axis")
    (name,) = sharding.mesh.axis_names
    spec = tuple(sharding.spec)
    axis = spec.index(name) if name in spec else None
    shape = tuple(len(local) if d == axis else n for d, n in enumerate(out.shape))
    local_sharding = NamedSharding(Mesh(np.array(list(local), dtype=object), (name,)), sharding.spec)
    aval = ShapedArray(shape, out.aval.dtype, out.aval.weak_type)
    by_device = {s.device: s.data for s in out.addressable_shards}
    bufs = [by_device[d]._live_buffer(f"read the result of {where}") for d in local]
    buf = _jaxlib.assemble(aval, jaxlib_sharding(local_sharding, len(shape)), bufs)
    return Array._multi(buf, aval, local_sharding)
