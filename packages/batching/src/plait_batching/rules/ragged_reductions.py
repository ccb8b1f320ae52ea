"""Ragged rules of the reductions family.

A reduction over a ragged axis first fills the padding with the reduction's
identity (0 for sums, 1 for products, the lowest value for maxima, ...), so
the padding never changes a result; reductions over static axes run on the
padded data as they are.  Cumulative operations run from the start of the
axis, so only the reverse ones need the fill.  ``sort`` along a ragged axis
is not supported (the padding would be sorted in).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_batching.ragged import Operand, RaggedEnv, fill_padding, padded_rule, ragged_axes, refuse
from plait_batching.registries import ragged_rules
from plait_core import Primitive, dtypes
from plait_core.primitives import reductions as r

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
    ragged_rules[_p] = padded_rule(prepare=_filled(_id, _axes))

for _p, _id in ((r.cumsum_p, _const(0)), (r.cumprod_p, _const(1)), (r.cummax_p, _lowest), (r.cummin_p, _highest)):
    ragged_rules[_p] = padded_rule(prepare=_filled(_id, _reverse_axis))


def _check_sort(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    k = params["dimension"]
    if any(k in ragged_axes(env, o.aval) for o in ops):
        raise refuse(prim, ops, env, f"sorts along the ragged axis {k}, which is not supported")


ragged_rules[r.sort_p] = padded_rule(_check_sort)
