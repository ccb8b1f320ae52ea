"""A small CNN with stax (Conv, MaxPool, Flatten, Dense) and optimizers.momentum."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax.example_libraries import optimizers, stax

init_fun, apply_fun = stax.serial(
    stax.Conv(4, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), strides=(2, 2)),
    stax.Flatten, stax.Dense(3), stax.LogSoftmax)
out_shape, params = init_fun(jax.random.PRNGKey(1), (-1, 8, 8, 1))
show("out_features", out_shape[1:], [3])
rng = np.random.default_rng(7)
X = rng.normal(size=(16, 8, 8, 1)).astype(np.float32)
labels = (X[:, :4, :, 0].mean((1, 2)) > X[:, 4:, :, 0].mean((1, 2))).astype(np.int32)
Y = jax.nn.one_hot(labels, 3)


def loss(p):
    return -jnp.mean(jnp.sum(apply_fun(p, X) * Y, 1))


opt_init, opt_update, get_params = optimizers.momentum(0.05, 0.9)
state = opt_init(params)
step = jax.jit(lambda i, s: opt_update(i, jax.grad(loss)(get_params(s)), s))
first = float(loss(params))
for i in range(40):
    state = step(i, state)
show("initial_loss", first)
show("final_loss", loss(get_params(state)))
show("loss_decreased", loss(get_params(state)) < first, 1.0)
