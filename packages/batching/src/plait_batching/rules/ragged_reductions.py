"""Ragged rules of the reductions family.

A reduction over a ragged axis first fills the padding with the reduction's
identity (0 for sums, 1 for products, the lowest value for maxima, ...), so
the padding never changes a result; reductions over static axes run on the
padded data as they are.  Each reduced axis is filled by its own size's mask,
so a value with ragged axes of different sizes (``n x m``) reduces over either.  Cumulative operations run from the start of the
axis, so only the reverse ones need the fill.  ``sort`` along a ragged axis
sorts each element's true entries and puts the padding after them: a first
key "is padding" (0 or 1) goes in front of the sort's keys, so the true
entries are ordered exactly as sorting the true slice orders them (NaN last,
ties stable), and ``argsort`` and descending sorts, built on ``sort`` and
``rev``, follow; the other axes may have ragged sizes of their own (sorting
each query's ``n x m`` scores over the keys).  (``lax.top_k`` needs a static shape, so it takes no ragged value.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_batching.moves import to_front
from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    env_of,
    fill_padding,
    operands,
    padded_rule,
    several_size_types,
    wrap_results,
)
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import Primitive, dtypes, get_aval, set_current_trace
from plait_core.primitives import reductions as r
from plait_core.primitives import structural as st
from plait_core.primitives.elementwise import convert_element_type_p, not_p

Identity = Callable[[np.dtype[Any]], Any]


def _lowest(dt: np.dtype[Any]) -> Any:
    if dtypes.is_bool(dt):
        return False
    if dtypes.is_int(dt):
        return np.iinfo(dt).min
    return -np.inf


def _highest(dt: np.dtype[Any]) -> Any:
    if dtypes.is_bool(dt):
        return True
    if dtypes.is_int(dt):
        return np.iinfo(dt).max
    return np.inf


def _const(v: Any) -> Identity:
    return lambda dt: v


def _filled(identity: Identity, axes_of: Callable[[dict[str, Any]], Sequence[int]]) -> Callable[..., list[Any]]:
    """A ``prepare`` filling the padding along the reduced ragged axes with the identity."""

    def prepare(env: RaggedEnv, ops: Sequence[Operand], params: dict[str, Any]) -> list[Any]:
        (x,) = ops
        return [fill_padding(env, x, axes_of(params), identity(x.aval.dtype))]

    return prepare


def _axes(params: dict[str, Any]) -> Sequence[int]:
    return params["axes"]  # type: ignore[no-any-return]


def _reverse_axis(params: dict[str, Any]) -> Sequence[int]:
    return (params["axis"],) if params["reverse"] else ()


for _p, _id in (
    (r.reduce_sum_p, _const(0)), (r.reduce_prod_p, _const(1)), (r.reduce_max_p, _lowest),
    (r.reduce_min_p, _highest), (r.reduce_and_p, _const(True)), (r.reduce_or_p, _const(False)),
    (r.argmax_p, _lowest), (r.argmin_p, _highest),
):  # fmt: skip
    ragged_rules[_p] = padded_rule(prepare=_filled(_id, _axes), several_sizes=True)

for _p, _id in ((r.cumsum_p, _const(0)), (r.cumprod_p, _const(1)), (r.cummax_p, _lowest), (r.cummin_p, _highest)):
    ragged_rules[_p] = padded_rule(prepare=_filled(_id, _reverse_axis), several_sizes=True)


def _sort(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    env = env_of(trace)
    ops = operands(trace, prim, args)
    k = params["dimension"]
    d = ops[0].aval.shape[k]
    if not env.is_ragged(d):
        return _padded(trace, prim, args, params)
    avals = several_size_types(env, prim, ops, params)  # the other axes may have other ragged sizes
    with set_current_trace(trace.parent_trace):
        vals = [to_front(o.val, o.bdim, env.axis.size) for o in ops]
        full = get_aval(vals[0]).shape
        # A first key, 0 for true entries and 1 for padding, sorts the padding last.
        flag = convert_element_type_p.bind(not_p.bind(env.mask(d, True)), new_dtype=np.dtype(np.int32), weak_type=False)
        flag = st.broadcast_in_dim_p.bind(flag, shape=full, broadcast_dimensions=(0, k + 1))
        outs = r.sort_p.bind(
            flag, *vals, dimension=k + 1, is_stable=params["is_stable"], num_keys=params["num_keys"] + 1
        )
    return wrap_results(trace, prim, outs[1:], [0] * len(ops), avals)


_padded = padded_rule(several_sizes=True)
ragged_rules[r.sort_p] = _sort
