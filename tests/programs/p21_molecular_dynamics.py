"""Molecular dynamics: Lennard-Jones forces by jax.grad, velocity Verlet in lax.scan."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax import lax

pos0 = np.array([[0.0, 0.0], [1.12, 0.0], [0.56, 0.97], [1.68, 0.97], [-0.56, 0.97]])


def energy(pos):
    d = pos[:, None, :] - pos[None, :, :]
    r2 = jnp.sum(d ** 2, -1) + jnp.eye(pos.shape[0])
    inv6 = (1.0 / r2) ** 3
    e = 4 * (inv6 ** 2 - inv6)
    return 0.5 * jnp.sum(jnp.where(jnp.eye(pos.shape[0]) > 0, 0.0, e))


def np_energy(pos):
    e = 0.0
    for i in range(len(pos)):
        for j in range(i + 1, len(pos)):
            r2 = np.sum((pos[i] - pos[j]) ** 2)
            e += 4 * (r2 ** -6 - r2 ** -3)
    return e


force = jax.jit(lambda p: -jax.grad(energy)(p))
show("energy", energy(jnp.asarray(pos0)), np_energy(pos0), rtol=1e-5)
fd = np.zeros_like(pos0)
for i in range(pos0.shape[0]):
    for k in range(2):
        dp = np.zeros_like(pos0)
        dp[i, k] = 1e-6
        fd[i, k] = -(np_energy(pos0 + dp) - np_energy(pos0 - dp)) / 2e-6
show("forces", force(jnp.asarray(pos0)), fd, rtol=1e-3, atol=1e-3)


def verlet(state, _):
    pos, vel = state
    f = force(pos)
    vel_half = vel + 0.5 * 0.002 * f
    pos = pos + 0.002 * vel_half
    vel = vel_half + 0.5 * 0.002 * force(pos)
    e = energy(pos) + 0.5 * jnp.sum(vel ** 2)
    return (pos, vel), e


(posT, velT), energies = lax.scan(verlet, (jnp.asarray(pos0), jnp.zeros_like(pos0)), None, length=300)
energies = np.asarray(energies)
show("total_energy_drift_small", np.max(np.abs(energies - energies[0])) < 1e-2 * abs(energies[0]) + 1e-3, 1.0)
show("momentum_conserved", jnp.sum(velT, 0), [0.0, 0.0], atol=1e-4)
show("final_energy", energies[-1])
