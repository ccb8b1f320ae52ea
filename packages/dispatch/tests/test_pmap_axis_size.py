"""``pmap(axis_size=...)`` as JAX 0.10.2's: a check of the mapped size (equinox's
``filter_pmap`` passes it with a mapped dummy argument), a mismatch a ValueError,
and a call with no mapped argument still refused; ``global_arg_shapes`` stays not
supported."""

from __future__ import annotations

import numpy as np
import pytest

import plait_dispatch as pd


def test_axis_size_equal_to_the_mapped_size_runs() -> None:
    out = pd.pmap(lambda x, y: x + y, in_axes=(0, None), axis_size=1)(np.ones((1, 2), np.float32), np.float32(3.0))
    np.testing.assert_array_equal(np.asarray(out), np.full((1, 2), 4.0, np.float32))


def test_axis_size_differing_from_the_mapped_size_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="the specified axis_size 2 does not match the mapped arguments' size 1"):
        pd.pmap(lambda x: x, axis_size=2)(np.ones((1,), np.float32))


def test_no_mapped_argument_is_refused_even_with_axis_size() -> None:
    with pytest.raises(ValueError, match="no argument is mapped"):
        pd.pmap(lambda x: x, in_axes=None, axis_size=1)(np.ones((2,), np.float32))


def test_global_arg_shapes_is_not_supported() -> None:
    with pytest.raises(NotImplementedError, match="not supported"):
        pd.pmap(lambda x: x, global_arg_shapes=((1,),))
