"""``register_vmappable``: a user type says how it splits into elements and
how it is rebuilt, selected by an integer axis or by its own spec object."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_batching import register_vmappable, vmap
from plait_core import lax

f32 = np.float32


class Columns:
    """A batch kept column-wise: element ``b`` is ``data[:, b]``, with a label."""

    def __init__(self, data: Any, label: str = "") -> None:
        self.data, self.label = data, label


class ColumnAxis:
    def __repr__(self) -> str:
        return "column_axis"


column_axis = ColumnAxis()


def _size(c: Columns, spec: Any) -> Any:
    return c.data.shape[1]


def _to_elt(c: Columns, spec: Any, wrap: Any) -> Any:
    return {"values": wrap(c.data, 1), "label": c.label}


def _from_elt(elt: Any, spec: Any, size: Any, unwrap: Any) -> Columns:
    return Columns(unwrap(elt, 1), "rebuilt")


register_vmappable(Columns, ColumnAxis, _size, _to_elt, _from_elt)
DATA = np.random.default_rng(0).standard_normal((3, 4)).astype(f32)


def test_a_vmappable_argument_is_split_by_its_type() -> None:
    out = vmap(lambda e: lax.reduce_sum(e["values"], (0,)), in_axes=column_axis)(Columns(DATA, "x"))
    np.testing.assert_allclose(out, DATA.sum(0), rtol=1e-6)
    out = vmap(lambda e: lax.reduce_sum(e["values"], (0,)))(Columns(DATA))  # an int spec works too
    np.testing.assert_allclose(out, DATA.sum(0), rtol=1e-6)


def test_elements_see_the_unmapped_parts() -> None:
    labels = []
    vmap(lambda e: labels.append(e["label"]) or e["values"])(Columns(DATA, "x"))
    assert labels == ["x"]


def test_a_vmappable_result_is_rebuilt_by_its_type() -> None:
    out = vmap(lambda x: lax.mul(x, 2.0), in_axes=1, out_axes=column_axis)(DATA)
    assert isinstance(out, Columns) and out.label == "rebuilt"
    np.testing.assert_allclose(out.data, DATA * 2)
    out = vmap(lambda e: (e["values"], np.float32(1)), in_axes=column_axis, out_axes=(column_axis, 0))(Columns(DATA))
    np.testing.assert_allclose(out[0].data, DATA)
    np.testing.assert_allclose(out[1], np.ones(4, f32))


def test_vmappable_sizes_join_the_consistency_check() -> None:
    with pytest.raises(ValueError, match=r"(?s)inconsistent sizes.*argument c of type Columns has size 4.*argument x"):
        vmap(lambda c, x: x)(Columns(DATA), np.zeros(3, f32))


def test_a_spec_object_for_a_value_of_another_type() -> None:
    with pytest.raises(TypeError, match=r"in_axes entry column_axis for argument x maps values of type Columns"):
        vmap(lambda x: x, in_axes=column_axis)(DATA)


def test_to_elt_wrapping_an_axis_of_the_wrong_size() -> None:
    class Bad:
        data = DATA

    register_vmappable(Bad, None, lambda v, s: 5, lambda v, s, wrap: wrap(v.data, 0), _from_elt)
    with pytest.raises(ValueError, match=r"to_elt of Bad .* f32\[3,4\] along axis 0, which is not an axis of size 5"):
        vmap(lambda e: e)(Bad())


def test_register_vmappable_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match=r"register_vmappable: to_elt must be callable"):
        register_vmappable(Columns, ColumnAxis, _size, None, _from_elt)  # type: ignore[arg-type]
