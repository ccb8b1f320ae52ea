"""``is_fully_replicated`` of a NamedSharding over an abstract mesh (a type's sharding,
``typeof(x).sharding``; chex's tree asserts read it) answers as JAX's instead of
raising for want of devices (issue 25)."""

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
