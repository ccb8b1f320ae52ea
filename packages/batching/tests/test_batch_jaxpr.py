"""``batch_jaxpr``: batching a closed jaxpr, the mechanism behind the rules
of higher-order primitives."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_batching import AxisData, batch_jaxpr
from plait_core import lax

f32 = np.float32
AXIS = AxisData("i", 4)


def body(x: Any, y: Any) -> Any:
    return lax.mul(x, y), lax.exp(y), np.float32(2)


CLOSED = pc.make_jaxpr(body)(np.zeros(3, f32), np.zeros(3, f32))


@pytest.mark.parametrize(("in_batched", "expected"), [((True, False), [True, False, False]),
                                                      ((False, True), [True, True, False]),
                                                      ((False, False), [False, False, False])])  # fmt: skip
def test_out_batched_follows_the_dependencies(in_batched: tuple[bool, bool], expected: list[bool]) -> None:
    batched, out_b = batch_jaxpr(CLOSED, AXIS, in_batched)
    assert out_b == expected
    pc.check_jaxpr(batched)
    assert [a.shape for a in batched.in_avals] == [(4, 3) if b else (3,) for b in in_batched]
    assert [a.shape for a in batched.out_avals] == [((4,) if b else ()) + s for b, s in zip(out_b, [(3,), (3,), ()])]


def test_values_equal_the_body_per_element() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((4, 3)).astype(f32), rng.standard_normal(3).astype(f32)
    batched, _ = batch_jaxpr(CLOSED, AXIS, (True, False), instantiate=True)
    outs = pc.eval_jaxpr(batched.jaxpr, batched.consts, x, y)
    np.testing.assert_allclose(outs[0], x * y, rtol=1e-6)
    np.testing.assert_allclose(outs[1], np.broadcast_to(np.exp(y), (4, 3)), rtol=1e-6)
    np.testing.assert_array_equal(outs[2], np.full(4, 2, f32))


def test_results_are_memoised() -> None:
    a, _ = batch_jaxpr(CLOSED, AXIS, (True, True))
    b, _ = batch_jaxpr(CLOSED, AXIS, [True, True])
    c, _ = batch_jaxpr(CLOSED, AxisData("i", 5), (True, True))
    assert a is b and a is not c


def test_flag_counts_are_checked() -> None:
    with pytest.raises(ValueError, match=r"batch_jaxpr: in_batched has 1 flags for 2 values"):
        batch_jaxpr(CLOSED, AXIS, (True,))
    with pytest.raises(ValueError, match=r"batch_jaxpr: instantiate has 2 flags for 3 values"):
        batch_jaxpr(CLOSED, AXIS, (True, True), (True, False))
