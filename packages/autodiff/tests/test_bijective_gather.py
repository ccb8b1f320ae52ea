"""``bijective_gather`` under differentiation: its tangent and cotangent are
zero at the invalid positions, and its transpose is the inverse gather (no
``scatter_add``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from plait_autodiff import grad, jacfwd, jvp, vjp
from plait_core import make_jaxpr
from plait_core.primitives.bijective_gather import bijective_gather_p
from plait_core.primitives.indexing_prims import GatherDimensionNumbers

# Five rows (2 and 4 not valid) to four (3 not valid): row 0 <- 3, 1 <- 0, 2 <- 1; row 3 reads row 4.
DN = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
IDX, VALID = np.array([[3], [0], [1], [4]], np.int32), np.array([True, True, True, False])
INV, INV_VALID = np.array([[1], [2], [3], [0], [3]], np.int32), np.array([True, True, False, True, False])
X = np.arange(15, dtype=np.float32).reshape(5, 3) / 7


def unpacked(x: Any) -> Any:
    return bijective_gather_p.bind(
        x, IDX, VALID, INV, INV_VALID, dimension_numbers=DN, slice_sizes=(1, 3), inverse_dimension_numbers=DN,
        inverse_slice_sizes=(1, 3), indices_are_sorted=True, masked=False,
    )  # fmt: skip


def test_the_tangent_is_zero_at_invalid_positions() -> None:
    t = np.ones_like(X)
    out, tangent = jvp(unpacked, (X,), (t,))
    np.testing.assert_array_equal(np.asarray(out), X[[3, 0, 1, 4]])  # the primal reads every row
    np.testing.assert_array_equal(np.asarray(tangent), np.array([[1] * 3] * 3 + [[0] * 3], np.float32))


def test_the_cotangent_reaches_only_valid_rows() -> None:
    ct = np.arange(12, dtype=np.float32).reshape(4, 3) + 1
    _, pullback = vjp(unpacked, X)
    (got,) = pullback(ct)
    want = np.zeros((5, 3), np.float32)
    want[3], want[0], want[1] = ct[0], ct[1], ct[2]
    np.testing.assert_array_equal(np.asarray(got), want)


def test_grad_and_jacfwd_agree() -> None:
    def f(x: Any) -> Any:
        return (unpacked(x) ** 2).sum()

    g = np.asarray(grad(f)(X))
    np.testing.assert_allclose(g, np.asarray(jacfwd(f)(X)), rtol=1e-6)
    want = 2 * X.copy()
    want[[2, 4]] = 0
    np.testing.assert_allclose(g, want, rtol=1e-6)


def test_the_transpose_is_a_gather() -> None:
    jaxpr = make_jaxpr(grad(lambda x: (unpacked(x) * np.float32(3)).sum()))(X)
    names = [e.primitive.name for e in jaxpr.jaxpr.eqns]
    assert "bijective_gather" in names and not any(n.startswith("scatter") for n in names), names
    (back,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "bijective_gather" and e.params["masked"]]
    assert str(back.outvars[0].aval) == "f32[5,3]"  # from the result's shape back to the operand's
