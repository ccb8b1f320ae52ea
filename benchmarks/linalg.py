"""Linear algebra under ``jit``: plait's LAPACK lowering against JAX's.

Each program runs on a batch of 16 float32 256x256 matrices (symmetric
positive definite where the operation needs it), once through plait and once
through JAX, the results are compared, and then the warm compiled calls are
timed interleaved:

* ``cholesky``, ``solve`` (16 right-hand sides per matrix), ``eigh``
  (eigenvalues and vectors) and ``svd`` (reduced, with vectors): both
  frameworks call the same LAPACK kernels that jaxlib ships (``potrf``,
  ``getrf`` + ``trsm``, ``syevd``, ``gesdd``), so the target is parity;
* the gradient of ``slogdet`` summed over the batch (an LU, then the
  transposed triangular solves of its JVP);
* the gradient of a Gaussian-process log marginal likelihood in its three
  kernel hyperparameters (256 points: an RBF kernel, Cholesky, a triangular
  solve and the log determinant).

Run alone with ``python -m benchmarks.linalg``.  Both frameworks call the
LAPACK that jaxlib binds (SciPy's OpenBLAS), in one process; on a loaded
machine its threads fight each other and every number drifts, so
``OPENBLAS_NUM_THREADS=1`` gives the comparable (single-threaded) figures.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, fmt_seconds, interleaved

BATCH, N = 16, 256
GP_POINTS = 256


def _plait() -> Any | None:
    try:
        return importlib.import_module("plait")
    except ImportError:
        return None


def matrices(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A general batch, a symmetric positive definite batch and right-hand sides."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((BATCH, N, N)).astype(np.float32) / np.sqrt(N)
    spd = (a @ np.swapaxes(a, -1, -2) + np.eye(N, dtype=np.float32)).astype(np.float32)
    b = rng.standard_normal((BATCH, N, 16)).astype(np.float32)
    return a + np.eye(N, dtype=np.float32), spd, b


def programs(np_mod: Any, lax_mod: Any) -> dict[str, tuple[Callable[..., Any], str]]:
    """The benchmarked functions, written once for ``plait`` or ``jax``: name -> (function, argument kinds)."""

    def eigh(s: Any) -> Any:
        w, v = np_mod.linalg.eigh(s)
        return w, v

    def svd(a: Any) -> Any:
        u, s, vh = np_mod.linalg.svd(a, full_matrices=False)
        return u, s, vh

    return {
        "cholesky": (np_mod.linalg.cholesky, "s"),
        "solve": (np_mod.linalg.solve, "ab"),
        "eigh": (eigh, "s"),
        "svd": (svd, "a"),
        "grad of slogdet": (lambda a: np_mod.sum(np_mod.linalg.slogdet(a)[1]), "a"),
    }


def gp_objective(np_mod: Any, lax_mod: Any) -> Callable[..., Any]:
    """The negative log marginal likelihood of a GP with an RBF kernel."""

    def nll(params: Any, x: Any, y: Any) -> Any:
        length, amp, noise = np_mod.exp(params[0]), np_mod.exp(params[1]), np_mod.exp(params[2])
        d = x[:, None] - x[None, :]
        k = amp**2 * np_mod.exp(-0.5 * (d / length) ** 2) + (noise**2 + 1e-4) * np_mod.eye(x.shape[0])
        chol = np_mod.linalg.cholesky(k)
        z = lax_mod.linalg.triangular_solve(chol, y[:, None], left_side=True, lower=True)
        return 0.5 * np_mod.sum(z**2) + np_mod.sum(np_mod.log(np_mod.diagonal(chol)))

    return nll


def _close(got: Any, want: Any, what: str, rtol: float = 2e-3, atol: float = 2e-3) -> None:
    g, w = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for x, y in zip(g, w):
        x, y = np.asarray(x), np.asarray(y)
        if what in ("eigh", "svd") and x.ndim == 3:  # vectors: up to a sign per column
            x, y = np.abs(x), np.abs(y)
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol, err_msg=f"{what}: plait vs JAX")


def linalg_results(jax: Any | None, repeats: int = 15) -> list[Result]:
    plait = _plait()
    if plait is None:
        return []
    a, s, b = matrices()
    args = {"a": a, "s": s, "b": b}
    rows: list[Result] = []
    p_progs = programs(plait.numpy, plait.lax)
    j_progs = programs(jax.numpy, jax.lax) if jax is not None else {}
    for name, (pf, kinds) in p_progs.items():
        grad = name.startswith("grad")
        pfun = plait.jit(plait.grad(pf) if grad else pf)
        p_in = [plait.device_put(args[k]) for k in kinds]
        p_out = pfun(*p_in)
        j_run = None
        if jax is not None:
            jf = j_progs[name][0]
            jfun = jax.jit(jax.grad(jf) if grad else jf)
            j_in = [jax.device_put(args[k]) for k in kinds]
            _close(p_out, jfun(*j_in), name)

            def j_run(jfun: Any = jfun, j_in: Any = j_in) -> object:
                return jax.block_until_ready(jfun(*j_in))

        def p_run(pfun: Any = pfun, p_in: Any = p_in) -> object:
            return plait.block_until_ready(pfun(*p_in))

        p_run()
        if j_run is not None:
            j_run()
        p, j = interleaved(p_run, j_run, repeats)
        target = "≤ 1.05× JAX" if grad else "≤ 1.02× JAX"
        what = "`jit(grad(sum of slogdet))`" if grad else f"`jit(linalg.{name})`"
        rows.append(Result(f"{what}, batch {BATCH} of {N}×{N} float32", p, j, target))
    rows.append(_gp(plait, jax, repeats))
    return rows


def _gp(plait: Any, jax: Any | None, repeats: int) -> Result:
    rng = np.random.default_rng(5)
    x = np.sort(rng.uniform(0, 10, GP_POINTS)).astype(np.float32)
    y = (np.sin(x) + 0.1 * rng.standard_normal(GP_POINTS)).astype(np.float32)
    params = np.array([0.0, 0.0, -1.0], np.float32)
    pg = plait.jit(plait.grad(gp_objective(plait.numpy, plait.lax)))
    p_in = [plait.device_put(v) for v in (params, x, y)]
    got = pg(*p_in)
    j_run = None
    if jax is not None:
        jg = jax.jit(jax.grad(gp_objective(jax.numpy, jax.lax)))
        j_in = [jax.device_put(v) for v in (params, x, y)]
        _close(got, jg(*j_in), "GP gradient", rtol=1e-2, atol=1e-2)

        def j_run() -> object:
            return jax.block_until_ready(jg(*j_in))

    def p_run() -> object:
        return plait.block_until_ready(pg(*p_in))

    p_run()
    if j_run is not None:
        j_run()
    p, j = interleaved(p_run, j_run, repeats)
    return Result(f"`jit(grad(GP negative log marginal likelihood))`, {GP_POINTS} points", p, j, "≤ 1.05× JAX")


if __name__ == "__main__":
    try:
        _jax = importlib.import_module("jax")
    except ImportError:
        _jax = None
    for r in linalg_results(_jax):
        ratio = "—" if r.ratio is None else f"{r.ratio:.2f}×"
        print(f"{r.name}: plait {fmt_seconds(r.plait)}, JAX {fmt_seconds(r.jax)}, {ratio} ({r.target})")
