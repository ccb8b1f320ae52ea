"""Ragged rules of the indexing primitives: dynamic slices, gather, scatter.

``dynamic_slice`` and ``dynamic_update_slice`` take whole windows along
ragged axes; ``gather`` reads whole windows along ragged axes of the operand,
and its ragged indices have their padding set to 0 so every index it reads is
in bounds.  The scatters are not supported: padded updates would be written
into true entries.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import Operand, RaggedEnv, fill_padding, padded_rule, ragged_axes, refuse
from plait_batching.registries import ragged_rules
from plait_core import Primitive
from plait_core.dims import Dim, definitely_equal
from plait_core.primitives import structural as st


def _full_windows(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], sizes: Sequence[Dim], x: Operand) -> None:
    for a in ragged_axes(env, x.aval):
        if not definitely_equal(sizes[a], x.aval.shape[a]):
            raise refuse(
                prim, ops, env,
                f"takes a window of size {sizes[a]} along the ragged axis {a}; windows must span a whole ragged axis",
            )  # fmt: skip


def _check_dynamic_slice(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    _full_windows(env, prim, ops, params["slice_sizes"], ops[0])


def _check_dynamic_update_slice(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    x, upd = ops[0], ops[1]
    _full_windows(env, prim, ops, upd.aval.shape, x)
    _full_windows(env, prim, ops, x.aval.shape, upd)


ragged_rules[st.dynamic_slice_p] = padded_rule(_check_dynamic_slice)
ragged_rules[st.dynamic_update_slice_p] = padded_rule(_check_dynamic_update_slice)


def _check_gather(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    x = ops[0]
    dn = params["dimension_numbers"]
    indexed = set(dn.start_index_map) | set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
    bad = [a for a in ragged_axes(env, x.aval) if a in indexed]
    if bad:
        raise refuse(prim, ops, env, f"indexes into the ragged axis {bad[0]} of its operand, which is not supported")
    _full_windows(env, prim, ops, params["slice_sizes"], x)


def _gather_in_bounds(env: RaggedEnv, ops: Sequence[Operand], params: dict[str, Any]) -> list[Any]:
    x, idx = ops
    return [x.val, fill_padding(env, idx, range(idx.aval.ndim), 0)]


ragged_rules[st.gather_p] = padded_rule(_check_gather, _gather_in_bounds)

for _p in (st.scatter_p, st.scatter_add_p, st.scatter_mul_p, st.scatter_min_p, st.scatter_max_p):
    ragged_rules.not_supported(
        _p, "the padding of ragged indices or updates would be written into true entries of the result"
    )
