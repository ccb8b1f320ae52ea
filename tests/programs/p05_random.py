"""Tutorial: pseudo-random numbers (keys, split, fold_in, distributions)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

key = jax.random.PRNGKey(0)
k1, k2 = jax.random.split(key)
x = jax.random.normal(k1, (5000,))
u = jax.random.uniform(k2, (5000,), minval=-1.0, maxval=3.0)
show("normal_moments", [jnp.mean(x), jnp.var(x)], [0.0, 1.0], atol=0.05)
show("uniform_moments", [jnp.mean(u), jnp.min(u) >= -1, jnp.max(u) < 3], [1.0, 1.0, 1.0], atol=0.05)
show("first_normals", x[:4])
show("fold_in", jax.random.uniform(jax.random.fold_in(key, 7), (3,)))
perm = jax.random.permutation(k1, 10)
show("perm_sorted", jnp.sort(perm), np.arange(10))
c = jax.random.categorical(k2, jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(5000,))
show("categorical_freq", jnp.bincount(c, length=3) / 5000, [0.1, 0.2, 0.7], atol=0.05)
b = jax.random.bernoulli(k1, 0.3, (5000,))
show("bernoulli_mean", jnp.mean(b), 0.3, atol=0.05)
typed = jax.random.key(42)
show("typed_split_shape", jax.random.split(typed, 3).shape, [3])
show("same_seed_same_draw", jax.random.normal(jax.random.key(1), (3,)) - jax.random.normal(jax.random.key(1), (3,)), np.zeros(3))
