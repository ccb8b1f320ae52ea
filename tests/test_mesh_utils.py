"""``plait.experimental.mesh_utils`` (``jax.experimental.mesh_utils``): devices
arranged as a mesh in their order, with JAX 0.10.2's CPU semantics and errors (issue 25)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pytest

import plait
from plait.experimental import mesh_utils


@dataclass(frozen=True)
class FakeDevice:
    """A stand-in device: the arrangement only reads ids and process indices."""

    id: int
    process_index: int = 0

    def __str__(self) -> str:
        return f"fake:{self.id}"


DEVICES = [FakeDevice(i, process_index=i // 4) for i in range(8)]


def ids(mesh: np.ndarray) -> list[object]:
    return np.vectorize(lambda d: d.id, otypes=[int])(mesh).tolist()


def test_create_device_mesh_reshapes_devices_in_order() -> None:
    mesh = mesh_utils.create_device_mesh((2, 4), DEVICES)
    assert mesh.dtype == object and mesh.shape == (2, 4)
    assert ids(mesh) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert ids(mesh_utils.create_device_mesh([2, 2], DEVICES[4:])) == [[4, 5], [6, 7]]
    assert ids(mesh_utils.create_device_mesh((2, 4), DEVICES[::-1], contiguous_submeshes=True)) == [
        [7, 6, 5, 4], [3, 2, 1, 0]]
    assert mesh_utils.create_device_mesh((2, 2, 2), DEVICES).shape == (2, 2, 2)


def test_create_device_mesh_defaults_to_every_device() -> None:
    devices = plait.devices()
    mesh = mesh_utils.create_device_mesh((len(devices),))
    assert list(mesh) == list(devices)
    assert plait.sharding.Mesh(mesh, ("x",)).shape == {"x": len(devices)}


@pytest.mark.parametrize("shape", [(3,), (16,), (2, -4)])
def test_create_device_mesh_needs_one_device_per_place(shape: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=re.escape(f"Number of devices 8 must equal the product of mesh_shape {shape}")):
        mesh_utils.create_device_mesh(shape, DEVICES)


def test_hybrid_mesh_tiles_granules() -> None:
    mesh = mesh_utils.create_hybrid_device_mesh((2, 2), (1, 2), DEVICES, process_is_granule=True)
    assert ids(mesh) == [[0, 1, 4, 5], [2, 3, 6, 7]]  # process 0's 2x2 beside process 1's
    mesh = mesh_utils.create_hybrid_device_mesh((2, 2), (2, 1), DEVICES, process_is_granule=True)
    assert ids(mesh) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    one = mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), DEVICES[:4] + DEVICES[:4], process_is_granule=True)
    assert one.shape == (2, 4)


def test_hybrid_mesh_errors_are_jaxs() -> None:
    with pytest.raises(ValueError, match=r"Number of slices 2 must equal the product of dcn_mesh_shape \(1, 1\)"):
        mesh_utils.create_hybrid_device_mesh((2, 2), (1, 1), DEVICES, process_is_granule=True)
    with pytest.raises(ValueError, match=r"Device fake:0 does not have attribute slice_index\. See `process_is_granule`"):
        mesh_utils.create_hybrid_device_mesh((2, 2), (1, 2), DEVICES)
    assert mesh_utils.device_kind_handler_dict == {}


def test_make_mesh_takes_axis_types_third_positionally() -> None:
    # JAX 0.10.2: make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) (flax's spmd tests)
    explicit = plait.sharding.AxisType.Explicit
    mesh = plait.make_mesh((1,), ("x",), (explicit,))
    assert mesh.axis_types == (explicit,) and mesh.shape == {"x": 1}
    with pytest.raises(TypeError, match="positional"):
        plait.make_mesh((1,), ("x",), (explicit,), plait.devices())  # type: ignore[misc]
