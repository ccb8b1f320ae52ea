"""An RK4 integrator in lax.scan: harmonic oscillator vs closed form, and the
sensitivity of the final state to the frequency by autodiff."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax import lax


def rk4(f, y0, dt, n, w):
    def step(y, _):
        k1 = f(y, w)
        k2 = f(y + 0.5 * dt * k1, w)
        k3 = f(y + 0.5 * dt * k2, w)
        k4 = f(y + dt * k3, w)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y

    return lax.scan(step, y0, None, length=n)


def oscillator(y, w):
    return jnp.array([y[1], -w ** 2 * y[0]])


T, n, w = 2.0, 200, 1.5
yT, traj = jax.jit(lambda w: rk4(oscillator, jnp.array([1.0, 0.0]), T / n, n, w))(w)
show("final_state", yT, [np.cos(w * T), -w * np.sin(w * T)], rtol=1e-4, atol=1e-5)
show("trajectory_len", traj.shape, [200, 2])
dx_dw = jax.grad(lambda w: rk4(oscillator, jnp.array([1.0, 0.0]), T / n, n, w)[0][0])(w)
show("sensitivity", dx_dw, -T * np.sin(w * T), rtol=1e-3, atol=1e-4)
yv = jax.vmap(lambda w: rk4(oscillator, jnp.array([1.0, 0.0]), T / n, n, w)[0][0])(jnp.array([0.5, 1.0, 2.0]))
show("vmapped_frequencies", yv, np.cos(np.array([0.5, 1.0, 2.0]) * T), rtol=1e-4, atol=1e-5)
