"""JVP and transpose rules of the windows family (``reduce_window*``,
``select_and_gather_add``, ``select_and_scatter_add``).

* ``reduce_window_sum`` is linear.  Its transpose spreads each window's
  cotangent back over the window: the cotangent, dilated by the strides and
  padded by the window's span, summed over windows of the same (dilated)
  size, read with the base dilation as stride; what the forward padding
  added is cropped by starting the padding that much later.
* ``reduce_window_max``/``_min``: the tangent of a window is the tangent of
  the element the window selects (``select_and_gather_add``, linear in the
  tangent); its transpose adds each window's cotangent at that element
  (``select_and_scatter_add``), whose own transpose gathers again.  As in
  JAX, reverse mode through max/min windows with ``window_dilation`` is not
  supported (XLA's select-and-scatter has no window dilation).
* The generic ``reduce_window`` differentiates its computation
  (:func:`~plait_autodiff.jvp.jvp_jaxpr`) and reduces (primal, tangent)
  pairs in one variadic ``reduce_window``; the init values must not carry
  tangents (JAX's TypeError).  Those pairs are not linear in the tangents,
  so it has no reverse mode (a NonlinearError says so, as JAX refuses too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_autodiff.jaxpr_util import reorder
from plait_autodiff.jvp import jvp_jaxpr
from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import declare_nonlinear, def_transpose, deflinear, zero_outputs
from plait_autodiff.tangents import Zero, instantiate
from plait_autodiff.transpose import NonlinearError
from plait_core import ops
from plait_core.primitives import reduce_window as rw
from plait_core.primitives.linalg import dilated_size

# ---------------------------------------------------------------------------
# reduce_window_sum


def _sum_transpose(
    ct: Any, x: Any, *, window_dimensions: Sequence[int], window_strides: Sequence[int],
    padding: Sequence[tuple[int, int]], base_dilation: Sequence[int], window_dilation: Sequence[int],
) -> list[Any]:  # fmt: skip
    shape = x.aval.shape
    out_shape = ops.aval(ct).shape
    config = []
    for n, o, w, s, (lo, _), b, d in zip(shape, out_shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        span = dilated_size(w, d)
        low = span - 1 - lo
        high = (n - 1) * b + span - low - dilated_size(o, s)
        config.append((low, high, s - 1))
    padded = ops.pad(ct, ops.const(ct, 0), config)
    rank = len(shape)
    out = rw.reduce_window_sum_p.bind(
        padded,
        window_dimensions=tuple(window_dimensions),
        window_strides=tuple(base_dilation),
        padding=((0, 0),) * rank,
        base_dilation=(1,) * rank,
        window_dilation=tuple(window_dilation),
    )
    return [out]


deflinear(rw.reduce_window_sum_p, _sum_transpose)


# ---------------------------------------------------------------------------
# max / min windows


def _chooser_jvp(select: str) -> Any:
    prim = rw.reduce_window_max_p if select == "ge" else rw.reduce_window_min_p

    def rule(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, **params)
        if type(t) is Zero:
            return ans, zero_outputs(prim, ans)
        return ans, rw.select_and_gather_add_p.bind(t, x, select=select, **params)

    return rule


jvp_rules[rw.reduce_window_max_p] = _chooser_jvp("ge")
jvp_rules[rw.reduce_window_min_p] = _chooser_jvp("le")


def _gather_transpose(
    ct: Any, tangent: Any, operand: Any, *, select: str, window_dimensions: Sequence[int],
    window_strides: Sequence[int], padding: Sequence[tuple[int, int]], base_dilation: Sequence[int],
    window_dilation: Sequence[int],
) -> list[Any]:  # fmt: skip
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(
            "not supported: reverse-mode differentiation of a max/min reduce_window with window_dilation "
            f"{tuple(window_dilation)} (XLA's select-and-scatter has no window dilation; JAX refuses it too)"
        )
    dilated = any(b != 1 for b in base_dilation)
    if dilated:
        fill = rw.identity("max" if select == "ge" else "min", ops.aval(operand).dtype)
        operand = ops.pad(operand, fill, [(0, 0, b - 1) for b in base_dilation])
    out = rw.select_and_scatter_add_p.bind(
        ct, operand, select=select, window_dimensions=window_dimensions, window_strides=window_strides, padding=padding
    )
    if dilated:
        shape = ops.aval(out).shape
        out = ops.slice_(out, (0,) * len(shape), shape, tuple(base_dilation))
    return [out, None]


def _scatter_transpose(ct: Any, source: Any, operand: Any, *, select: str, **params: Any) -> list[Any]:
    rank = len(params["window_dimensions"])
    ones = (1,) * rank
    out = rw.select_and_gather_add_p.bind(ct, operand, select=select, base_dilation=ones, window_dilation=ones, **params)
    return [out, None]


deflinear(rw.select_and_gather_add_p, _gather_transpose, linear_argnums=(0,))
deflinear(rw.select_and_scatter_add_p, _scatter_transpose, linear_argnums=(0,))


# ---------------------------------------------------------------------------
# The generic reduce_window


def _generic_jvp(primals: Sequence[Any], tangents: Sequence[Any], *, jaxpr: Any, **params: Any) -> tuple[Any, Any]:
    n = len(primals) // 2
    if any(type(t) is not Zero for t in tangents[n:]):
        raise TypeError("reduce_window: cannot differentiate with respect to the init values (JAX's restriction too)")
    ans = rw.reduce_window_p.bind(*primals, jaxpr=jaxpr, **params)
    if all(type(t) is Zero for t in tangents[:n]):
        return ans, [Zero.from_primal_value(a) for a in ans]
    # The body's inputs are (accumulators, elements); both carry tangents.
    jvp_body, _ = jvp_jaxpr(jaxpr, [True] * (2 * n), True)
    # jvp_body takes (acc, elem, t_acc, t_elem); reduce_window's body wants
    # (acc, t_acc, elem, t_elem) in the pairs' order.
    order = [*range(n), *range(2 * n, 3 * n), *range(n, 2 * n), *range(3 * n, 4 * n)]
    body = reorder(jvp_body, in_order=order)
    operands, inits = list(primals[:n]), list(primals[n:])
    t_ops = [instantiate(t) for t in tangents[:n]]
    t_inits = [ops.zeros_like(i) for i in inits]
    # The primal results are computed apart, so that they do not depend on
    # the tangents (linearize needs that); the pairs give the tangents.
    outs = rw.reduce_window_p.bind(*operands, *t_ops, *inits, *t_inits, jaxpr=body, **params)
    return list(ans), list(outs[n:])


jvp_rules[rw.reduce_window_p] = _generic_jvp


@def_transpose(rw.reduce_window_p)
def _generic_transpose(ct: Any, *args: Any, **params: Any) -> list[Any]:
    raise NonlinearError(
        "cannot differentiate lax.reduce_window with a general computation in reverse mode: its JVP reduces "
        "(primal, tangent) pairs together, which is not linear in the tangents (JAX has the same limitation); "
        "use the sum/max/min forms (lax.add from 0, lax.max from -inf, lax.min from +inf), forward mode (jvp, "
        "jacfwd), or a custom_vjp"
    )


declare_nonlinear(rw.reduce_window_max_p, rw.reduce_window_min_p)
