"""``plait.experimental.ode``: ``odeint``, an adaptive ODE solver (JAX's
``jax.experimental.ode``).

``odeint(func, y0, t, *args)`` integrates ``dy/dt = func(y, t, *args)`` from
``y(t[0]) = y0`` and returns ``y`` at every time of ``t`` (stacked on a new
leading axis, for every leaf of the pytree ``y0``).  The solver is the
Dormand-Prince 5(4) embedded Runge-Kutta pair with adaptive steps: a step is
accepted when its error estimate, measured against ``atol + rtol * |y|`` in
the root-mean-square norm, is at most 1; outputs between steps come from the
method's 4th-order dense interpolant.  ``mxstep`` bounds the steps per output
interval, ``hmax`` the step size.  ``t`` must be increasing.

It is differentiable in reverse mode (``grad``, ``vjp``) by the adjoint
method: the gradient solves the adjoint ODE backwards in time with the same
solver, for ``y0``, ``t`` and every array in ``args`` (values ``func`` closes
over are differentiated too).  It works under ``jit`` and ``vmap``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from plait._jax_extras import closure_convert
from plait_autodiff import vjp
from plait_batching import vmap
from plait_core import dtypes, lax
from plait_core import numpy as pnp
from plait_core.custom_derivatives import custom_vjp
from plait_core.flatten_util import ravel_pytree
from plait_core.tree_util import tree_leaves

__all__ = ["odeint"]

# Dormand-Prince 5(4): nodes, stage weights, 5th-order weights and their
# difference from the 4th-order ones (the error estimate).
_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1])
_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84],
]
_B5 = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_B4 = np.array([5179 / 57600, 0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40])
# Weights of the stages for y at the middle of a step (Shampine's dense output).
_MID = np.array([6025192743 / 30085553152, 0, 51252292925 / 65400821598, -2691868925 / 45128329728,
                 187940372067 / 1594534317056, -1776094331 / 19743644256, 11237099 / 235043384]) / 2

Fn = Callable[[Any, Any], Any]


def _rk_step(fn: Fn, y: Any, f0: Any, t: Any, dt: Any) -> tuple[Any, Any, Any, Any]:
    """One Dormand-Prince step: (y1, f(y1), error estimate, stage derivatives)."""
    ks = [f0]
    for i in range(1, 7):
        incr = sum(float(a) * k for a, k in zip(_A[i], ks) if a != 0)
        ks.append(fn(y + dt * incr, t + float(_C[i]) * dt))
    k = pnp.stack(ks)
    y1 = y + dt * pnp.tensordot(pnp.asarray(_B5, y.dtype), k, axes=1)
    err = dt * pnp.tensordot(pnp.asarray(_B5 - _B4, y.dtype), k, axes=1)
    return y1, ks[-1], err, k


def _interp_coeffs(y0: Any, y1: Any, k: Any, dt: Any) -> Any:
    """The quartic through y0, y1, the mid-step value and the end slopes, in the
    step's relative time x in [0, 1]: coefficients of x^4, x^3, x^2, x, 1."""
    y_mid = y0 + dt * pnp.tensordot(pnp.asarray(_MID, y0.dtype), k, axes=1)
    d0, d1 = dt * k[0], dt * k[-1]
    a = -2 * d0 + 2 * d1 - 8 * y0 - 8 * y1 + 16 * y_mid
    b = 5 * d0 - 3 * d1 + 18 * y0 + 14 * y1 - 32 * y_mid
    c = -4 * d0 + d1 - 11 * y0 - 5 * y1 + 16 * y_mid
    return pnp.stack([a, b, c, d0, y0])


def _error_ratio(err: Any, rtol: float, atol: float, y0: Any, y1: Any) -> Any:
    tol = atol + rtol * pnp.maximum(pnp.abs(y0), pnp.abs(y1))
    return pnp.mean((err / tol) ** 2)


def _next_step(dt: Any, ratio: Any, hmax: float) -> Any:
    """The next step size from the squared RMS error ratio (safety 0.9, growth at
    most 10x, shrink at most 5x on a rejected step, order 5)."""
    shrink = pnp.where(ratio < 1, 1.0, 0.2)
    factor = pnp.maximum(0.1, pnp.minimum(pnp.sqrt(ratio) ** 0.2 / 0.9, 1 / shrink))
    new = pnp.where(ratio == 0, dt * 10.0, dt / factor)
    return pnp.minimum(new, hmax)


def _initial_step(fn: Fn, t0: Any, y0: Any, f0: Any, rtol: float, atol: float) -> Any:
    """Hairer, Nørsett and Wanner's starting step for a method of order 4."""
    scale = atol + pnp.abs(y0) * rtol
    d0 = pnp.sqrt(pnp.mean((y0 / scale) ** 2))
    d1 = pnp.sqrt(pnp.mean((f0 / scale) ** 2))
    h0 = pnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fn(y0 + h0 * f0, t0 + h0)
    d2 = pnp.sqrt(pnp.mean(((f1 - f0) / scale) ** 2)) / h0
    h1 = pnp.where((d1 <= 1e-15) & (d2 <= 1e-15), pnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / pnp.maximum(d1, d2)) ** (1.0 / 5))
    return pnp.minimum(100 * h0, h1)


