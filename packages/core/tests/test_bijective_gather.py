"""``bijective_gather``: its NumPy implementation and its shape checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from plait_core import ShapedArray, make_jaxpr
from plait_core.primitives.bijective_gather import bijective_gather_p
from plait_core.primitives.indexing_prims import GatherDimensionNumbers

# Five "padded" rows (rows 2 and 4 are not valid) and four "packed" rows (row 3 is not valid):
# packed row 0 is padded row 3, 1 is 0, 2 is 1.
DN = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
IDX = np.array([[3], [0], [1], [4]], np.int32)
VALID = np.array([True, True, True, False])
INV = np.array([[1], [2], [3], [0], [3]], np.int32)
INV_VALID = np.array([True, True, False, True, False])
X = np.arange(15, dtype=np.float32).reshape(5, 3)


def gather(x: Any, masked: bool, **changes: Any) -> Any:
    params: dict[str, Any] = dict(
        dimension_numbers=DN, slice_sizes=(1, 3), inverse_dimension_numbers=DN, inverse_slice_sizes=(1, 3),
        indices_are_sorted=False, masked=masked,
    )  # fmt: skip
    params.update(changes)
    return bijective_gather_p.bind(x, IDX, VALID, INV, INV_VALID, **params)


def test_unmasked_reads_every_row() -> None:
    np.testing.assert_array_equal(np.asarray(gather(X, False)), X[[3, 0, 1, 4]])


def test_masked_zeroes_the_invalid_rows() -> None:
    want = X[[3, 0, 1, 4]].copy()
    want[3] = 0
    np.testing.assert_array_equal(np.asarray(gather(X, True)), want)


def test_the_inverse_gather_reads_the_valid_rows_back() -> None:
    packed = np.asarray(gather(X, True))
    back = bijective_gather_p.bind(
        packed, INV, INV_VALID, IDX, VALID, dimension_numbers=DN, slice_sizes=(1, 3), inverse_dimension_numbers=DN,
        inverse_slice_sizes=(1, 3), indices_are_sorted=False, masked=True,
    )  # fmt: skip
    want = X.copy()
    want[[2, 4]] = 0
    np.testing.assert_array_equal(np.asarray(back), want)


def test_abstract_evaluation_is_the_gathers() -> None:
    jaxpr = make_jaxpr(lambda x: gather(x, False))(X)
    assert jaxpr.out_avals == [ShapedArray((4, 3), np.dtype(np.float32))]
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["bijective_gather"]


def test_valid_must_be_boolean_of_the_batch_shape() -> None:
    with pytest.raises(TypeError, match=r"bijective_gather: valid must be a boolean array of its indices' batch "
                                        r"shape \(4,\), got i32\[4\]"):
        bijective_gather_p.bind(
            X, IDX, VALID.astype(np.int32), INV, INV_VALID, dimension_numbers=DN, slice_sizes=(1, 3),
            inverse_dimension_numbers=DN, inverse_slice_sizes=(1, 3), indices_are_sorted=False, masked=True,
        )  # fmt: skip


def test_the_inverse_must_make_the_operands_shape() -> None:
    with pytest.raises(TypeError, match=r"bijective_gather: the inverse gather makes f32\[5,2\] from the result "
                                        r"f32\[4,3\], not the operand's shape f32\[5,3\]"):
        gather(X, True, inverse_slice_sizes=(1, 2))


def test_params_are_checked() -> None:
    with pytest.raises(TypeError, match="bijective_gather: inverse_dimension_numbers must be a "
                                        "GatherDimensionNumbers, got None"):
        gather(X, True, inverse_dimension_numbers=None)
    with pytest.raises(TypeError, match="bijective_gather: masked and indices_are_sorted must be bools"):
        gather(X, 1)
