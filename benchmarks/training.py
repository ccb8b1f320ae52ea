"""Compiled training programs: a small CNN's SGD step and per-example gradients.

Both are written once against a NumPy-like module (``plait.numpy`` or
``jax.numpy``) and a ``lax`` module, so plait and JAX run the same program.
Each benchmark checks that the two give the same numbers before it times
anything, then times the compiled (warm) program only; compilation itself is
measured in :mod:`benchmarks.compile`.

* **CNN training step**: three ``conv_general_dilated`` layers (NHWC, 3x3,
  ``SAME``; the last two with stride 2) with ReLU, a dense layer to 10
  classes, softmax cross-entropy on a batch of 32 28x28 images; one
  ``jit(step, donate_argnums=0)`` SGD step from ``grad`` (the parameters are
  donated, so each step updates them in place).
* **per-example gradients**: ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))``
  of a 64-128-128-10 MLP's cross-entropy on 128 examples: one gradient per
  example (issue 5's target: at most 1.02x JAX).
"""

from __future__ import annotations

import importlib
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, interleaved

Params = list[dict[str, np.ndarray]]

CNN_BATCH = 32
CNN_IMAGE = 28
CNN_CHANNELS = (1, 16, 32, 32)  # input, then each conv layer's output features
CNN_STRIDES = (1, 2, 2)
CNN_CLASSES = 10
CNN_STEPS = 5  # SGD steps per timed sample
LEARNING_RATE = 0.01

PEX_SIZES = (64, 128, 128, 10)
PEX_BATCH = 128


# ---------------------------------------------------------------------------
# The programs (framework-agnostic: ``np_mod``/``lax_mod``/``nn_mod`` are
# plait's or JAX's modules).


def cnn_params(seed: int = 0) -> Params:
    """He-initialised conv kernels (HWIO) and biases, then the dense layer."""
    rng = np.random.default_rng(seed)
    params: Params = []
    for cin, cout in itertools.pairwise(CNN_CHANNELS):
        w = rng.standard_normal((3, 3, cin, cout)) * np.sqrt(2.0 / (9 * cin))
        params.append({"w": w.astype(np.float32), "b": np.zeros(cout, np.float32)})
    side = CNN_IMAGE
    for s in CNN_STRIDES:
        side = -(-side // s)
    features = side * side * CNN_CHANNELS[-1]
    w = rng.standard_normal((features, CNN_CLASSES)) / np.sqrt(features)
    params.append({"w": w.astype(np.float32), "b": np.zeros(CNN_CLASSES, np.float32)})
    return params


def cnn_batch(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Images ``f32[32, 28, 28, 1]`` and one-hot labels ``f32[32, 10]``."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((CNN_BATCH, CNN_IMAGE, CNN_IMAGE, CNN_CHANNELS[0])).astype(np.float32)
    y = np.eye(CNN_CLASSES, dtype=np.float32)[rng.integers(0, CNN_CLASSES, CNN_BATCH)]
    return x, y


def cnn_loss(np_mod: Any, lax_mod: Any, nn_mod: Any) -> Callable[[Any, Any, Any], Any]:
    """Mean softmax cross-entropy of the CNN on a batch (NHWC images)."""

    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for layer, stride in zip(params[:-1], CNN_STRIDES):
            h = lax_mod.conv_general_dilated(
                h, layer["w"], (stride, stride), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
            )
            h = nn_mod.relu(h + layer["b"])
        h = h.reshape(h.shape[0], -1)
        logits = h @ params[-1]["w"] + params[-1]["b"]
        return -np_mod.mean(np_mod.sum(y * nn_mod.log_softmax(logits), axis=-1))

    return loss


def sgd_step(
    loss: Callable[..., Any], grad: Callable[..., Any], lr: float = LEARNING_RATE
) -> Callable[..., Any]:
    """``step(params, x, y) -> params - lr * grad(loss)(params, x, y)`` (leaf by leaf)."""

    def step(params: Any, x: Any, y: Any) -> Any:
        g = grad(loss)(params, x, y)
        return [{k: p[k] - lr * gp[k] for k in p} for p, gp in zip(params, g)]

    return step


def mlp_params(sizes: tuple[int, ...], seed: int = 0) -> Params:
    rng = np.random.default_rng(seed)
    return [
        {"w": (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32), "b": np.zeros(n, np.float32)}
        for m, n in itertools.pairwise(sizes)
    ]


def mlp_example_loss(np_mod: Any, nn_mod: Any) -> Callable[[Any, Any, Any], Any]:
    """Cross-entropy of a tanh MLP on ONE example (``x``: features, ``y``: one-hot)."""

    def loss(params: Any, x: Any, y: Any) -> Any:
        h = x
        for layer in params[:-1]:
            h = np_mod.tanh(h @ layer["w"] + layer["b"])
        logits = h @ params[-1]["w"] + params[-1]["b"]
        return -np_mod.sum(y * nn_mod.log_softmax(logits))

    return loss


# ---------------------------------------------------------------------------
# Helpers.


def _plait() -> Any | None:
    """``plait`` when jit, grad and vmap are all importable, else ``None``."""
    try:
        plait = importlib.import_module("plait")
    except ImportError:
        return None
    return plait if all(hasattr(plait, n) for n in ("jit", "grad", "vmap")) else None


def _leaves(tree: Any) -> list[np.ndarray]:
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _leaves(t)]
    return [np.asarray(tree)]


def assert_trees_close(got: Any, want: Any, what: str, rtol: float = 2e-4, atol: float = 2e-5) -> None:
    """Leaf-by-leaf ``assert_allclose`` of two nested lists/dicts of arrays."""
    a, b = _leaves(got), _leaves(want)
    assert len(a) == len(b), f"{what}: {len(a)} leaves against {len(b)}"
    for i, (x, y) in enumerate(zip(a, b)):
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"{what}: leaf {i}")


