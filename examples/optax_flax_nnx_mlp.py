"""An MLP in flax's nnx API trained with optax on synthetic data: a plain JAX program.

Nothing here names plait: the script imports ``jax``, ``flax.nnx`` and ``optax`` and
runs unchanged on JAX or, through ``python -m plait.compat examples/optax_flax_nnx_mlp.py``,
on plait (where ``import jax`` is plait).  The data is a smooth regression target drawn
from ``jax.random``; the model is two ``nnx.Linear`` layers with a ReLU between; an
``nnx.Optimizer`` wraps ``optax.adam``; each step is an ``nnx.jit`` function that takes
``nnx.value_and_grad`` of the mean squared error and updates the model in place.  At the
end the model is taken apart with ``nnx.split`` and put back with ``nnx.merge``, and the
merged copy must give the trained model's loss.

The random streams are JAX's on both systems, so the printed losses agree with JAX's to
float32 rounding (``tests/test_ecosystem_examples.py`` compares them when both can run).
Needs flax and optax installed (without their ``jax`` requirement, for plait).
"""

import jax
import jax.numpy as jnp
import optax
from flax import nnx

STEPS = 30


class MLP(nnx.Module):
    """Two dense layers with a ReLU between."""

    def __init__(self, din: int, dhidden: int, dout: int, *, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(din, dhidden, rngs=rngs)
        self.out = nnx.Linear(dhidden, dout, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.out(jax.nn.relu(self.hidden(x)))


def mse(model: MLP, x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.mean((model(x) - y) ** 2)


@nnx.jit
def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(mse)(model, x, y)
    optimizer.update(model, grads)
    return loss


def main() -> None:
    kx, kw = jax.random.split(jax.random.key(0))
    x = jax.random.normal(kx, (128, 8))
    y = jnp.sin(x @ jax.random.normal(kw, (8, 2)))

    model = MLP(8, 32, 2, rngs=nnx.Rngs(params=1))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    losses = []
    for step in range(STEPS):
        loss = float(train_step(model, optimizer, x, y))
        losses.append(loss)
        print(f"step {step:2d}: loss {loss:.8f}")

    graphdef, state = nnx.split(model)
    final = float(mse(model, x, y))
    merged = float(mse(nnx.merge(graphdef, state), x, y))
    print(f"final loss {final:.8f}, after split/merge {merged:.8f}")
    assert merged == final, (merged, final)
    assert losses[-1] < 0.5 * losses[0], losses
    print("optax_flax_nnx_mlp.py: all checks passed")


if __name__ == "__main__":
    main()
