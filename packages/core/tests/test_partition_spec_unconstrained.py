"""``PartitionSpec.UNCONSTRAINED`` (JAX's: a dimension whose layout the
partitioner may choose; flax.linen's partitioning maps logical axes to it): kept
in specs, naming no mesh axis (plait's partitioner keeps the dimension whole) (issue 25)."""

from __future__ import annotations

import pickle

import pytest

from plait_core.sharding import AbstractMesh, NamedSharding, PartitionSpec

U = PartitionSpec.UNCONSTRAINED


def test_unconstrained_is_a_spec_entry_naming_no_axis() -> None:
    spec = PartitionSpec("x", U, None)
    assert repr(U) == "UNCONSTRAINED" and repr(spec) == "P('x', UNCONSTRAINED, None)"
    assert spec == PartitionSpec("x", U, None) and spec != PartitionSpec("x", None, None)
    assert spec.axis_names_of(1) == () and spec.all_names() == ("x",)
    assert PartitionSpec(U, U) == (U, U)  # may repeat, unlike axis names
    assert pickle.loads(pickle.dumps(spec)) == spec and pickle.loads(pickle.dumps(U)) is U
    sharding = NamedSharding(AbstractMesh((2,), ("x",)), spec)
    assert sharding.spec[1] is U


def test_axis_names_still_may_not_repeat() -> None:
    with pytest.raises(ValueError, match="the mesh axis 'x' is used more than once"):
        PartitionSpec("x", U, "x")
