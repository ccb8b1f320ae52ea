"""A small convolutional network in equinox, trained with optax on synthetic images:
a plain JAX program.

Nothing here names plait: the script imports ``jax``, ``equinox`` and ``optax`` and runs
unchanged on JAX or, through ``python -m plait.compat examples/equinox_cnn.py``, on plait.
The data are 8x8 single-channel images drawn from ``jax.random`` whose class (one of
two) is whether the top half is brighter than the bottom half.  The model is an
``eqx.Module`` with two ``eqx.nn.Conv2d`` layers, a max-pool and a linear head, applied
per example with ``jax.vmap``; the loss is softmax cross-entropy; each step is an
``eqx.filter_jit`` function that takes ``eqx.filter_value_and_grad`` of the loss over the
model's arrays and applies ``optax.adam`` with ``eqx.apply_updates``.

The random streams are JAX's on both systems, so the printed losses agree with JAX's to
float32 rounding (``tests/test_ecosystem_examples.py`` compares them when both can run).
Needs equinox and optax installed (without their ``jax`` requirement, for plait).
"""

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

STEPS = 25


class CNN(eqx.Module):
    """conv(1->4, 3x3) -> relu -> conv(4->8, 3x3) -> relu -> maxpool 2x2 -> linear(72->2)."""

    conv1: eqx.nn.Conv2d
    conv2: eqx.nn.Conv2d
    pool: eqx.nn.MaxPool2d
    head: eqx.nn.Linear

    def __init__(self, key: jax.Array) -> None:
        k1, k2, k3 = jax.random.split(key, 3)
        self.conv1 = eqx.nn.Conv2d(1, 4, kernel_size=3, key=k1)
        self.conv2 = eqx.nn.Conv2d(4, 8, kernel_size=3, key=k2)
        self.pool = eqx.nn.MaxPool2d(kernel_size=2, stride=2)
        self.head = eqx.nn.Linear(8 * 2 * 2, 2, key=k3)

    def __call__(self, image: jax.Array) -> jax.Array:
        h = jax.nn.relu(self.conv1(image))
        h = jax.nn.relu(self.conv2(h))
        h = self.pool(h)
        return self.head(h.reshape(-1))


def make_data(key: jax.Array, n: int) -> tuple[jax.Array, jax.Array]:
    images = jax.random.normal(key, (n, 1, 8, 8))
    labels = (images[:, 0, :4].mean(axis=(1, 2)) > images[:, 0, 4:].mean(axis=(1, 2))).astype(jnp.int32)
    return images, labels


def loss_fn(model: CNN, images: jax.Array, labels: jax.Array) -> jax.Array:
    logits = jax.vmap(model)(images)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


def main() -> None:
    kdata, kmodel = jax.random.split(jax.random.key(42))
    images, labels = make_data(kdata, 64)
    model = CNN(kmodel)
    optimizer = optax.adam(3e-3)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_jit
    def step(model: CNN, opt_state: optax.OptState) -> tuple[CNN, optax.OptState, jax.Array]:
        loss, grads = eqx.filter_value_and_grad(loss_fn)(model, images, labels)
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_inexact_array))
        return eqx.apply_updates(model, updates), opt_state, loss

    losses = []
    for i in range(STEPS):
        model, opt_state, loss = step(model, opt_state)
        losses.append(float(loss))
        print(f"step {i:2d}: loss {float(loss):.8f}")
    accuracy = float((jax.vmap(model)(images).argmax(-1) == labels).mean())
    print(f"training accuracy {accuracy:.4f}")
    assert losses[-1] < 0.8 * losses[0], losses
    print("equinox_cnn.py: all checks passed")


if __name__ == "__main__":
    main()
