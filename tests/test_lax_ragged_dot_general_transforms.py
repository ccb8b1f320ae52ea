"""``lax.ragged_dot_general`` under ``grad``, ``jit`` and ``vmap`` (against the
same products written with NumPy-style slicing), and against JAX 0.10.2 when
``PLAIT_JAX_PYTHON`` names its interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import lax

R = lax.RaggedDotDimensionNumbers
RNG = np.random.default_rng(3)
LHS = RNG.standard_normal((5, 3)).astype(np.float32)
RHS = RNG.standard_normal((2, 3, 4)).astype(np.float32)
SIZES = np.array([2, 3], np.int32)
MODE1 = R((([1], [1]), ([], [])), [0], [0])
MODE2 = R((([0], [0]), ([], [])), [0], [])


def _by_slices(lhs: Any, rhs: Any) -> Any:
    return pnp.concatenate([lhs[:2] @ rhs[0], lhs[2:] @ rhs[1]])


def test_gradients_jit_and_vmap() -> None:
    def loss(f: Any) -> Any:
        return lambda a, b: pnp.sum(pnp.sin(f(a, b)))

    ragged = loss(lambda a, b: lax.ragged_dot_general(a, b, SIZES, MODE1))
    want = plait.grad(loss(_by_slices), argnums=(0, 1))(LHS, RHS)
    got = plait.jit(plait.grad(ragged, argnums=(0, 1)))(LHS, RHS)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)
    batched = plait.vmap(lambda a: lax.ragged_dot_general(a, RHS, SIZES, MODE1))(np.stack([LHS, 2 * LHS]))
    np.testing.assert_allclose(np.asarray(batched[1]), 2 * np.asarray(_by_slices(LHS, RHS)), rtol=1e-5, atol=1e-6)
    # mode 2: per-group products over parts of the contracting dimension
    b2 = RNG.standard_normal((5, 4)).astype(np.float32)
    g = plait.grad(lambda a: pnp.sum(lax.ragged_dot_general(a, b2, SIZES, MODE2)[1]))(LHS)
    want2 = np.zeros_like(LHS)
    want2[2:] = b2[2:].sum(axis=1, keepdims=True)
    np.testing.assert_allclose(np.asarray(g), want2, rtol=1e-5)


def _jax_python() -> str | None:
    path = os.environ.get("PLAIT_JAX_PYTHON")
    return path if path and os.path.exists(path) else None


@pytest.mark.skipif(_jax_python() is None, reason="PLAIT_JAX_PYTHON does not name a JAX interpreter")
def test_against_jax() -> None:
    lhs3, rhs3 = RNG.standard_normal((2, 5, 3)).astype(np.float32), RNG.standard_normal((2, 4, 2, 3)).astype(np.float32)
    lhs2, rhs2 = RNG.standard_normal((2, 4, 5)).astype(np.float32), RNG.standard_normal((2, 5, 3)).astype(np.float32)
    script = textwrap.dedent(f"""
        import json, jax.numpy as jnp
        from jax import lax
        R = lax.RaggedDotDimensionNumbers
        g = jnp.array({SIZES.tolist()}, jnp.int32)
        o1 = lax.ragged_dot_general(jnp.array({lhs3.tolist()}, jnp.float32), jnp.array({rhs3.tolist()}, jnp.float32),
                                    g, R((([2], [3]), ([0], [0])), [1], [2]))
        o2 = lax.ragged_dot_general(jnp.array({lhs2.tolist()}, jnp.float32), jnp.array({rhs2.tolist()}, jnp.float32),
                                    g, R((([2], [1]), ([0], [0])), [2], []))
        print(json.dumps({{"o1": o1.tolist(), "o2": o2.tolist()}}))
    """)
    out = subprocess.run([_jax_python() or "", "-c", script], capture_output=True, text=True, check=True)
    want = json.loads(out.stdout.strip().splitlines()[-1])
    o1 = lax.ragged_dot_general(lhs3, rhs3, SIZES, R((([2], [3]), ([0], [0])), [1], [2]))
    o2 = lax.ragged_dot_general(lhs2, rhs2, SIZES, R((([2], [1]), ([0], [0])), [2], []))
    np.testing.assert_allclose(np.asarray(o1), want["o1"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(o2), want["o2"], rtol=1e-5, atol=1e-6)
