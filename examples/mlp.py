"""Train a small MLP classifier with ``jit``, ``grad`` and donated parameters.

The data are three interleaved spirals in the plane, drawn with
``plait.random`` (counter-based random numbers: the same key always gives the
same data).  The training step is one jitted function

    (params, velocity), x, y  ->  (new params, new velocity), loss

compiled once.  ``donate_argnums=0`` donates the old parameters and momentum
to the step: XLA may write the new values into their buffers, so a training
loop holds one copy of its state instead of two.  A donated array is deleted;
using it again raises ``plait.DeletedArrayError`` rather than returning stale
data.

Run it with ``python examples/mlp.py``.  It checks its own results (the loss
falls, the held-out accuracy is high, the donated arrays are gone) and exits
with an error if one does not hold.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import plait
from plait import nn, random
from plait import numpy as pnp

CLASSES = 3
HIDDEN = 64
STEPS = 300
LEARNING_RATE = 0.05


def spirals(key: Any, n: int) -> tuple[Any, Any]:
    """``n`` points on three noisy spirals, and which spiral each is on."""
    k_uniform, k_noise = random.split(key)
    u = random.uniform(k_uniform, (2, n))
    label = pnp.floor(u[0] * CLASSES).astype(pnp.int32)
    radius = 0.05 + 0.95 * u[1]
    angle = 3.5 * radius + 2 * np.pi * label / CLASSES + 0.25 * random.normal(k_noise, (n,))
    return pnp.stack([radius * pnp.cos(angle), radius * pnp.sin(angle)], axis=1), label


def init(key: Any) -> dict[str, Any]:
    k1, k2, k3 = random.split(key, 3)
    return {
        "w1": random.normal(k1, (2, HIDDEN)),
        "b1": pnp.zeros(HIDDEN),
        "w2": random.normal(k2, (HIDDEN, HIDDEN)) / np.sqrt(HIDDEN),
        "b2": pnp.zeros(HIDDEN),
        "w3": random.normal(k3, (HIDDEN, CLASSES)) / np.sqrt(HIDDEN),
        "b3": pnp.zeros(CLASSES),
    }


def predict(params: dict[str, Any], x: Any) -> Any:
    """Logits for a batch ``x`` of shape ``(n, 2)``."""
    h = nn.relu(x @ params["w1"] + params["b1"])
    h = nn.relu(h @ params["w2"] + params["b2"])
    return h @ params["w3"] + params["b3"]


def loss(params: dict[str, Any], x: Any, y: Any) -> Any:
    """Cross-entropy of the labels ``y`` under the model."""
    logp = nn.log_softmax(predict(params, x))
    return -pnp.mean(pnp.take_along_axis(logp, y[:, None], axis=1))


@plait.jit
def accuracy(params: dict[str, Any], x: Any, y: Any) -> Any:
    return pnp.mean(pnp.argmax(predict(params, x), axis=1) == y)


def sgd_momentum(state: tuple[Any, Any], x: Any, y: Any) -> tuple[tuple[Any, Any], Any]:
    """One step of gradient descent with momentum 0.9."""
    params, velocity = state
    value, grads = plait.value_and_grad(loss)(params, x, y)
    velocity = plait.tree.map(lambda v, g: 0.9 * v + g, velocity, grads)
    params = plait.tree.map(lambda p, v: p - LEARNING_RATE * v, params, velocity)
    return (params, velocity), value


# The state (argument 0) is donated to the step.
train_step = plait.jit(sgd_momentum, donate_argnums=0)


def check(ok: bool, what: str) -> None:
    if not ok:
        raise SystemExit(f"mlp.py: check failed: {what}")


def main() -> None:
    make_data = plait.jit(spirals, static_argnums=1)  # one compiled program draws all the points
    x_train, y_train = make_data(random.PRNGKey(0), 1024)
    x_test, y_test = make_data(random.PRNGKey(1), 1024)

    params = plait.jit(init)(random.PRNGKey(2))
    state = first_state = (params, plait.tree.map(pnp.zeros_like, params))
    losses = []
    for step in range(STEPS):
        state, value = train_step(state, x_train, y_train)
        losses.append(float(value))
        if step % 50 == 0 or step == STEPS - 1:
            print(f"step {step:3d}  loss {losses[-1]:.4f}")

    acc = float(accuracy(state[0], x_test, y_test))
    print(f"held-out accuracy: {100 * acc:.1f}%")

    donated = plait.tree.leaves(first_state)
    print(f"the first state was donated: {sum(a.is_deleted() for a in donated)} of {len(donated)} arrays deleted")
    try:
        np.asarray(first_state[0]["w1"])
        reused = False
    except plait.DeletedArrayError as e:
        print(f"reading a donated array: DeletedArrayError: {e}")
        reused = True

    check(losses[-1] < 0.1 * losses[0], f"the loss fell from {losses[0]:.4f} to {losses[-1]:.4f}")
    check(acc > 0.9, f"held-out accuracy {acc:.3f} > 0.9")
    check(all(a.is_deleted() for a in donated) and reused, "the donated state is deleted")
    print("mlp.py: all checks passed")


if __name__ == "__main__":
    main()
