"""Gradient checks against finite differences, as ``jax.test_util``.

``check_grads(f, args, order)`` compares plait's forward-mode (``jvp``) and
reverse-mode (``vjp``) derivatives of ``f`` at ``args`` with central
differences, up to ``order`` (derivatives of derivatives are checked by
applying the same test to ``jvp`` of ``f`` and to the map
``args -> vjp(f, *args)[1](f(*args))``).  Tangents and cotangents are drawn from
``numpy.random.RandomState(0)``; a mismatch raises ``AssertionError``.

Tolerances (``atol``, ``rtol``) are numbers or dicts from dtype to number;
by default 2e-3 for float32, 1e-5 for float64, 1e-2 for float16, 1e-1 for
bfloat16, 1e-3 for complex64 and 1e-5 for complex128, and each tolerance is
multiplied by the size of the arrays compared, as in JAX.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff import jvp, vjp
from plait_core import dtypes
from plait_core.tree_util import tree_leaves, tree_map

EPS = 1e-4
"""The default finite-difference step."""

Tolerance = float | dict[Any, float] | None

_GRADIENT_TOLERANCE: dict[np.dtype[Any], float] = {
    np.dtype(dtypes.bfloat16): 1e-1,
    np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


def _dtype(x: Any) -> np.dtype[Any]:
    if isinstance(x, bool):
        return np.dtype(np.bool_)
    if isinstance(x, int):
        return dtypes.default_int_dtype()
    if isinstance(x, float):
        return dtypes.default_float_dtype()
    if isinstance(x, complex):
        return dtypes.default_complex_dtype()
    return np.dtype(getattr(x, "dtype", None) or np.asarray(x).dtype)


def _is_python_scalar(x: Any) -> bool:
    return isinstance(x, (bool, int, float, complex))


def _tolerance(dtype: np.dtype[Any], tol: Tolerance, default: dict[np.dtype[Any], float]) -> float:
    if tol is not None and not isinstance(tol, dict):
        return float(tol)
    table = dict(default)
    for key, value in (tol or {}).items():
        table[np.dtype(key)] = value
    dt = dtypes.canonicalize_dtype(dtype) if dtype != dtypes.float0 else dtype
    return table.get(np.dtype(dt), 0.0)


def _assert_close(x: Any, y: Any, atol: Tolerance, rtol: Tolerance, err_msg: str) -> None:
    a, b = np.asarray(x), np.asarray(y)
    if a.shape != b.shape:
        raise AssertionError(f"{err_msg}: shapes differ, {a.shape} and {b.shape}")
    if a.dtype == dtypes.float0 or b.dtype == dtypes.float0:
        return
    at = max(_tolerance(a.dtype, atol, _GRADIENT_TOLERANCE), _tolerance(b.dtype, atol, _GRADIENT_TOLERANCE))
    rt = max(_tolerance(a.dtype, rtol, _GRADIENT_TOLERANCE), _tolerance(b.dtype, rtol, _GRADIENT_TOLERANCE))
    if a.dtype == dtypes.bfloat16:
        a = a.astype(np.float32)
    if b.dtype == dtypes.bfloat16:
        b = b.astype(np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, atol=at * a.size, rtol=rt * b.size, err_msg=err_msg)


def check_close(xs: Any, ys: Any, atol: Tolerance = None, rtol: Tolerance = None, err_msg: str = "") -> None:
    """Assert that the pytrees ``xs`` and ``ys`` are equal up to the tolerances."""
    x_leaves, y_leaves = tree_leaves(xs), tree_leaves(ys)
    if len(x_leaves) != len(y_leaves):
        raise AssertionError(f"{err_msg}: {len(x_leaves)} values against {len(y_leaves)}")
    for x, y in zip(x_leaves, y_leaves):
        _assert_close(x, y, atol, rtol, err_msg)


def _tree_op(op: Callable[..., Any], *trees: Any) -> Any:
    """``op`` leaf by leaf in the first leaf's dtype (Python scalars stay scalars)."""

    def apply(*leaves: Any) -> Any:
        dt = _dtype(leaves[0])
        if not dtypes.is_inexact(dt):
            return leaves[0]
        result = np.asarray(op(*[np.asarray(v) for v in leaves]), dtype=dt)
        return result.item() if all(_is_python_scalar(v) for v in leaves) else result

    return tree_map(apply, *trees)


def _scale(tree: Any, a: float) -> Any:
    return _tree_op(lambda x: x * np.asarray(a, x.dtype), tree)


def _safe_sub(x: Any, y: Any) -> Any:
    """``x - y`` with ``inf - inf == 0``."""
    with np.errstate(invalid="ignore"):
        return np.where(np.equal(x, y), np.zeros((), x.dtype), np.subtract(x, y, dtype=x.dtype))


def rand_like(rng: np.random.RandomState, x: Any) -> Any:
    """Standard normal values of ``x``'s shape and dtype (complex parts each
    standard normal); zeros of dtype float0 for integer and boolean ``x``."""
    shape = np.shape(x)
    dt = _dtype(x)
    if not dtypes.is_inexact(dt):
        return np.zeros(shape, dtypes.float0)
    draw = np.asarray(rng.randn(*shape), dtype=dt)
    if dtypes.is_complex(dt):
        draw = draw + dt.type(1j) * np.asarray(rng.randn(*shape), dtype=dt)
    return draw.item() if _is_python_scalar(x) else draw


