"""A variational autoencoder's first epoch on synthetic 28 x 28 binary images,
shaped like the MNIST VAE of issue 26 (784-512-10 encoder, 10-512-784
decoder, Bernoulli likelihood): a jitted training step (ELBO gradient,
momentum update), then ``evaluate`` (the test ELBO plus 100 sampled images
tiled into a 10 x 10 grid).  A JAX program: on plait through ``plait.compat``.
"""

import jax
import jax.numpy as jnp
import numpy as np

rnd = jax.random
rng = np.random.RandomState(0)
TRAIN = (rng.rand(1024, 784) < 0.3).astype(np.float32)
TEST = (rng.rand(256, 784) < 0.3).astype(np.float32)
BATCH = 32


def dense(key, m, n):
    return {"w": rnd.normal(key, (m, n)) * np.sqrt(1.0 / m), "b": jnp.zeros(n)}


def init(key):
    k = rnd.split(key, 5)
    return {"enc": dense(k[0], 784, 512), "mu": dense(k[1], 512, 10), "sig": dense(k[2], 512, 10),
            "dec1": dense(k[3], 10, 512), "dec2": dense(k[4], 512, 784)}


def layer(p, x):
    return x @ p["w"] + p["b"]


def decode(params, z):
    return layer(params["dec2"], jax.nn.softplus(layer(params["dec1"], z)))


def elbo(key, params, images):
    h = jax.nn.softplus(layer(params["enc"], images))
    mu, sigma = layer(params["mu"], h), jax.nn.softplus(layer(params["sig"], h))
    z = mu + sigma * rnd.normal(key, mu.shape)
    logits = decode(params, z)
    log_lik = jnp.sum(images * jax.nn.log_sigmoid(logits) + (1 - images) * jax.nn.log_sigmoid(-logits))
    kl = 0.5 * jnp.sum(sigma**2 + mu**2 - 1.0 - 2.0 * jnp.log(sigma))
    return (log_lik - kl) / images.shape[0]


@jax.jit
def step(key, params, velocity, images):
    g = jax.grad(lambda p: -elbo(key, p, images))(params)
    velocity = jax.tree_util.tree_map(lambda v, d: 0.9 * v + d, velocity, g)
    return jax.tree_util.tree_map(lambda p, v: p - 1e-3 * v, params, velocity), velocity


def grid(nrow, ncol, vecs):
    images = iter(vecs.reshape((-1, 28, 28)))
    return jnp.vstack([jnp.hstack([next(images).T for _ in range(ncol)][::-1]) for _ in range(nrow)]).T


@jax.jit
def evaluate(params, images):
    k1, k2, k3 = rnd.split(rnd.key(1), 3)
    binarized = rnd.bernoulli(k1, images)
    test_elbo = elbo(k2, params, binarized)
    sampled = rnd.bernoulli(k3, jax.nn.sigmoid(decode(params, rnd.normal(k3, (100, 10)))))
    return test_elbo, grid(10, 10, sampled)


params = init(rnd.key(0))
velocity = jax.tree_util.tree_map(jnp.zeros_like, params)
for i in range(TRAIN.shape[0] // BATCH):
    params, velocity = step(rnd.fold_in(rnd.key(2), i), params, velocity, TRAIN[i * BATCH:(i + 1) * BATCH])
test_elbo, image = evaluate(params, TEST)
print(round(float(test_elbo), 2), image.shape)
