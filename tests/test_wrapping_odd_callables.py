"""Transformations of callables whose attributes are not a function's (an
equinox Module's ``__name__`` may be a property returning a non-string): JAX
copies what it can onto its wrapper and goes on; so does plait."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp


class Doubler:
    """A callable whose ``__name__`` is not a string."""

    @property
    def __name__(self) -> Any:  # type: ignore[override]
        return 3

    __doc__ = "doubles"

    def __call__(self, x: Any) -> Any:
        return x * 2.0


@pytest.mark.parametrize("transform", [plait.vmap, plait.jit, plait.jacfwd, plait.jacrev])
def test_transformations_wrap_it(transform: Any) -> None:
    f = transform(Doubler())
    x = np.ones(3, np.float32)
    out = np.asarray(f(x))
    want = {plait.vmap: x * 2, plait.jit: x * 2}.get(transform, 2 * np.eye(3, dtype=np.float32))
    np.testing.assert_allclose(out, want)
    assert f.__wrapped__.__class__ is Doubler
    assert f.__doc__ == "doubles"


def test_grad_and_value_and_grad_wrap_it() -> None:
    d = Doubler()
    g = plait.grad(lambda x: pnp.sum(d(x)))
    np.testing.assert_allclose(np.asarray(plait.grad(d)(np.float32(1.0))), 2.0)
    np.testing.assert_allclose(np.asarray(g(np.ones(2, np.float32))), [2.0, 2.0])
    v, gr = plait.value_and_grad(d)(np.float32(3.0))
    assert float(v) == 6.0 and float(gr) == 2.0
