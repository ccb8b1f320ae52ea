"""Batching rule of the host-callback primitive, by the call's kind and
``vmap_method`` (JAX's semantics):

* ``debug`` callbacks run once per element, unrolled, in order;
* ``io_callback`` (unordered) runs once per element in a loop; an ordered
  one cannot be batched (ValueError, as in JAX);
* ``pure_callback``: ``'sequential'`` loops over the elements
  (``lax.map``), ``'sequential_unrolled'`` unrolls that loop,
  ``'expand_dims'`` calls once with the batch axis first and unbatched
  arguments given a leading axis of size 1, ``'broadcast_all'`` calls once
  with every argument broadcast to the batch; ``None`` is an error that
  says to choose one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core.dims import dim_as_int
from plait_core.lax.control_flow import map as lax_map
from plait_core.lax.structural import concatenate, expand_dims, index_in_dim
from plait_core.primitives.callbacks import callback_p


def _element(args: Sequence[Any], dims: Sequence[BDim], i: int) -> list[Any]:
    return [x if d is None else index_in_dim(x, i, d, keepdims=False) for x, d in zip(args, dims)]


def _unrolled(size: int, args: Sequence[Any], dims: Sequence[BDim], params: dict[str, Any]) -> list[Any]:
    per_element = [callback_p.bind(*_element(args, dims, i), **params) for i in range(size)]
    n = len(params["result_avals"])
    return [concatenate([expand_dims(outs[j], (0,)) for outs in per_element], 0) for j in range(n)]


def _sequential(size: int, args: Sequence[Any], dims: Sequence[BDim], params: dict[str, Any]) -> list[Any]:
    batched = [to_front(x, d, size) for x, d in zip(args, dims) if d is not None]
    where = [d is not None for d in dims]

    def body(xs: list[Any]) -> list[Any]:
        it = iter(xs)
        call_args = [next(it) if b else x for x, b in zip(args, where)]
        return list(callback_p.bind(*call_args, **params))

    return list(lax_map(body, batched))


def _callback_rule(
    axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any
) -> tuple[list[Any], list[BDim]]:
    kind, method = params["kind"], params["vmap_method"]
    name = params["callback"].name
    size = dim_as_int(axis.size, f"the batch size of vmap over the host callback {name}")
    n = len(params["result_avals"])
    if kind == "debug":
        outs = _unrolled(size, args, dims, params)
    elif kind == "io":
        if params["ordered"]:
            raise ValueError(f"cannot vmap an ordered io_callback ({name}): its effects would have no order")
        outs = _sequential(size, args, dims, params)
    elif method is None:
        raise NotImplementedError(
            f"not supported: vmap of pure_callback {name} without a vmap_method; pass vmap_method='sequential', "
            "'sequential_unrolled', 'expand_dims' or 'broadcast_all' to say how the callback handles a batch"
        )
    elif method == "sequential":
        outs = _sequential(size, args, dims, params)
    elif method == "sequential_unrolled":
        outs = _unrolled(size, args, dims, params)
    else:
        if method == "expand_dims":
            moved = [expand_dims(x, (0,)) if d is None else to_front(x, d, size) for x, d in zip(args, dims)]
        else:  # broadcast_all
            moved = [to_front(x, d, size) for x, d in zip(args, dims)]
        avals = tuple(a.update(shape=(size, *a.shape)) for a in params["result_avals"])
        outs = list(callback_p.bind(*moved, **{**params, "result_avals": avals}))
    return outs, [0] * n


batching_rules[callback_p] = _callback_rule
