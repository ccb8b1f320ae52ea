"""Padded rules of the reductions family.

A reduction over a padded axis first fills that axis's padding with the
identity of its monoid (:attr:`~plait_core.primitive.Primitive.identity`),
so the padding adds nothing (a sum skips the fill when the environment
knows the padding sums as zero already:
:meth:`~plait_core.padded.env.PaddedEnv.sums_as_zero`); ``argmax`` fills with the smallest value
(``argmin`` the largest): the padding follows the logical part and ties go
to the first index.  A cumulative reduction running forward only reads the
prefix, so it runs as it is; running in reverse it reads the padding first,
which is filled with the identity.  ``sort`` along a padded axis gets a
leading key, 0 in the logical part and 1 in the padding, so the padding
sorts after every logical entry whatever it holds, and the logical entries
are ordered exactly as sorting the logical slice orders them (NaN last, ties
stable).  Every rule treats each padded axis on its own (``per_axis``).

A maximum or minimum (and ``argmax``, ``argmin``) fills the padding only in
the rows whose other padded axes are logical
(:meth:`~plait_core.padded.env.PaddedEnv.fill_rows`): the rows of the
padding keep their finite data, so their maximum is finite even where they
have no logical entry (every row of an empty element), where ``-inf`` would
make ``x - max(x)`` infinite in the padding, and a derivative taken outside
the computation multiplies such padding into true results (NaN).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import ops
from plait_core.abstract import ShapedArray
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitive import Primitive
from plait_core.primitives import reductions as red

__all__: list[str] = []


def _identity(prim: Primitive, aval: ShapedArray) -> Any:
    identity = prim.identity
    assert identity is not None, f"{prim.name} has no identity"
    return identity(aval.dtype)


#: Reductions whose fill is not finite (or extreme): they fill only the rows a logical result reads.
_ROWS = (red.reduce_max_p, red.reduce_min_p, red.argmax_p, red.argmin_p)


def _reducer(prim: Primitive) -> Any:
    rows = prim in _ROWS

    def rule(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        (x,), (aval,) = vals, avals
        axes = params["axes"]
        if rows:
            x = env.fill_rows(x, aval, axes, _identity(prim, aval))
        elif not (prim is red.reduce_sum_p and env.sums_as_zero(x, aval, axes)):
            x = env.fill(x, aval, axes, _identity(prim, aval))
        return prim.bind(x, **params)

    rule.__name__ = f"{prim.name}_padded_rule"
    return rule


def _cumulative(prim: Primitive) -> Any:
    def rule(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, axis: int, reverse: bool) -> Any:
        (x,), (aval,) = vals, avals
        if reverse:
            x = env.fill(x, aval, (axis,), _identity(prim, aval))
        return prim.bind(x, axis=axis, reverse=reverse)

    rule.__name__ = f"{prim.name}_padded_rule"
    return rule


for _p in (red.reduce_sum_p, red.reduce_prod_p, red.reduce_max_p, red.reduce_min_p, red.reduce_and_p,
           red.reduce_or_p, red.argmax_p, red.argmin_p):  # fmt: skip
    padded_rules.define(_reducer(_p), _p, per_axis=True)
for _p in (red.cumsum_p, red.cumprod_p, red.cummax_p, red.cummin_p):
    padded_rules.define(_cumulative(_p), _p, per_axis=True)


def _sort(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension: int, is_stable: bool,
    num_keys: int,
) -> list[Any]:  # fmt: skip
    d = avals[0].shape[dimension]
    if not env.is_padded(d):
        return list(red.sort_p.bind(*vals, dimension=dimension, is_stable=is_stable, num_keys=num_keys))
    shape = env.padded_shape(avals[0].shape)
    i32 = np.dtype(np.int32)
    key = ops.select(env.valid_along(shape, dimension, d), ops.full(shape, 0, i32), ops.full(shape, 1, i32))
    out = red.sort_p.bind(key, *vals, dimension=dimension, is_stable=is_stable, num_keys=num_keys + 1)
    return list(out[1:])


padded_rules.define(_sort, red.sort_p, per_axis=True)
