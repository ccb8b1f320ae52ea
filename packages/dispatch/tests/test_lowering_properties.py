"""Property tests for the rules with the most parameters: gather and scatter
with random dimension numbers (batching dimensions included), index values
in and out of bounds and every mode; pad with negative and interior
padding; the associative scan behind the cumulative reductions at every
length.  XLA's results must equal core's NumPy implementation."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from test_lowering_harness import F32, I32, bind, check, sample

from plait_core import ShapedArray
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from plait_core.primitives.structural import gather_p, scatter_p

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def _indexing(draw: st.DrawFn) -> dict[str, Any]:
    """A random operand shape, index map, collapsed/batching dimensions,
    window sizes and batch shape, shared by the gather and scatter strategies."""
    rank = draw(st.integers(1, 3))
    shape = draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank))
    dims = list(range(rank))
    batching = draw(st.lists(st.sampled_from(dims), max_size=1, unique=True)) if rank > 1 else []
    free = [d for d in dims if d not in batching]
    index_map = draw(st.permutations(free).map(lambda p: p[: draw(st.integers(1, len(free)))])) if free else []
    collapsed = sorted(draw(st.lists(st.sampled_from(free), unique=True))) if free else []
    window = [1 if d in batching or d in collapsed else draw(st.integers(0, shape[d])) for d in dims]
    batch_rank = draw(st.integers(1 if batching else 0, 2))
    batch = draw(st.lists(st.integers(1, 3), min_size=batch_rank, max_size=batch_rank))
    idx_batch = []
    if batching:
        i = draw(st.integers(0, batch_rank - 1))
        batch[i] = shape[batching[0]]
        idx_batch = [i]
    lo = -2
    values = draw(st.lists(st.integers(lo, max(shape) + 2), min_size=int(np.prod(batch)) * len(index_map),
                           max_size=int(np.prod(batch)) * len(index_map)))
    indices = np.array(values, I32).reshape(*batch, len(index_map))
    return dict(shape=shape, batching=batching, idx_batch=idx_batch, index_map=tuple(index_map),
                collapsed=tuple(collapsed), window=window, batch=batch, indices=indices,
                mode=draw(st.sampled_from(list(GatherScatterMode))))


@SETTINGS
@given(cfg=_indexing(), data=st.data())
def test_gather(cfg: dict[str, Any], data: st.DataObject) -> None:
    kept = [d for d in range(len(cfg["shape"])) if d not in cfg["collapsed"] and d not in cfg["batching"]]
    out_rank = len(cfg["batch"]) + len(kept)
    offset = tuple(sorted(data.draw(st.permutations(range(out_rank)))[: len(kept)]))
    dn = GatherDimensionNumbers(offset_dims=offset, collapsed_slice_dims=cfg["collapsed"],
                                start_index_map=cfg["index_map"], operand_batching_dims=tuple(cfg["batching"]),
                                start_indices_batching_dims=tuple(cfg["idx_batch"]))
    params = dict(dimension_numbers=dn, slice_sizes=tuple(cfg["window"]), indices_are_sorted=False,
                  unique_indices=False, mode=cfg["mode"], fill_value=None)
    operand = sample(F32, cfg["shape"], seed=data.draw(st.integers(0, 99)))
    try:
        gather_p.abstract_eval(ShapedArray(operand.shape, F32), ShapedArray(cfg["indices"].shape, I32), **params)
    except (ValueError, TypeError):
        assume(False)
    check(bind("gather", **params), operand, cfg["indices"])


@SETTINGS
@given(cfg=_indexing(), data=st.data(), name=st.sampled_from(["scatter", "scatter_add", "scatter_mul",
                                                              "scatter_min", "scatter_max"]))
def test_scatter(cfg: dict[str, Any], data: st.DataObject, name: str) -> None:
    rank = len(cfg["shape"])
    inserted = cfg["collapsed"]
    kept = [d for d in range(rank) if d not in inserted and d not in cfg["batching"]]
    upd_rank = len(cfg["batch"]) + len(kept)
    window_dims = tuple(sorted(data.draw(st.permutations(range(upd_rank)))[: len(kept)]))
    sizes = iter(cfg["window"][d] for d in kept)
    batch = iter(cfg["batch"])
    upd_shape = [next(sizes) if i in window_dims else next(batch) for i in range(upd_rank)]
    dn = ScatterDimensionNumbers(update_window_dims=window_dims, inserted_window_dims=inserted,
                                 scatter_dims_to_operand_dims=cfg["index_map"],
                                 operand_batching_dims=tuple(cfg["batching"]),
                                 scatter_indices_batching_dims=tuple(cfg["idx_batch"]))
    params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False, mode=cfg["mode"])
    seed = data.draw(st.integers(0, 99))
    operand = sample(I32, cfg["shape"], -9, 9, seed=seed)
    updates = sample(I32, upd_shape, -9, 9, seed=seed + 1)
    try:
        scatter_p.abstract_eval(ShapedArray(operand.shape, I32), ShapedArray(cfg["indices"].shape, I32),
                                ShapedArray(updates.shape, I32), **params)
    except (ValueError, TypeError):
        assume(False)
    check(bind(name, **params), operand, cfg["indices"], updates)


@SETTINGS
@given(shape=st.lists(st.integers(0, 4), min_size=1, max_size=3), data=st.data())
def test_pad(shape: list[int], data: st.DataObject) -> None:
    config = []
    for d in shape:
        interior = data.draw(st.integers(0, 2))
        grown = d + max(d - 1, 0) * interior
        lo = data.draw(st.integers(-grown, 3))
        hi = data.draw(st.integers(-(grown + lo) if grown + lo > 0 else 0, 3))
        config.append((lo, hi, interior))
    x = sample(F32, shape)
    check(bind("pad", padding_config=tuple(config)), x, np.float32(-7.5))


@SETTINGS
@given(n=st.integers(0, 40), rows=st.integers(1, 3), reverse=st.booleans(),
       name=st.sampled_from(["cumsum", "cumprod", "cummax", "cummin"]), axis=st.integers(0, 1))
def test_cumulative(n: int, rows: int, reverse: bool, name: str, axis: int) -> None:
    shape = (n, rows) if axis == 0 else (rows, n)
    x = sample(I32, shape, -3, 3, seed=n)  # integers: exact whatever the association
    check(bind(name, axis=axis, reverse=reverse), x)
    y = sample(F32, shape, 0.9, 1.1, seed=n)
    check(bind(name, axis=axis, reverse=reverse), y, rtol=1e-5)


@pytest.mark.parametrize("n", [1000, 4097])
def test_long_cumsum(n: int) -> None:
    check(bind("cumsum", axis=0, reverse=False), sample(I32, (n,), -100, 100))
    check(bind("cummax", axis=0, reverse=True), sample(F32, (n,)))
