"""The random-number cases plait must draw exactly as JAX 0.10.2 does, and the
generator of their recorded JAX outputs.

Each case is an expression over ``random`` (``jax.random`` or ``plait.random``)
and ``np``.  Run this file with an interpreter that has JAX 0.10.2 to
(re)write ``data/jax_random_0.10.2.json``::

    /path/to/jax/python tests/random_cases.py

``test_random_jax_streams.py`` compares plait's draws with that table and,
when ``PLAIT_JAX_PYTHON`` names such an interpreter, with a live JAX run too.
Arrays are recorded as dtype, shape and the hex of their bytes (bit for bit).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

TABLE = Path(__file__).parent / "data" / "jax_random_0.10.2.json"

_F = "np.float32"
CASES: list[tuple[str, str]] = [
    ("PRNGKey", "[random.PRNGKey(s) for s in (0, 1, -1, 42, 2**31, 2**32 + 5, 2**63 - 1)]"),
    ("PRNGKey_arrays", "[random.PRNGKey(np.int8(-3)), random.PRNGKey(np.uint32(4000000000))]"),
    ("key_data", "random.key_data(random.key(7))"),
    ("split", "random.split(random.PRNGKey(0), 3)"),
    ("split_typed", "random.key_data(random.split(random.key(5), (2, 3)))"),
    ("fold_in", "[random.fold_in(random.PRNGKey(0), d) for d in (0, 1, 7, 2**32 - 1)]"),
    ("fold_in_typed", "random.key_data(random.fold_in(random.key(3), np.int32(11)))"),
    ("bits32", "random.bits(random.PRNGKey(1), (2, 3))"),
    ("bits8", "random.bits(random.key(1), (5,), np.uint8)"),
    ("bits16", "random.bits(random.key(1), (5,), np.uint16)"),
    ("uniform", "random.uniform(random.PRNGKey(0), (6,))"),
    ("uniform_bounds", "random.uniform(random.key(2), (2, 3), minval=-2.0, maxval=np.array([1.0, 2.0, 3.0]))"),
    ("uniform_f16", "random.uniform(random.key(2), (4,), np.float16)"),
    ("uniform_scalar", "random.uniform(random.key(9))"),
    ("normal", "random.normal(random.PRNGKey(0), (6,))"),
    ("normal_typed", "random.normal(random.key(4), (2, 2))"),
    ("normal_complex", "random.normal(random.key(4), (3,), np.complex64)"),
    ("truncated_normal", "random.truncated_normal(random.key(1), -1.0, 2.0, (5,))"),
    ("bernoulli", "random.bernoulli(random.key(3), 0.3, (8,))"),
    ("bernoulli_high", "random.bernoulli(random.key(3), np.array([0.1, 0.9], np.float32), mode='high')"),
    ("randint", "random.randint(random.PRNGKey(4), (8,), 3, 10)"),
    ("randint_int8", "random.randint(random.key(4), (6,), -5, 256, np.int8)"),
    ("randint_wide", "random.randint(random.key(4), (4,), -2**31, 2**31 - 1)"),
    ("gumbel", "random.gumbel(random.key(6), (5,))"),
    ("gumbel_high", "random.gumbel(random.key(6), (3,), mode='high')"),
    ("gumbel_highest", "random.gumbel(random.key(6), (6,), mode='highest')"),
    ("exponential", "random.exponential(random.key(6), (5,))"),
    ("categorical", f"random.categorical(random.key(7), np.log(np.array([0.2, 0.5, 0.3], {_F})), shape=(8,))"),
    ("categorical_axis0", f"random.categorical(random.key(7), np.zeros((3, 2), {_F}), axis=0)"),
    ("categorical_noreplace",
     f"random.categorical(random.key(7), np.zeros((2, 5), {_F}), shape=(3, 2), replace=False)"),
    ("permutation_int", "random.permutation(random.PRNGKey(5), 10)"),
    ("permutation_rows", "random.permutation(random.key(5), np.arange(12).reshape(4, 3))"),
    ("permutation_independent", "random.permutation(random.key(5), np.arange(6).reshape(2, 3), 1, True)"),
    ("choice", "random.choice(random.key(8), 10, (4,))"),
    ("choice_noreplace", "random.choice(random.key(8), np.arange(20, 30), (3,), replace=False)"),
    ("choice_p", f"random.choice(random.key(8), 4, (6,), p=np.array([0.25, 0.5, 0.125, 0.125], {_F}))"),
    ("choice_p_noreplace",
     f"random.choice(random.key(8), 4, (2,), replace=False, p=np.array([0.25, 0.5, 0.125, 0.125], {_F}))"),
    ("gamma", f"random.gamma(random.key(9), np.array([0.3, 1.0, 2.5, 9.0], {_F}))"),
    ("gamma_shape", "random.gamma(random.PRNGKey(9), 2.0, (2, 2))"),
    ("loggamma", f"random.loggamma(random.key(9), np.array([0.01, 3.0], {_F}))"),
    ("beta", "random.beta(random.key(10), 2.0, 3.0, (4,))"),
    ("dirichlet", f"random.dirichlet(random.key(11), np.array([1.0, 2.0, 0.5], {_F}), (2,))"),
    ("chisquare", "random.chisquare(random.key(12), 3.0, (3,))"),
    ("t", "random.t(random.key(12), 4.0, (3,))"),
    ("f", "random.f(random.key(12), 3.0, 5.0, (3,))"),
    ("poisson", f"random.poisson(random.key(13), np.array([0.5, 3.0, 9.5, 12.0, 100.0], {_F}))"),
    ("laplace", "random.laplace(random.key(14), (4,))"),
    ("logistic", "random.logistic(random.key(14), (4,))"),
    ("cauchy", "random.cauchy(random.key(14), (4,))"),
    ("rademacher", "random.rademacher(random.key(14), (6,))"),
    ("maxwell", "random.maxwell(random.key(14), (3,))"),
    ("double_sided_maxwell", "random.double_sided_maxwell(random.key(14), 1.0, 2.0, (3,))"),
    ("weibull_min", "random.weibull_min(random.key(14), 2.0, 1.5, (3,))"),
    ("pareto", "random.pareto(random.key(14), 3.0, (3,))"),
    ("rayleigh", "random.rayleigh(random.key(14), 2.0, (3,))"),
    ("wald", "random.wald(random.key(14), 1.5, (3,))"),
    ("geometric", "random.geometric(random.key(14), 0.3, (5,))"),
    ("triangular", "random.triangular(random.key(14), 0.0, 1.0, 3.0, (4,))"),
    ("lognormal", "random.lognormal(random.key(14), 0.5, (3,))"),
    ("generalized_normal", "random.generalized_normal(random.key(15), 1.5, (3,))"),
    ("ball", "random.ball(random.key(15), 3, 2, (2,))"),
    ("orthogonal", "random.orthogonal(random.key(1), 2, (), None, 3)"),
    ("binomial", f"random.binomial(random.key(16), np.array([5.0, 40.0, 100.0], {_F}), 0.3)"),
    ("binomial_high_p", "random.binomial(random.key(16), 50.0, 0.9, (3,))"),
    ("multinomial", f"random.multinomial(random.key(17), 20.0, np.array([0.2, 0.3, 0.5], {_F}))"),
]

# Drawn with 64-bit types on (``jax_enable_x64``): 64-bit seeds, bits, floats and integers.
X64_CASES: list[tuple[str, str]] = [
    ("x64_PRNGKey", "random.PRNGKey(2**40 + 7)"),
    ("x64_split", "random.split(random.PRNGKey(2**40 + 7))"),
    ("x64_bits", "random.bits(random.key(1), (3,), np.uint64)"),
    ("x64_uniform", "random.uniform(random.key(2), (3,))"),
    ("x64_normal", "random.normal(random.key(3), (3,))"),
    ("x64_randint", "random.randint(random.key(4), (4,), 0, 2**40)"),
    ("x64_gamma", "random.gamma(random.key(5), 2.5, (2,))"),
    ("x64_poisson", "random.poisson(random.key(6), 20.0, (3,))"),
]

# Gradients of samples with respect to their shape parameters (``grad`` is ``jax.grad`` or ``plait.grad``).
_A = "np.array([0.3, 1.0, 2.5, 9.0, 40.0], np.float32)"
GRAD_CASES: list[tuple[str, str]] = [
    ("grad_gamma", f"grad(lambda a: random.gamma(random.key(3), a).sum())({_A})"),
    ("grad_loggamma", f"grad(lambda a: random.loggamma(random.key(3), a).sum())({_A})"),
    ("grad_beta", f"grad(lambda a: random.beta(random.key(3), a, 2.0).sum())({_A})"),
    ("grad_dirichlet", f"grad(lambda a: (random.dirichlet(random.key(3), a) * np.arange(5)).sum())({_A})"),
    ("grad_t", f"grad(lambda a: random.t(random.key(3), a).sum())({_A})"),
]


def encode(value: Any) -> Any:
    """A JSON form of an array (or a list of them): dtype, shape, hex bytes."""
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    arr = np.asarray(value)
    return {"dtype": str(arr.dtype), "shape": list(arr.shape), "hex": np.ascontiguousarray(arr).tobytes().hex()}


def decode(entry: Any) -> Any:
    """The array (or list of arrays) :func:`encode` wrote."""
    if isinstance(entry, list):
        return [decode(e) for e in entry]
    return np.frombuffer(bytes.fromhex(entry["hex"]), dtype=entry["dtype"]).reshape(entry["shape"])


def run_cases(random: Any, cases: list[tuple[str, str]] = CASES, grad: Any = None) -> dict[str, Any]:
    """Every case drawn with ``random`` (and ``grad``), encoded."""
    return {name: encode(eval(expr, {"random": random, "np": np, "grad": grad})) for name, expr in cases}


def main() -> None:
    import jax
    import jax.random

    names = sorted(n for n in dir(jax.random) if not n.startswith("_"))
    table = {"jax_version": jax.__version__, "names": names, "cases": run_cases(jax.random)}
    table["grad_cases"] = run_cases(jax.random, GRAD_CASES, jax.grad)
    jax.config.update("jax_enable_x64", True)
    table["x64_cases"] = run_cases(jax.random, X64_CASES)
    if len(sys.argv) > 1 and sys.argv[1] == "-":
        json.dump(table, sys.stdout)
        return
    TABLE.parent.mkdir(exist_ok=True)
    TABLE.write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
