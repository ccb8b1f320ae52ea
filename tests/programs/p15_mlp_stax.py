"""An MLP classifier with jax.example_libraries.stax and .optimizers (Adam)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax.example_libraries import optimizers, stax

rng = np.random.default_rng(2)
X = rng.normal(size=(128, 4)).astype(np.float32)
labels = (X[:, 0] * X[:, 1] > 0).astype(np.int32)
Y = np.eye(2, dtype=np.float32)[labels]

init_fun, apply_fun = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(16), stax.Tanh, stax.Dense(2), stax.LogSoftmax)
out_shape, params = init_fun(jax.random.PRNGKey(0), (-1, 4))
show("out_shape", out_shape, [-1, 2])


def loss(params, X, Y):
    return -jnp.mean(jnp.sum(apply_fun(params, X) * Y, axis=1))


opt_init, opt_update, get_params = optimizers.adam(1e-2)
state = opt_init(params)


@jax.jit
def step(i, state):
    g = jax.grad(loss)(get_params(state), X, Y)
    return opt_update(i, g, state)


first = float(loss(params, X, Y))
for i in range(150):
    state = step(i, state)
final = float(loss(get_params(state), X, Y))
acc = jnp.mean(jnp.argmax(apply_fun(get_params(state), X), 1) == labels)
show("initial_loss", first)
show("final_loss", final)
show("loss_decreased", final < 0.5 * first, 1.0)
show("train_accuracy_high", acc > 0.85, 1.0)