def _solve(fn: Fn, rtol: float, atol: float, mxstep: float, hmax: float, y0: Any, ts: Any) -> Any:
    """y at every time of ``ts`` (forward in time), y0 at ts[0]."""
    f0 = fn(y0, ts[0])
    dt = pnp.minimum(_initial_step(fn, ts[0], y0, f0, rtol, atol), hmax)
    coeffs = pnp.zeros((5, *y0.shape), y0.dtype)

    def to_time(carry: Any, target: Any) -> tuple[Any, Any]:
        def unfinished(state: Any) -> Any:
            i, (_, _, t, dt, _, _) = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state: Any) -> Any:
            i, (y, f, t, dt, last_t, coeffs) = state
            y1, f1, err, k = _rk_step(fn, y, f, t, dt)
            ratio = _error_ratio(err, rtol, atol, y, y1)
            new_dt = _next_step(dt, ratio, hmax)
            accept = ratio <= 1
            new = (y1, f1, t + dt, new_dt, t, _interp_coeffs(y, y1, k, dt))
            old = (y, f, t, new_dt, last_t, coeffs)
            return i + 1, tuple(pnp.where(accept, a, b) for a, b in zip(new, old))

        _, carry = lax.while_loop(unfinished, step, (0, carry))
        _, _, t, _, last_t, coeffs = carry
        x = (target - last_t) / (t - last_t)
        y_at = coeffs[0]
        for c in coeffs[1:]:
            y_at = y_at * x + c
        return carry, y_at

    init = (y0, f0, ts[0], dt, ts[0], coeffs)
    _, ys = lax.scan(to_time, init, ts[1:])
    return pnp.concatenate([y0[None], ys])


def odeint(func: Callable[..., Any], y0: Any, t: Any, *args: Any, rtol: float = 1.4e-8, atol: float = 1.4e-8,
           mxstep: float = np.inf, hmax: float = np.inf) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` with ``y(t[0]) = y0``; ``y`` at each
    time of ``t``, stacked on a leading axis (see the module's documentation)."""
    for arg in args:
        for leaf in tree_leaves(arg):
            if not (hasattr(leaf, "dtype") or isinstance(leaf, (bool, int, float, complex))):
                raise TypeError(f"The contents of odeint *args must be arrays or scalars, but got {leaf}.")
    t = pnp.asarray(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a one-dimensional array of times, got shape {tuple(t.shape)}")
    flat_y0, unravel_y = ravel_pytree(y0)
    dtype = dtypes.result_type(flat_y0, t, float)
    flat_y0, t = flat_y0.astype(dtype), t.astype(dtype)
    flat_args, unravel_args = ravel_pytree(args)
    converted, consts = closure_convert(lambda y, tt, a: func(unravel_y(y), tt, *unravel_args(a)), flat_y0, t[0],
                                        flat_args)
    flat_consts, unravel_consts = ravel_pytree(consts)

    def f(y: Any, tt: Any, a: Any, cs: Any) -> Any:
        return ravel_pytree(converted(y, tt, a, *unravel_consts(cs)))[0].astype(y.dtype)

    @custom_vjp
    def solve(y0: Any, ts: Any, a: Any, cs: Any) -> Any:
        return _solve(lambda y, tt: f(y, tt, a, cs), rtol, atol, mxstep, hmax, y0, ts)

    def solve_fwd(y0: Any, ts: Any, a: Any, cs: Any) -> tuple[Any, Any]:
        ys = solve(y0, ts, a, cs)
        return ys, (ys, ts, a, cs)

    def solve_bwd(res: Any, g: Any) -> tuple[Any, Any, Any, Any]:
        ys, ts, a, cs = res
        n, m = ys.shape[1], a.shape[0]

        def augmented(state: Any, s: Any) -> Any:  # the adjoint system in reversed time s = -t
            y, adj = state[:n], state[n:2 * n]
            ydot, pullback = vjp(lambda y, a, cs: f(y, -s, a, cs), y, a, cs)
            adj_y, adj_a, adj_cs = pullback(adj)
            return pnp.concatenate([-ydot, adj_y, adj_a, adj_cs])

        adj = pnp.zeros_like(ys[0])
        params_bar = pnp.zeros((m + cs.shape[0],), ys.dtype)
        t_bar = []
        for i in range(ts.shape[0] - 1, 0, -1):
            adj = adj + g[i]
            t_bar.append(pnp.dot(f(ys[i], ts[i], a, cs), g[i]))
            state = pnp.concatenate([ys[i], adj, params_bar])
            path = _solve(augmented, rtol, atol, mxstep, hmax, state, pnp.stack([-ts[i], -ts[i - 1]]))
            adj, params_bar = path[1, n:2 * n], path[1, 2 * n:]
        adj = adj + g[0]
        t0_bar = -pnp.dot(f(ys[0], ts[0], a, cs), adj)
        ts_bar = pnp.stack([t0_bar, *reversed(t_bar)])
        return adj, ts_bar, params_bar[:m], params_bar[m:]

    solve.defvjp(solve_fwd, solve_bwd)
    ys = solve(flat_y0, t, flat_args, flat_consts)
    return vmap(unravel_y)(ys)
