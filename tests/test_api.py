"""The meta-package: one public API over the plait packages."""

from __future__ import annotations

import numpy as np

import plait
import plait.numpy as pnp
import plait_core


def test_submodules_are_core_modules() -> None:
    import plait.lax
    import plait.random
    import plait.tree_util

    assert pnp is plait_core.numpy
    assert plait.lax is plait_core.lax
    assert plait.random is plait_core.random
    assert plait.tree_util is plait_core.tree_util


def test_package_versions_name_every_package() -> None:
    assert set(plait.package_versions) == {
        "plait-core", "plait-autodiff", "plait-batching", "plait-masking", "plait-dispatch"
    }


def test_a_jax_style_program_runs() -> None:
    def predict(w: object, b: object, x: object) -> object:
        return pnp.tanh(x @ w + b)  # type: ignore[operator]

    w = np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32)
    b = np.array([0.1, -0.2], np.float32)
    x = np.linspace(0, 1, 12).reshape(4, 3).astype(np.float32)
    expected = np.tanh(x @ w + b)
    np.testing.assert_allclose(np.asarray(predict(w, b, x)), expected, rtol=1e-5)
    closed = plait.make_jaxpr(predict)(w, b, x)
    out = plait.eval_jaxpr(closed.jaxpr, closed.consts, w, b, x)[0]
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)
    assert [e.primitive.name for e in closed.eqns][-1] == "tanh"
