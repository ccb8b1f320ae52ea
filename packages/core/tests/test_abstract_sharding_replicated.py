"""``is_fully_replicated`` of a NamedSharding over an abstract mesh (a type's sharding,
``typeof(x).sharding``; chex's tree asserts read it) answers as JAX's instead of
raising for want of devices; ``NamedSharding.update`` (flax's partitioning) (issue 25)."""

from __future__ import annotations

import pytest

from plait_core.sharding import AbstractMesh, NamedSharding, PartitionSpec


@pytest.mark.parametrize(("spec", "replicated"), [
    (PartitionSpec(), True),
    (PartitionSpec(None, None), True),
    (PartitionSpec("a"), False),
    (PartitionSpec(None, "a"), False),
    (PartitionSpec("b"), True),  # an axis of size 1 splits nothing
    (PartitionSpec(("a", "b")), False),
])
def test_abstract_mesh_replication(spec: PartitionSpec, replicated: bool) -> None:
    sharding = NamedSharding(AbstractMesh((2, 1), ("a", "b")), spec)
    assert sharding.is_fully_replicated is replicated


def test_abstract_mesh_still_has_no_devices() -> None:
    sharding = NamedSharding(AbstractMesh((2,), ("a",)), PartitionSpec("a"))
    with pytest.raises(ValueError, match="refers to an abstract mesh, which has no devices"):
        _ = sharding.device_set


def test_update_replaces_the_given_fields() -> None:
    mesh = AbstractMesh((2, 1), ("a", "b"))
    sharding = NamedSharding(mesh, PartitionSpec("a"))
    assert sharding.update(spec=PartitionSpec("b")) == NamedSharding(mesh, PartitionSpec("b"))
    other = AbstractMesh((4,), ("a",))
    moved = sharding.update(mesh=other, memory_kind="device")
    assert moved.mesh == other and moved.spec == PartitionSpec("a") and moved.memory_kind == "device"
    assert sharding.update().spec == PartitionSpec("a") and sharding.memory_kind is None
    with pytest.raises(TypeError, match=r"NamedSharding.update: unexpected keyword\(s\) \['foo'\]"):
        sharding.update(foo=1)
