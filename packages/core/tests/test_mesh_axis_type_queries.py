"""``are_all_axes_explicit`` / ``auto`` / ``manual`` of a mesh (flax.nnx's layers
ask the abstract mesh), each False for a mesh without axes, as JAX 0.10.2's (issue 25)."""

from __future__ import annotations

import pytest

from plait_core.sharding import AbstractMesh, AxisType

E, A, M = AxisType.Explicit, AxisType.Auto, AxisType.Manual


@pytest.mark.parametrize(("types", "expected"), [
    # (explicit, auto, manual, auto-or-manual, explicit-or-manual), as JAX 0.10.2 answers
    ((), (False, False, False, False, False)),
    ((E,), (True, False, False, False, True)),
    ((A,), (False, True, False, True, False)),
    ((M,), (False, False, True, True, True)),
    ((E, A), (False, False, False, False, False)),
    ((E, M), (False, False, False, False, True)),
    ((A, M), (False, False, False, True, False)),
])
def test_axis_type_queries(types: tuple[AxisType, ...], expected: tuple[bool, ...]) -> None:
    mesh = AbstractMesh((2,) * len(types), tuple("xyz"[: len(types)]), axis_types=types)
    got = (mesh.are_all_axes_explicit, mesh.are_all_axes_auto, mesh.are_all_axes_manual,
           mesh._are_all_axes_auto_or_manual, mesh._are_all_axes_explicit_or_manual)
    assert got == expected
