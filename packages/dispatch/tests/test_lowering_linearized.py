"""The linear primitives of linearized programs, lowered through their
implementations: ``invertible_lin`` (forward-mode differentiation of the
invertible body, which plait-autodiff installs) and ``custom_lin`` (an error,
as when evaluated eagerly)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_lowering_harness import F32, check_closed, numpy_backend, sample, stage

import plait_core as pc
from plait_core import ShapedArray, lax
from plait_dispatch.lowering import lower_jaxpr

ad_helpers = pytest.importorskip("plait_core.primitives.ad_helpers")
custom_lin_p = getattr(ad_helpers, "custom_lin_p", None)
invertible_lin_p = getattr(ad_helpers, "invertible_lin_p", None)


@pytest.mark.skipif(custom_lin_p is None, reason="this plait-core has no custom_lin")
def test_custom_lin_cannot_run_forwards() -> None:
    aval = ShapedArray((3,), F32)

    def linear(r: Any, t: Any) -> Any:
        assert custom_lin_p is not None
        return custom_lin_p.bind(r, t, num_res=1, bwd=lambda *a: a, out_avals=(aval,), in_nonzeros=(True,))

    closed = stage(linear, np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"can't apply forward-mode differentiation \(jvp\) to a custom_vjp function"):
        lower_jaxpr(closed)


def _linearized_invertible() -> tuple[pc.ClosedJaxpr, list[np.ndarray]]:
    autodiff = pytest.importorskip("plait_autodiff")
    w = sample(F32, (3,), 0.5, 2, seed=3)
    f = pc.invertible(lambda x, y: (lax.add(lax.mul(x, w), y), lax.mul(y, 2.0)))
    x, y = sample(F32, (3,), seed=1), sample(F32, (3,), seed=2)
    with numpy_backend():
        _, f_jvp = autodiff.linearize(f, x, y)
    tx, ty = sample(F32, (3,), seed=4), sample(F32, (3,), seed=5)
    return stage(f_jvp, tx, ty), [tx, ty]


@pytest.mark.skipif(invertible_lin_p is None, reason="this plait-core has no invertible_lin")
def test_invertible_lin_with_autodiff() -> None:
    closed, args = _linearized_invertible()
    assert any(e.primitive is invertible_lin_p for e in closed.eqns)
    check_closed(closed, *args)
