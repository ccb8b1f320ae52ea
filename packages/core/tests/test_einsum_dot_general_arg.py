"""einsum's ``_dot_general`` (JAX's private parameter; flax's attention passes it):
each pairwise contraction goes through the given function (issue 25)."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_core import lax


def test_einsum_contracts_through_the_given_dot_general() -> None:
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    b = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    c = np.arange(4.0, dtype=np.float32)
    calls: list[Any] = []

    def doubled(x: Any, y: Any, dims: Any, precision: Any = None, preferred_element_type: Any = None) -> Any:
        calls.append(dims)
        return lax.dot_general(x, y, dims, precision=precision, preferred_element_type=preferred_element_type) * 2

    out = np.asarray(pnp.einsum("ij,jk,k->i", a, b, c, _dot_general=doubled))
    np.testing.assert_allclose(out, 4 * (a @ b @ c))
    assert calls == [(((1,), (0,)), ((), ())), (((1,), (0,)), ((), ()))]


def test_einsum_with_lax_dot_general_is_plain_einsum() -> None:
    a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    out = np.asarray(pnp.einsum("ij,kj->ik", a, a, _dot_general=lax.dot_general))
    np.testing.assert_array_equal(out, a @ a.T)