class _Stepper:
    """Runs ``steps`` donated SGD steps, keeping the newest parameters."""

    def __init__(self, step: Callable[..., Any], params: Any, x: Any, y: Any, block: Callable[[Any], Any]):
        self.step, self.params, self.x, self.y, self.block = step, params, x, y, block

    def __call__(self, steps: int = CNN_STEPS) -> None:
        for _ in range(steps):
            self.params = self.step(self.params, self.x, self.y)
        self.block(self.params)


# ---------------------------------------------------------------------------
# Benchmarks.


def bench_cnn_step(jax: Any | None, repeats: int = 15) -> Result | None:
    """One jitted, donated SGD step of the CNN (batch 32): median per step."""
    plait = _plait()
    if plait is None:
        return None
    x, y = cnn_batch()
    pstep = plait.jit(sgd_step(cnn_loss(plait.numpy, plait.lax, plait.nn), plait.grad), donate_argnums=0)
    px, py = plait.device_put(x), plait.device_put(y)
    p_run = _Stepper(pstep, plait.device_put(cnn_params()), px, py, plait.block_until_ready)
    first = [{k: np.asarray(v) for k, v in p.items()} for p in pstep(plait.device_put(cnn_params()), px, py)]
    j_run = None
    if jax is not None:
        jstep = jax.jit(sgd_step(cnn_loss(jax.numpy, jax.lax, jax.nn), jax.grad), donate_argnums=0)
        jx, jy = jax.device_put(x), jax.device_put(y)
        j_run = _Stepper(jstep, jax.device_put(cnn_params()), jx, jy, jax.block_until_ready)
        assert_trees_close(first, jstep(jax.device_put(cnn_params()), jx, jy), "CNN step: plait vs JAX")
    p_run()
    if j_run is not None:
        j_run()
    p, j = interleaved(p_run, j_run, repeats)
    shape = f"{CNN_BATCH}×{CNN_IMAGE}×{CNN_IMAGE}×{CNN_CHANNELS[0]}"
    convs = "-".join(str(c) for c in CNN_CHANNELS[1:])
    return Result(
        f"compiled CNN training step (3 `conv_general_dilated` {convs} + dense, batch {shape}, donated params)",
        p / CNN_STEPS,
        None if j is None else j / CNN_STEPS,
        "≤ 1.02× JAX",
    )


def bench_per_example_grads(jax: Any | None, repeats: int = 25) -> Result | None:
    """``jit(vmap(grad(loss), in_axes=(None, 0, 0)))`` of a small MLP."""
    plait = _plait()
    if plait is None:
        return None
    rng = np.random.default_rng(3)
    x = rng.standard_normal((PEX_BATCH, PEX_SIZES[0])).astype(np.float32)
    y = np.eye(PEX_SIZES[-1], dtype=np.float32)[rng.integers(0, PEX_SIZES[-1], PEX_BATCH)]
    params = mlp_params(PEX_SIZES)
    pf = plait.jit(plait.vmap(plait.grad(mlp_example_loss(plait.numpy, plait.nn)), in_axes=(None, 0, 0)))
    pp, px, py = plait.device_put(params), plait.device_put(x), plait.device_put(y)

    def p_run() -> object:
        return plait.block_until_ready(pf(pp, px, py))

    got = pf(pp, px, py)
    j_run = None
    if jax is not None:
        jf = jax.jit(jax.vmap(jax.grad(mlp_example_loss(jax.numpy, jax.nn)), in_axes=(None, 0, 0)))
        jp, jx, jy = jax.device_put(params), jax.device_put(x), jax.device_put(y)

        def j_run() -> object:
            return jax.block_until_ready(jf(jp, jx, jy))

        assert_trees_close(got, jf(jp, jx, jy), "per-example gradients: plait vs JAX")
    # Oracle independent of both: example 0's gradient alone, through plait.grad.
    one = plait.grad(mlp_example_loss(plait.numpy, plait.nn))(params, x[0], y[0])
    assert_trees_close(
        [{k: np.asarray(v)[0] for k, v in layer.items()} for layer in got], one, "vmap(grad) row 0"
    )
    p_run()
    if j_run is not None:
        j_run()
    p, j = interleaved(p_run, j_run, repeats)
    sizes = "-".join(map(str, PEX_SIZES))
    return Result(
        f"per-example gradients `jit(vmap(grad(loss)))`, MLP {sizes}, {PEX_BATCH} examples",
        p,
        j,
        "≤ 1.02× JAX",
    )


def training_results(jax: Any | None) -> list[Result]:
    """The CNN step and per-example gradient rows (empty without plait's jit/grad/vmap)."""
    return [r for r in (bench_cnn_step(jax), bench_per_example_grads(jax)) if r is not None]


if __name__ == "__main__":
    from benchmarks.harness import markdown_table

    try:
        _jax: Any | None = importlib.import_module("jax")
    except ImportError:
        _jax = None
    print(markdown_table(training_results(_jax)))
