"""``jax.experimental.mesh_utils``: arrange devices into the array a ``Mesh`` is
made from.

plait runs on XLA CPU devices, which have no physical topology (no torus, no
slices), so as on JAX's CPU backend a mesh is the devices in the order given,
reshaped: ``create_device_mesh((2, 4))`` is ``devices()`` as a 2x4 array.  The
options that choose among physical layouts on TPUs (``contiguous_submeshes``,
``allow_split_physical_axes``) have nothing to choose from and change nothing,
as on JAX's CPU backend.  A hybrid mesh groups devices into granules: with
``process_is_granule=True`` one per process; otherwise by ``slice_index``, an
attribute CPU devices do not have (a ``ValueError`` says so, as JAX's does).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_dispatch import devices as _all_devices

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]

#: Per device kind, a function laying out a mesh on its physical topology (JAX
#: has them for TPU generations).  plait's CPU devices have no topology: none.
device_kind_handler_dict: dict[str, Callable[..., Any]] = {}


def _object_array(devices: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(devices), dtype=object)
    for i, d in enumerate(devices):
        out[i] = d
    return out


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """The devices (default: every device, ``plait.devices()``) as a NumPy
    object array of shape ``mesh_shape``, in their order (row-major).  The
    product of ``mesh_shape`` must be the number of devices (``ValueError``
    otherwise).  ``contiguous_submeshes`` and ``allow_split_physical_axes`` are
    TPU layout choices; CPU devices have no topology, so they change nothing."""
    devs = list(_all_devices() if devices is None else devices)
    shape = tuple(mesh_shape)
    if math.prod(shape) != len(devs) or any(not isinstance(n, int) or n < 0 for n in shape):
        raise ValueError(f"Number of devices {len(devs)} must equal the product of mesh_shape {shape}")
    return _object_array(devs).reshape(shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """A mesh over several granules (slices, or processes with
    ``process_is_granule``): each granule's devices laid out as
    ``create_device_mesh(mesh_shape)``, and the granules tiled in the shape
    ``dcn_mesh_shape`` (dimension ``i`` of the result is
    ``mesh_shape[i] * dcn_mesh_shape[i]``).  The number of granules must be the
    product of ``dcn_mesh_shape``; granules are ordered by their key (process
    index) when ``should_sort_granules_by_key``, else by first appearance."""
    devs = list(_all_devices() if devices is None else devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if devs and not hasattr(devs[0], attr):
        raise ValueError(f"Device {devs[0]} does not have attribute {attr}. See `process_is_granule` option.")
    granules: dict[Any, list[Any]] = {}
    for d in devs:
        granules.setdefault(getattr(d, attr), []).append(d)
    keys = sorted(granules) if should_sort_granules_by_key else list(granules)
    dcn = tuple(dcn_mesh_shape)
    if len(keys) != math.prod(dcn):
        raise ValueError(f"Number of slices {len(keys)} must equal the product of dcn_mesh_shape {dcn}")
    meshes = [create_device_mesh(mesh_shape, granules[k]) for k in keys]
    grid = np.empty(len(meshes), dtype=object)
    for i, m in enumerate(meshes):
        grid[i] = m
    # np.block joins the innermost lists along the last axis, the next along the one before, ...
    return np.block(grid.reshape(dcn).tolist())
