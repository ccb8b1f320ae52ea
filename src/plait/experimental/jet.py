"""``plait.experimental.jet``: Taylor-mode differentiation (JAX's ``jet``).

``jet(fun, primals, series)`` propagates truncated Taylor series through
``fun``.  Each input is the curve ``x(t) = x0 + x1 t + x2 t^2/2! + ... +
xK t^K/K!`` (``primals`` gives the ``x0``, ``series`` one list ``[x1, ...,
xK]`` per input, every list of the same length ``K``); the result is
``(fun(x0), [y1, ..., yK])`` with ``yk`` the ``k``-th derivative of
``fun(x(t))`` at ``t = 0``.  With ``factorial_scaled=False`` the
coefficients are the plain Taylor coefficients (``x(t) = x0 + x1 t + x2 t^2 +
...``), in and out.

plait computes the ``k``-th derivative by nesting ``k`` forward-mode
derivatives (``jvp``) of the scalar-parameter curve, not with JAX's
dedicated Taylor rules: the values are the same, but the work grows
exponentially with the order ``K``, so it suits low orders.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from plait_autodiff import jvp
from plait_core import numpy as pnp
from plait_core.tree_util import tree_map

__all__ = ["jet"]


def _derivatives(g: Callable[[Any], Any], order: int) -> list[Any]:
    """``[g(0), g'(0), ..., g^(order)(0)]`` for a function of a scalar ``t``."""
    fns: list[Callable[[Any], Any]] = [g]
    for _ in range(order):
        prev = fns[-1]

        def deriv(t: Any, prev: Callable[[Any], Any] = prev) -> Any:
            return jvp(prev, (t,), (pnp.ones_like(t),))[1]

        fns.append(deriv)
    t0 = pnp.zeros((), dtype=pnp.result_type(float))
    return [f(t0) for f in fns]


def jet(fun: Callable[..., Any], primals: Sequence[Any], series: Sequence[Sequence[Any]],
        factorial_scaled: bool = True, **_: Any) -> tuple[Any, list[Any]]:
    """``(fun(*primals), [y1, ..., yK])``: the Taylor coefficients of ``fun``
    along the input curves given by ``primals`` and ``series`` (see the module's
    documentation for the convention)."""
    primals = tuple(primals)
    series = [list(s) for s in series]
    if len(series) != len(primals):
        raise ValueError(f"jet: got {len(primals)} primals but {len(series)} series; give one series per primal")
    orders = {len(s) for s in series}
    if len(orders) > 1:
        raise ValueError(f"jet: every series must have the same length (the order), got lengths {sorted(orders)}")
    order = orders.pop() if orders else 0
    for i, x in enumerate(primals):
        if not (hasattr(x, "dtype") or isinstance(x, (bool, int, float, complex))):
            raise ValueError(f"primal value at position {i} is not an array")
    for x, s in zip(primals, series):
        for term in s:
            if pnp.shape(term) != pnp.shape(x):
                raise ValueError(f"jet: a series term of shape {pnp.shape(term)} for a primal of shape {pnp.shape(x)}; "
                                 "terms must have their primal's shape")
    if not factorial_scaled:
        series = [[term * math.factorial(k + 1) for k, term in enumerate(s)] for s in series]

    def curve(t: Any) -> Any:
        xs = []
        for x, s in zip(primals, series):
            value = x
            for k, term in enumerate(s, start=1):
                value = value + term * (t ** k / math.factorial(k))
            xs.append(value)
        return fun(*xs)

    values = _derivatives(curve, order)
    out, terms = tree_map(pnp.asarray, fun(*primals)), values[1:]
    if not factorial_scaled:
        terms = [tree_map(lambda y, k=k: y / math.factorial(k), term) for k, term in enumerate(terms, start=1)]
    return out, terms
