"""plait.random draws bit for bit as JAX 0.10.2 on XLA: against the recorded
table (``random_cases.py``), and against a live JAX run when ``PLAIT_JAX_PYTHON``
names an interpreter that can import JAX 0.10.2.  Typed keys under jit, vmap,
scan and grad."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import random_cases as cases

import plait
from plait import random

RECORDED = json.loads(cases.TABLE.read_text())
TABLE = RECORDED["cases"]

# Cases cheap to compile, drawn exactly (XLA computes as in JAX).  The others are
# checked by plait-core's table test (integers exactly, floats to a few ulps).
EXACT = [
    "PRNGKey", "PRNGKey_arrays", "key_data", "split", "split_typed", "fold_in", "fold_in_typed", "bits32",
    "bits8", "uniform", "uniform_bounds", "uniform_f16", "normal", "normal_typed", "truncated_normal",
    "bernoulli", "gumbel", "gumbel_highest", "exponential", "categorical", "permutation_int", "choice_noreplace", "laplace",
    "logistic", "cauchy", "rademacher", "gamma", "pareto", "geometric",
]
EXPR = dict(cases.CASES)


def _draw(name: str) -> Any:
    return cases.encode(eval(EXPR[name], {"random": random, "np": np}))


@pytest.mark.parametrize("name", EXACT)
def test_bit_for_bit_with_recorded_jax(name: str) -> None:
    assert _draw(name) == TABLE[name], cases.decode(TABLE[name])


X64_EXACT = ["x64_PRNGKey", "x64_split", "x64_bits", "x64_uniform", "x64_normal", "x64_randint"]


@pytest.mark.parametrize("name", X64_EXACT)
def test_bit_for_bit_with_recorded_jax_in_x64(name: str) -> None:
    with plait.enable_x64():
        got = cases.encode(eval(dict(cases.X64_CASES)[name], {"random": random, "np": np}))
    assert got == RECORDED["x64_cases"][name], cases.decode(RECORDED["x64_cases"][name])


@pytest.mark.parametrize("name,expr", cases.GRAD_CASES, ids=[n for n, _ in cases.GRAD_CASES])
def test_shape_parameter_gradients_match_jax(name: str, expr: str) -> None:
    got = np.asarray(eval(expr, {"random": random, "np": np, "grad": plait.grad}))
    want = cases.decode(RECORDED["grad_cases"][name])
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)


def _jax_python() -> str | None:
    path = os.environ.get("PLAIT_JAX_PYTHON")
    if not path:
        return None
    probe = subprocess.run([path, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True)
    return path if probe.returncode == 0 and probe.stdout.strip() == "0.10.2" else None


@pytest.mark.skipif(_jax_python() is None, reason="PLAIT_JAX_PYTHON does not name a JAX 0.10.2 interpreter")
def test_recorded_table_is_what_jax_draws_now() -> None:
    python = _jax_python()
    assert python is not None
    script = Path(cases.__file__)
    out = subprocess.run([python, str(script), "-"], capture_output=True, text=True, check=True, cwd=script.parent)
    live_table = json.loads(out.stdout)
    assert live_table["names"] == RECORDED["names"]
    live = live_table["cases"]
    assert live == TABLE
    assert live_table["x64_cases"] == RECORDED["x64_cases"]
    assert live_table["grad_cases"] == RECORDED["grad_cases"]
    for name in EXACT[:8]:
        assert _draw(name) == live[name]


def test_every_jax_random_name_is_implemented_or_listed() -> None:
    missing = [n for n in RECORDED["names"] if not hasattr(random, n) and n not in random.NOT_SUPPORTED]
    assert missing == []


def test_typed_key_shapes_and_data() -> None:
    key = random.key(42)
    assert key.shape == () and key.ndim == 0 and str(key.dtype) == "key<fry>"
    np.testing.assert_array_equal(np.asarray(random.key_data(key)), np.asarray(random.PRNGKey(42)))
    keys = random.split(key, 4)
    assert keys.shape == (4,) and len(keys) == 4
    assert random.split(key, (2, 3)).shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(random.key_data(keys)), np.asarray(random.split(random.PRNGKey(42), 4)))
    k1, k2 = random.split(key)
    np.testing.assert_array_equal(np.asarray(random.key_data(k2)), np.asarray(random.key_data(keys[1:2]))[0])
    wrapped = random.wrap_key_data(random.key_data(keys))
    assert wrapped.shape == (4,) and bool(np.all(np.asarray(wrapped == keys)))
    assert random.key_impl(key) == "threefry2x32" and random.key_impl(random.PRNGKey(0)) == "threefry2x32"
    assert random.key_dtype() == key.dtype
    np.testing.assert_array_equal(np.asarray(random.normal(k1, (3,))), np.asarray(random.normal(keys[0], (3,))))


def test_key_errors_match_jax() -> None:
    with pytest.raises(ValueError, match=r"random\.uniform accepts a single key, but was given a key array of shape \(2,\)"):
        random.uniform(random.split(random.key(0)), (2,))
    with pytest.raises(TypeError, match=r"random\.uniform: invalid PRNG key data: .* got f32\[2\]"):
        random.uniform(np.zeros(2, np.float32), (2,))
    with pytest.raises(TypeError, match=r"random\.key accepts a scalar seed, but was given an array of shape \(2,\)"):
        random.key(np.array([1, 2]))
    with pytest.raises(TypeError, match=r"random\.PRNGKey: the seed must be an integer"):
        random.PRNGKey(1.0)
    with pytest.raises(ValueError, match=r"random\.bits: dtype argument must be an unsigned int dtype, got int32"):
        random.bits(random.key(0), (2,), np.int32)
    with pytest.raises(ValueError, match=r"random\.key: unknown PRNG implementation 'rbg'"):
        random.key(0, impl="rbg")
    with pytest.raises(OverflowError, match=r"random\.fold_in: data -1 is out of bounds for uint32"):
        random.fold_in(random.key(0), -1)


def test_typed_keys_under_jit_vmap_and_scan() -> None:
    key = random.key(3)
    jitted = plait.jit(lambda k: (random.split(k), random.uniform(k, (3,))))
    keys, u = jitted(key)
    assert isinstance(keys, random.PRNGKeyArray) and keys.shape == (2,)
    np.testing.assert_array_equal(np.asarray(random.key_data(keys)), np.asarray(random.key_data(random.split(key))))
    np.testing.assert_array_equal(np.asarray(u), np.asarray(random.uniform(key, (3,))))
    batch = random.split(key, 3)
    drawn = plait.vmap(lambda k: random.normal(k, (2,)))(batch)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(drawn)[i], np.asarray(random.normal(batch[i], (2,))))

    def step(k: Any, _: Any) -> Any:
        k, sub = random.split(k)
        return k, random.uniform(sub)

    _, xs = plait.lax.scan(step, key, None, length=3)
    k, want = key, []
    for _ in range(3):
        k, sub = random.split(k)
        want.append(np.asarray(random.uniform(sub)))
    np.testing.assert_array_equal(np.asarray(xs), np.asarray(want))


def test_keys_are_not_differentiable_but_ride_along_grad() -> None:
    key = random.key(5)

    def loss(w: Any, k: Any) -> Any:
        return (w * random.normal(k, (3,))).sum()

    g = plait.grad(loss)(np.float32(2.0), key)
    np.testing.assert_allclose(np.asarray(g), np.asarray(random.normal(key, (3,))).sum(), rtol=1e-6)
    _, vjp_fun = plait.vjp(loss, np.float32(2.0), random.PRNGKey(5))
    _, key_cotangent = vjp_fun(np.float32(1.0))
    assert np.asarray(key_cotangent).dtype == plait.float0


def test_differentiating_with_respect_to_a_key_is_refused_and_float0_tangents_work() -> None:
    key = random.key(0)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        plait.grad(lambda k: random.normal(k))(key)
    zero_tangent = random.PRNGKeyArray(np.zeros(2, plait.float0))
    _, t = plait.jvp(lambda x, k: x * random.normal(k), (np.float32(1.0), key), (np.float32(1.0), zero_tangent))
    np.testing.assert_array_equal(np.asarray(t), np.asarray(random.normal(key)))


def test_fold_in_under_vmap() -> None:
    key = random.key(0)
    folded = plait.vmap(lambda i: random.key_data(random.fold_in(key, i)))(np.arange(3, dtype=np.int32))
    np.testing.assert_array_equal(np.asarray(folded), np.asarray(random.key_data(random.split(key, 3))))
