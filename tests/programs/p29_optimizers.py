"""jax.example_libraries.optimizers on a quadratic: sgd, momentum, adam, schedules, pytree params."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax.example_libraries import optimizers

A = np.diag([1.0, 10.0])
target = np.array([1.0, -2.0])


def loss(p):
    d = p["x"] - target
    return 0.5 * d @ A @ d + 0.5 * (p["y"] - 3.0) ** 2


def run(opt, steps=300):
    init, update, get = opt
    state = init({"x": jnp.zeros(2), "y": jnp.array(0.0)})
    step = jax.jit(lambda i, s: update(i, jax.grad(loss)(get(s)), s))
    for i in range(steps):
        state = step(i, state)
    return get(state)


for name, opt in [("sgd", optimizers.sgd(0.05)), ("momentum", optimizers.momentum(0.02, 0.9)),
                  ("adam", optimizers.adam(0.1)), ("rmsprop", optimizers.rmsprop(0.03)),
                  ("sgd_decay", optimizers.sgd(optimizers.exponential_decay(0.1, 100, 0.5)))]:
    p = run(opt)
    show(f"{name}_x", p["x"], target, atol=2e-2)
    show(f"{name}_y", p["y"], 3.0, atol=2e-2)
sched = optimizers.piecewise_constant([10, 20], [1.0, 0.5, 0.1])
show("piecewise", [sched(5), sched(15), sched(25)], [1.0, 0.5, 0.1])
show("l2_norm", optimizers.l2_norm({"a": jnp.array([3.0]), "b": jnp.array([4.0])}), 5.0)
show("clip_grads", optimizers.clip_grads({"a": jnp.array([3.0, 4.0])}, 1.0)["a"], [0.6, 0.8], rtol=1e-5)
