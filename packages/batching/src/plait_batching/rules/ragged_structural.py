"""Ragged rules of the structural family.

The padded layout keeps each element's true entries at the start of every
ragged axis.  Operations that keep that true (broadcasting, transposes,
adding or dropping unit axes, ``iota``, slices that start at a fixed offset,
padding in front, concatenating along static axes, reshapes that regroup the
axes around a ragged axis) run on the padded data unchanged.  Those that
would move true entries past the padding (reversing or padding at the end of
a ragged axis, a slice starting at a ragged offset, a reshape that merges a
ragged axis with others) are refused with a ``ValueError`` that says why.

Indexing (dynamic slices, gather, scatter) is in :mod:`ragged_indexing`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import Operand, RaggedEnv, padded_rule, ragged_axes, refuse
from plait_batching.registries import ragged_rules
from plait_core import Primitive
from plait_core.dims import Dim, definitely_equal
from plait_core.primitives import structural as st

_padded = padded_rule()

for _p in (st.broadcast_in_dim_p, st.squeeze_p, st.expand_dims_p, st.transpose_p, st.iota_p, st.copy_p):
    ragged_rules[_p] = _padded


def _segments(env: RaggedEnv, shape: Sequence[Dim]) -> tuple[list[Dim], list[Dim]] | None:
    """The ragged sizes of ``shape`` in order and the products of the static
    runs between them (``None`` when a run is not static)."""
    ragged: list[Dim] = []
    runs: list[Dim] = [1]
    for d in shape:
        if env.is_ragged(d):
            ragged.append(d)
            runs.append(1)
        else:
            runs[-1] = runs[-1] * d
    return ragged, runs


def _check_reshape(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    (x,) = ops
    shape = x.aval.shape
    if params.get("dimensions") is not None:
        shape = tuple(shape[i] for i in params["dimensions"])
    a, b = _segments(env, shape), _segments(env, params["new_sizes"])
    same = (
        a is not None and b is not None and len(a[0]) == len(b[0])
        and all(definitely_equal(p, q) for p, q in zip(a[0], b[0]))
        and all(type(p) is int and definitely_equal(p, q) for p, q in zip(a[1], b[1]))
    )  # fmt: skip
    if not same:
        raise refuse(
            prim, ops, env,
            f"to the shape {tuple(params['new_sizes'])} would mix a ragged axis with other axes; a reshape of a "
            "ragged value must keep each ragged axis and regroup only the static axes around it",
        )  # fmt: skip


ragged_rules[st.reshape_p] = padded_rule(_check_reshape)


def _check_slice(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    (x,) = ops
    strides = params["strides"]
    for a in ragged_axes(env, x.aval):
        start = params["start_indices"][a]
        if type(start) is not int:
            raise refuse(
                prim, ops, env,
                f"starts axis {a} at the ragged offset {start}; slices of a ragged axis must start at a fixed offset",
            )  # fmt: skip
        if strides is not None and strides[a] != 1:
            raise refuse(prim, ops, env, f"has stride {strides[a]} along the ragged axis {a}; only stride 1 is supported")


ragged_rules[st.slice_p] = padded_rule(_check_slice)


def _check_pad(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    x = ops[0]
    for a in ragged_axes(env, x.aval):
        lo, hi, interior = params["padding_config"][a]
        if hi != 0 or interior != 0:
            raise refuse(
                prim, ops, env,
                f"pads the ragged axis {a} with (low, high, interior) = ({lo}, {hi}, {interior}); a ragged axis "
                "can only be padded (or cut) at its start",
            )  # fmt: skip


ragged_rules[st.pad_p] = padded_rule(_check_pad)


def _check_concatenate(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    k = params["dimension"]
    if any(env.is_ragged(o.aval.shape[k]) for o in ops):
        raise refuse(prim, ops, env, f"joins values along the ragged axis {k}; only static axes can be concatenated")


ragged_rules[st.concatenate_p] = padded_rule(_check_concatenate)


def _check_rev(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    bad = [a for a in params["dimensions"] if a in ragged_axes(env, ops[0].aval)]
    if bad:
        raise refuse(prim, ops, env, f"reverses the ragged axis {bad[0]}, which would move the padding in front")


ragged_rules[st.rev_p] = padded_rule(_check_rev)
