"""``plait.sharding`` has every public name of ``jax.sharding`` (JAX 0.10.2,
recorded here) or lists it as not supported, with why."""

from __future__ import annotations

import pytest

import plait
from plait.sharding import NOT_SUPPORTED

JAX_SHARDING_NAMES = [
    "AbstractDevice", "AbstractMesh", "AxisType", "ManualAxisType", "Mesh", "NamedSharding", "PartitionSpec",
    "Sharding", "SingleDeviceSharding", "auto_axes", "explicit_axes", "get_abstract_mesh", "get_mesh",
    "make_single_device_sharding", "reshard", "set_mesh", "use_abstract_mesh",
]  # fmt: skip


@pytest.mark.parametrize("name", JAX_SHARDING_NAMES)
def test_every_name_is_there_or_says_why(name: str) -> None:
    if name in NOT_SUPPORTED:
        with pytest.raises(AttributeError, match=f"plait.sharding.{name} is not supported: .*explicit-sharding"):
            getattr(plait.sharding, name)
        assert hasattr(plait.sharding, name) is False
    else:
        assert callable(getattr(plait.sharding, name))


def test_abstract_mesh_is_a_mesh_without_devices() -> None:
    mesh = plait.sharding.make_mesh((1,), ("a",))
    assert not isinstance(mesh, plait.sharding.AbstractMesh)
    am = plait.sharding.AbstractMesh((2,), ("a",))
    assert am.axis_types == (plait.sharding.AxisType.Auto,) and am.shape == {"a": 2}
    assert mesh.abstract_mesh == plait.sharding.AbstractMesh((1,), ("a",))
    with pytest.raises(ValueError, match=r"AbstractMesh: 1 axis sizes \(2,\) but 2 names"):
        plait.sharding.AbstractMesh((2,), ("a", "b"))


def test_single_process_sharding_basics() -> None:
    d = plait.devices()[0]
    s = plait.sharding.make_single_device_sharding(d)
    assert s == plait.sharding.SingleDeviceSharding(d) and s.device_set == {d} and s.is_fully_replicated
    x = plait.numpy.arange(4.0)
    assert x.sharding == s and plait.sharding.reshard(x, s).sharding == s
    mesh = plait.sharding.make_mesh((1,), ("a",))
    spec = plait.sharding.P("a")
    assert repr(spec) == "P('a',)" and plait.sharding.PartitionSpec is plait.sharding.P
    with pytest.raises(ValueError, match="the mesh axis 'a' is used more than once"):
        plait.sharding.P("a", "a")
    with pytest.raises(ValueError, match="names the axis 'b', which the mesh does not have"):
        plait.sharding.NamedSharding(mesh, plait.sharding.P("b"))
    assert plait.sharding.get_mesh() is None
    with mesh:
        assert plait.sharding.get_mesh() is mesh
    assert plait.sharding.get_mesh() is None
