"""A Python int converted to an explicit dtype is checked against that dtype, not
against the default int32 (issue 25: flax's ``jnp.uint32(hash)`` in ``Scope``)."""

from __future__ import annotations

import numpy as np
import pytest

import plait_core as pc
import plait_core.numpy as pnp
from plait_core import lax


@pytest.mark.parametrize("make", [
    lambda v: pnp.uint32(v),
    lambda v: pnp.array(v, dtype=np.uint32),
    lambda v: pnp.asarray(v, dtype=pnp.uint32),
    lambda v: lax.convert_element_type(v, np.uint32),
])
def test_int_above_int32_into_uint32(make) -> None:  # type: ignore[no-untyped-def]
    x = make(3213575472)
    assert pc.get_aval(x) == pc.ShapedArray((), np.dtype(np.uint32), False)
    assert int(np.asarray(x)) == 3213575472


def test_int_above_int32_into_float32_and_when_staged() -> None:
    assert float(np.asarray(pnp.float32(3213575472))) == float(np.float32(3213575472))
    closed = pc.make_jaxpr(lambda x: x + pnp.uint32(4294967295))(np.uint32(1))
    assert closed.out_avals == [pc.ShapedArray((), np.dtype(np.uint32), False)]


def test_int_out_of_the_target_range_is_refused() -> None:
    with pytest.raises(OverflowError, match="Python int 4294967296 does not fit in uint32"):
        pnp.uint32(2**32)
    with pytest.raises(OverflowError, match="Python int -1 does not fit in uint32"):
        pnp.uint32(-1)
    with pytest.raises(OverflowError, match="Python int 3213575472 does not fit in int32"):
        pnp.array(3213575472)
