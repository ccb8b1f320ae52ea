"""FFTs under ``jit``: plait's ``stablehlo.fft`` lowering against JAX's.

A batch of 16 float32 (complex64) 256x256 signals, transformed over the last
two axes: ``fft2`` of complex input, ``rfft2`` of real input, the round trip
``irfft2(rfft2(x))``, and the gradient of the spectral energy
``sum(|rfft2(x)|**2)`` (whose transpose is an FFT of the padded cotangent).
Both frameworks hand the same XLA operation to the same CPU FFT library, so
the target is parity.  Run alone with ``python -m benchmarks.fft``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, fmt_seconds, interleaved

BATCH, N = 16, 256


def _plait() -> Any | None:
    try:
        return importlib.import_module("plait")
    except ImportError:
        return None


def signals(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((BATCH, N, N)).astype(np.float32)
    z = (x + 1j * rng.standard_normal((BATCH, N, N))).astype(np.complex64)
    return x, z


def programs(np_mod: Any) -> dict[str, tuple[Callable[..., Any], str, bool]]:
    """name -> (function, argument kind: real ``x`` or complex ``z``, differentiate)."""
    fft = np_mod.fft
    return {
        "fft2": (fft.fft2, "z", False),
        "rfft2": (fft.rfft2, "x", False),
        "irfft2(rfft2)": (lambda x: fft.irfft2(fft.rfft2(x), s=(N, N)), "x", False),
        "grad of sum |rfft2|^2": (lambda x: np_mod.sum(np_mod.abs(fft.rfft2(x)) ** 2), "x", True),
    }


def _close(got: Any, want: Any, what: str) -> None:
    g, w = np.asarray(got), np.asarray(want)
    scale = max(1.0, float(np.abs(w).max()))
    np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4 * scale, err_msg=f"{what}: plait vs JAX")


def fft_results(jax: Any | None, repeats: int = 15) -> list[Result]:
    plait = _plait()
    if plait is None:
        return []
    x, z = signals()
    args = {"x": x, "z": z}
    rows: list[Result] = []
    j_progs = programs(jax.numpy) if jax is not None else {}
    for name, (pf, kind, grad) in programs(plait.numpy).items():
        pfun = plait.jit(plait.grad(pf) if grad else pf)
        p_in = plait.device_put(args[kind])
        p_out = pfun(p_in)
        j_run = None
        if jax is not None:
            jf = j_progs[name][0]
            jfun = jax.jit(jax.grad(jf) if grad else jf)
            j_in = jax.device_put(args[kind])
            _close(p_out, jfun(j_in), name)

            def j_run(jfun: Any = jfun, j_in: Any = j_in) -> object:
                return jax.block_until_ready(jfun(j_in))

        def p_run(pfun: Any = pfun, p_in: Any = p_in) -> object:
            return plait.block_until_ready(pfun(p_in))

        p_run()
        if j_run is not None:
            j_run()
        p, j = interleaved(p_run, j_run, repeats)
        target = "≤ 1.05× JAX" if grad else "≤ 1.02× JAX"
        what = f"`jit(grad({name[8:]}))`" if grad else f"`jit(fft.{name})`"
        rows.append(Result(f"{what}, batch {BATCH} of {N}×{N}", p, j, target))
    return rows


if __name__ == "__main__":
    try:
        _jax = importlib.import_module("jax")
    except ImportError:
        _jax = None
    for r in fft_results(_jax):
        ratio = "—" if r.ratio is None else f"{r.ratio:.2f}×"
        print(f"{r.name}: plait {fmt_seconds(r.plait)}, JAX {fmt_seconds(r.jax)}, {ratio} ({r.target})")
