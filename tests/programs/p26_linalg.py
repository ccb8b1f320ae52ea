"""Linear algebra: solve, inv, det, slogdet, eigh, svd, qr, cholesky, norm vs NumPy float64."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

rng = np.random.default_rng(6)
A = rng.normal(size=(4, 4))
S = A @ A.T + 4 * np.eye(4)
b = rng.normal(size=4)
show("solve", jnp.linalg.solve(S, b), np.linalg.solve(S, b), rtol=1e-4)
show("inv", jnp.linalg.inv(S), np.linalg.inv(S), rtol=1e-4, atol=1e-5)
show("det", jnp.linalg.det(A), np.linalg.det(A), rtol=1e-4)
show("slogdet", jnp.linalg.slogdet(S)[1], np.linalg.slogdet(S)[1], rtol=1e-5)
show("eigvalsh", jnp.linalg.eigvalsh(S), np.linalg.eigvalsh(S), rtol=1e-4)
show("svals", jnp.linalg.svd(A, compute_uv=False), np.linalg.svd(A, compute_uv=False), rtol=1e-4)
q, r = jnp.linalg.qr(A)
show("qr_reconstructs", q @ r, A, rtol=1e-4, atol=1e-5)
L = jnp.linalg.cholesky(S)
show("cholesky", L, np.linalg.cholesky(S), rtol=1e-4, atol=1e-5)
show("norms", [jnp.linalg.norm(A), jnp.linalg.norm(b, 1), jnp.linalg.norm(A, 2)],
     [np.linalg.norm(A), np.linalg.norm(b, 1), np.linalg.norm(A, 2)], rtol=1e-4)
show("grad_logdet", jax.grad(lambda m: jnp.linalg.slogdet(m)[1])(jnp.asarray(S)), np.linalg.inv(S).T, rtol=1e-3, atol=1e-4)
show("matrix_power", jnp.linalg.matrix_power(jnp.asarray(A), 3), np.linalg.matrix_power(A, 3), rtol=1e-4, atol=1e-4)
