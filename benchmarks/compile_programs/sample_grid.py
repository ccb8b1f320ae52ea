"""Issue 26's repro: Bernoulli samples (Threefry) of a decoder's logits tiled
into a 10 x 10 grid of 28 x 28 images with vstack/hstack/transpose, as the
``evaluate`` of JAX's ``examples/mnist_vae.py`` does.  Run as a script it is a
JAX program (on plait through ``plait.compat``); :func:`make_sample` builds
it on either library for :mod:`benchmarks.compile`."""

from typing import Any

import numpy as np

W1 = np.random.RandomState(0).randn(10, 512).astype(np.float32) * 0.1
W2 = np.random.RandomState(1).randn(512, 784).astype(np.float32) * 0.1
DATA = np.random.RandomState(2).rand(512, 784).astype(np.float32)


def make_sample(lib: Any, seed: int) -> Any:
    """The jitted sampler of ``lib`` (``jax`` or ``plait``); ``seed`` is a
    constant of the program (a new seed, a new program: no cache answers)."""
    jnp, rnd = lib.numpy, lib.random

    def grid(nrow: int, ncol: int, vecs: Any) -> Any:
        images = iter(vecs.reshape((-1, 28, 28)))
        return jnp.vstack([jnp.hstack([next(images).T for _ in range(ncol)][::-1]) for _ in range(nrow)]).T

    @lib.jit
    def sample(w1: Any, w2: Any, data: Any) -> Any:
        k1, k2, k3 = rnd.split(rnd.key(seed), 3)
        test = rnd.bernoulli(k3, data)
        logits = jnp.tanh(rnd.normal(k1, (100, 10)) @ w1) @ w2
        imgs = rnd.bernoulli(k2, jnp.logaddexp(0.0, logits))
        return jnp.mean(test), grid(10, 10, imgs)

    return sample


if __name__ == "__main__":
    import jax

    mean, image = make_sample(jax, 1)(W1, W2, DATA)
    print(round(float(mean), 6), image.shape, int(np.asarray(image).sum()))