def numerical_jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], eps: float = EPS) -> Any:
    """The central difference ``(f(x + eps t) - f(x - eps t)) / (2 eps)``."""
    delta = _scale(tangents, eps)
    plus = f(*_tree_op(np.add, list(primals), list(delta)))
    minus = f(*_tree_op(np.subtract, list(primals), list(delta)))
    to_np = functools.partial(tree_map, np.asarray)
    diff = tree_map(_safe_sub, to_np(plus), to_np(minus))
    return _scale(diff, 0.5 / eps)


def _inner(xs: Any, ys: Any) -> Any:
    """The real inner product of two pytrees, in their (real) dtype."""
    total: Any = np.float32(0)
    for x, y in zip(tree_leaves(xs), tree_leaves(ys)):
        x_arr, y_arr = np.asarray(x), np.asarray(y)
        if x_arr.dtype == dtypes.float0 or y_arr.dtype == dtypes.float0:
            continue
        total = total + np.real(np.dot(np.conj(x_arr).reshape(-1), y_arr.reshape(-1)))
    return total


def _msg(err_msg: str, what: str) -> str:
    return f"{err_msg} {what}" if err_msg else what


def check_jvp(f: Callable[..., Any], f_jvp: Callable[..., Any], args: Sequence[Any], atol: Tolerance = None,
              rtol: Tolerance = None, eps: float = EPS, err_msg: str = "") -> None:
    """Check ``f_jvp(args, tangents) -> (f(*args), tangent_out)`` against ``f``
    and a central difference along random tangents; AssertionError if not close."""
    rng = np.random.RandomState(0)
    tangent = tree_map(functools.partial(rand_like, rng), tuple(args))
    v_out, t_out = f_jvp(tuple(args), tangent)
    v_expected = f(*args)
    t_expected = numerical_jvp(f, args, tangent, eps=eps)
    check_close(v_out, v_expected, atol=atol, rtol=rtol, err_msg=_msg(err_msg, "primal"))
    check_close(t_out, t_expected, atol=atol, rtol=rtol, err_msg=_msg(err_msg, "tangent"))


def check_vjp(f: Callable[..., Any], f_vjp: Callable[..., Any], args: Sequence[Any], atol: Tolerance = None,
              rtol: Tolerance = None, eps: float = EPS, err_msg: str = "") -> None:
    """Check ``f_vjp(*args) -> (f(*args), vjp_fun)``: for random ``t`` and ``c``,
    ``<t, vjp_fun(c)>`` must match ``<jvp_numerical(t), c>``; AssertionError if not."""
    rng = np.random.RandomState(0)
    v_out, vjp_fun = f_vjp(*args)
    v_expected = f(*args)
    check_close(v_out, v_expected, atol=atol, rtol=rtol, err_msg=_msg(err_msg, "primal"))
    tangent = tree_map(functools.partial(rand_like, rng), tuple(args))
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = tree_map(functools.partial(rand_like, rng), v_out)
    cotangent_out = tree_map(np.conj, vjp_fun(tree_map(np.conj, cotangent)))
    ip = _inner(tangent, cotangent_out)
    ip_expected = _inner(tangent_out, cotangent)
    check_close(ip, ip_expected, atol=atol, rtol=rtol, err_msg=_msg(err_msg, "cotangent projection"))


def check_grads(f: Callable[..., Any], args: Sequence[Any], order: int, modes: Sequence[str] = ("fwd", "rev"),
                atol: Tolerance = None, rtol: Tolerance = None, eps: float | None = None) -> None:
    """Check ``f``'s derivatives at ``args`` up to ``order`` in ``modes``
    (``"fwd"``: jvp, ``"rev"``: vjp) against central differences with step
    ``eps`` (default 1e-4); raises ``AssertionError`` naming the failing mode
    (``"JVP of VJP tangent"``, say) when they are not close."""
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"check_grads: order must be a positive integer, got {order!r}")
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads: modes must be 'fwd' and/or 'rev', got {sorted(unknown)}")
    step = EPS if eps is None else eps

    def check(fun: Callable[..., Any], fun_args: tuple[Any, ...], n: int, err_msg: str) -> None:
        if "fwd" in modes:
            fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
            fun_jvp = functools.partial(jvp, fun)
            check_jvp(fun, fun_jvp, fun_args, atol=atol, rtol=rtol, eps=step, err_msg=fwd_msg)
            if n > 1:
                check(fun_jvp, (fun_args, fun_args), n - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(fun, functools.partial(vjp, fun), fun_args, atol=atol, rtol=rtol, eps=step, err_msg=rev_msg)
            if n > 1:

                def pulled_back(*xs: Any) -> Any:
                    out, pullback = vjp(fun, *xs)
                    return pullback(out)

                check(pulled_back, fun_args, n - 1, rev_msg)

    check(f, tuple(args), order, "")


__all__ = ["EPS", "check_close", "check_grads", "check_jvp", "check_vjp", "numerical_jvp", "rand_like"]
