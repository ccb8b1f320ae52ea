"""eval_shape of a function that returns ShapeDtypeStructs itself (issue 25: lineax
describes its operators' outputs so): they are abstract values, returned as given."""

from __future__ import annotations

import numpy as np
import pytest

import plait_core as pc
import plait_core.numpy as pnp


def test_struct_outputs_are_returned_as_given() -> None:
    s = pc.ShapeDtypeStruct((2, 3), np.dtype(np.int32), weak_type=True)
    out = pc.eval_shape(lambda x: (x * 2, s, {"b": pnp.ones((4,)), "s": s}), np.float32(1))
    assert out[1] is s and out[2]["s"] is s
    assert out[0] == pc.ShapeDtypeStruct((), np.dtype(np.float32))
    assert out[2]["b"] == pc.ShapeDtypeStruct((4,), np.dtype(np.float32))


def test_struct_output_alone_and_cached() -> None:
    s = pc.ShapeDtypeStruct((5,), np.dtype(np.float32))

    def f(x):  # type: ignore[no-untyped-def]
        return pc.ShapeDtypeStruct(x.shape, x.dtype)

    first = pc.eval_shape(f, np.ones(5, np.float32))
    assert first == s and pc.eval_shape(f, np.ones(5, np.float32)) == s


def test_other_non_array_outputs_are_still_refused() -> None:
    with pytest.raises(TypeError, match=r"output leaf 0 .* has type str, which is not an array"):
        pc.eval_shape(lambda x: "a", 1.0)
