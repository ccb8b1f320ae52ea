"""Record ``jax.random.multivariate_normal`` draws (JAX 0.10.2) for
``tests/test_random_multivariate.py``.  Run with a Python that has JAX:

    python tests/data/gen_multivariate_normal.py > tests/data/jax_multivariate_normal_0.10.2.json
"""

import json

import jax
import jax.numpy as jnp
import numpy as np


def cases() -> dict[str, list[float]]:
    a = np.array([[1.0, 0.5, -0.3], [0.2, 1.5, 0.4], [-0.7, 0.1, 0.9]], np.float32)
    cov = a @ a.T + np.eye(3, dtype=np.float32)
    mean = np.array([0.0, 1.0, -2.0], np.float32)
    key = jax.random.PRNGKey(3)
    out = {}
    for method in ("cholesky", "eigh", "svd"):
        out[method] = np.asarray(jax.random.multivariate_normal(key, mean, cov, (4,), method=method)).tolist()
    out["batched"] = np.asarray(jax.random.multivariate_normal(key, jnp.stack([mean, -mean]), cov)).tolist()
    return out


if __name__ == "__main__":
    print(json.dumps({"jax": jax.__version__, "cases": cases()}, indent=1))
