"""A reversible ResNet trained with ``invertible``: same gradients, flat memory.

A reversible block maps ``(x1, x2)`` to ``(y1, y2)`` with

    y1 = x1 + F(x2)        F(v) = tanh(v @ f + bf)
    y2 = x2 + G(y1)        G(v) = tanh(v @ g + bg)

and can be undone from its outputs: ``x2 = y2 - G(y1)``, ``x1 = y1 - F(x2)``.
Ordinary reverse mode stores every block's intermediate values for the
backward pass, so its memory grows with depth.  ``plait.invertible(fun)``
marks ``fun`` so that its backward pass keeps only the outputs (and the
arguments they do not determine: here the blocks' weights, passed as an
argument as JAX users do) and rebuilds each intermediate by inverting the
jaxpr's equations in reverse order, in lock-step with the cotangents: here
``sub`` undoes ``add``, and ``tanh``, ``dot_general`` are recomputed from
values already rebuilt.  ``.residuals(*args)`` lists what is kept.

The script

1. checks that the gradients through ``invertible`` equal ordinary reverse
   mode,
2. trains the network on three spirals with the invertible gradients, and
3. asks XLA how much temporary memory ``jit(grad(loss))`` needs at depths
   4, 16 and 64 (``.lower(...).compile().memory_analysis()``), for both.

The blocks' inputs come out of a trained linear stem (in a RevNet they come
from earlier layers), so they are differentiated too.

Run it with ``python examples/revnet.py``; it checks its own results.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
from plait import nn, random
from plait import numpy as pnp

CLASSES = 3
WIDTH = 16  # each half of the state
DEPTH = 8


def spirals(key: Any, n: int) -> tuple[Any, Any]:
    """``n`` points on three noisy spirals, and which spiral each is on."""
    k_uniform, k_noise = random.split(key)
    u = random.uniform(k_uniform, (2, n))
    label = pnp.floor(u[0] * CLASSES).astype(pnp.int32)
    radius = 0.05 + 0.95 * u[1]
    angle = 3.5 * radius + 2 * np.pi * label / CLASSES + 0.25 * random.normal(k_noise, (n,))
    return pnp.stack([radius * pnp.cos(angle), radius * pnp.sin(angle)], axis=1), label


def init(key: Any, depth: int) -> dict[str, Any]:
    k_blocks, k_ends = random.split(key)
    fg = random.normal(k_blocks, (depth, 2, WIDTH, WIDTH)) / np.sqrt(WIDTH)
    ends = random.normal(k_ends, (2 + CLASSES, 2 * WIDTH))
    return {
        "stem": ends[:2],
        "stem_b": pnp.zeros(2 * WIDTH),
        "blocks": [{"f": fg[i, 0], "g": fg[i, 1], "bf": pnp.zeros(WIDTH), "bg": pnp.zeros(WIDTH)} for i in range(depth)],
        "head": ends[2:].T / np.sqrt(2 * WIDTH),
        "head_b": pnp.zeros(CLASSES),
    }


def reversible_blocks(blocks: list[dict[str, Any]], x1: Any, x2: Any) -> tuple[Any, Any]:
    for b in blocks:
        x1 = x1 + pnp.tanh(x2 @ b["f"] + b["bf"])
        x2 = x2 + pnp.tanh(x1 @ b["g"] + b["bg"])
    return x1, x2


def make_loss(use_invertible: bool) -> Any:
    def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
        h = x @ params["stem"] + params["stem_b"]
        # The block weights are an argument: kept by the backward pass, and differentiated.
        blocks = plait.invertible(reversible_blocks) if use_invertible else reversible_blocks
        y1, y2 = blocks(params["blocks"], h[:, :WIDTH], h[:, WIDTH:])
        logits = pnp.concatenate([y1, y2], axis=1) @ params["head"] + params["head_b"]
        logp = nn.log_softmax(logits)
        return -pnp.mean(pnp.take_along_axis(logp, y[:, None], axis=1))

    return loss


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"revnet.py: check failed: {what}")


def main() -> None:
    make_data = plait.jit(spirals, static_argnums=1)
    x, y = make_data(random.PRNGKey(0), 1024)
    params = plait.jit(init, static_argnums=1)(random.PRNGKey(3), DEPTH)

    # 1. The same gradients.
    ordinary = plait.jit(plait.grad(make_loss(False)))(params, x, y)
    inverted = plait.jit(plait.grad(make_loss(True)))(params, x, y)
    pairs = list(zip(plait.tree.leaves(inverted), plait.tree.leaves(ordinary)))
    diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in pairs)
    print(f"max |grad(invertible) - grad(ordinary)| = {diff:.2e} over {len(pairs)} arrays")
    for a, b in pairs:
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
    h = x @ params["stem"] + params["stem_b"]
    stored = plait.invertible(reversible_blocks).residuals(params["blocks"], h[:, :WIDTH], h[:, WIDTH:])
    print(f"invertible keeps {len(stored.kept)} weight arrays and rebuilds {sorted(stored.rebuilt)}: "
          f"{stored.stored_bytes:,} bytes stored instead of {stored.intermediate_bytes:,} of intermediates")
    check(sorted(stored.rebuilt) == ["args[1]", "args[2]"], "the activations are rebuilt, not stored")

    # 2. Training with the invertible gradients (plain gradient descent).
    loss = make_loss(True)

    @plait.jit
    def step(params: Any) -> tuple[Any, Any]:
        value, grads = plait.value_and_grad(loss)(params, x, y)
        return plait.tree.map(lambda p, g: p - 0.2 * g, params, grads), value

    losses = []
    for i in range(150):
        params, value = step(params)
        losses.append(float(value))
        if i % 30 == 0:
            print(f"step {i:3d}  loss {losses[-1]:.4f}")
    print(f"final loss {losses[-1]:.4f}")
    check(losses[-1] < 0.2 * losses[0], f"the loss fell from {losses[0]:.4f} to {losses[-1]:.4f}")

    # 3. Memory against depth.  Compiling needs only shapes: eval_shape gives them.
    print(f"{'depth':>5}  {'ordinary':>12}  {'invertible':>12}   (XLA temporary bytes of jit(grad(loss)))")
    temps: dict[bool, list[int]] = {False: [], True: []}
    for depth in (4, 16, 64):
        shapes = plait.eval_shape(lambda key, depth=depth: init(key, depth), random.PRNGKey(0))
        for inv in (False, True):
            compiled = plait.jit(plait.grad(make_loss(inv))).lower(shapes, x, y).compile()
            temps[inv].append(compiled.memory_analysis().temp_size_in_bytes)
        print(f"{depth:>5}  {temps[False][-1]:>12,}  {temps[True][-1]:>12,}")
    check(temps[False][-1] > 4 * temps[False][0], "ordinary reverse mode needs more memory as depth grows")
    check(max(temps[True]) <= 1.1 * min(temps[True]), "invertible reverse mode needs the same memory at every depth")
    check(temps[True][-1] < temps[False][-1] / 4, "invertible needs much less memory than ordinary at depth 64")
    print("revnet.py: all checks passed")


if __name__ == "__main__":
    main()
