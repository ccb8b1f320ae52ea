"""``python -m plait.demo``: a short tour of what plait does today.

It builds a small model with ``plait.numpy``, stages it to a jaxpr, evaluates
the jaxpr and checks it against eager evaluation, splits a program into its
known and unknown parts, and runs a staged ``scan``.  Every number printed is
computed, not canned.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

import plait
import plait.numpy as pnp
from plait import lax, random
from plait_core import PartialVal, ShapedArray, trace_to_jaxpr_partial


def _mlp(params: dict[str, Any], x: Any) -> Any:
    h = plait.nn.relu(x @ params["w1"] + params["b1"])
    return plait.nn.log_softmax(h @ params["w2"] + params["b2"])


def _section(title: str) -> None:
    print(f"\n== {title} " + "=" * max(0, 66 - len(title)))


def main() -> None:
    print(f"plait {plait.__version__} — packages: " + ", ".join(f"{k} {v}" for k, v in plait.package_versions.items()))

    _section("1. a model in plait.numpy, staged to a jaxpr")
    k1, k2, k3 = (random.split(random.PRNGKey(0), 3)[i] for i in range(3))
    params = {
        "w1": random.normal(k1, (4, 8)) * 0.5,
        "b1": pnp.zeros(8),
        "w2": random.normal(k2, (8, 3)) * 0.5,
        "b2": pnp.zeros(3),
    }
    x = random.uniform(k3, (5, 4))
    jaxpr = plait.make_jaxpr(_mlp)(params, x)
    print(jaxpr)

    _section("2. the jaxpr evaluates to what eager evaluation gives")
    leaves = plait.tree_util.tree_leaves((params, x))
    staged = plait.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *leaves)[0]
    eager = _mlp(params, x)
    print("log-probabilities (first row):", np.round(np.asarray(eager)[0], 4))
    print("max |staged - eager| =", float(np.max(np.abs(np.asarray(staged) - np.asarray(eager)))))
    print("rows sum to one:", bool(np.allclose(np.exp(np.asarray(eager)).sum(axis=1), 1.0, atol=1e-5)))

    _section("3. partial evaluation: known values computed now, the rest staged")

    def affine(scale: Any, v: Any) -> list[Any]:
        s = pnp.exp(scale) * 2.0          # known: computed right away
        return [pnp.sin(v) * s]            # unknown: staged, with s as a residual

    scale = np.array([0.0, 0.5, 1.0], np.float32)
    pe_jaxpr, _ = trace_to_jaxpr_partial(
        affine, [PartialVal.known(scale), PartialVal.unknown(ShapedArray((3,), np.float32))]
    )
    print(pe_jaxpr)
    print("residual computed now:", np.round(np.asarray(pe_jaxpr.consts[0]), 5), "= 2·exp(scale) =", np.round(2 * np.exp(scale), 5))

    _section("4. control flow: a staged scan (cumulative product of 1.1)")

    def growth(x0: Any) -> Any:
        return lax.scan(lambda c, _: (c * 1.1, c), x0, None, length=5)

    scan_jaxpr = plait.make_jaxpr(growth)(np.float32(1.0))
    print("equations:", [e.primitive.name for e in scan_jaxpr.eqns])
    final, history = growth(np.float32(1.0))
    print("history:", np.round(np.asarray(history), 4), "final:", round(float(final), 4))

    _section("5. tracing speed")
    t = time.perf_counter()

    def chain(v: Any) -> Any:
        for _ in range(1000):
            v = v + 1.0
        return v

    plait.make_jaxpr(chain)(np.zeros(3, np.float32))
    print(f"make_jaxpr of a 1000-equation chain: {(time.perf_counter() - t) * 1e3:.1f} ms")
    print("\nNext: jit, grad, vmap, mask and invertible land with their packages (see the README).")


if __name__ == "__main__":
    main()
