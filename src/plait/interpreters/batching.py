"""``jax.interpreters.batching`` for extension primitives: their ``vmap`` rules.

plait-batching calls a rule as ``rule(axis, args, dims, **params)`` with the
parent trace current, ``axis`` the vmap's ``AxisData`` (``name``, ``size``,
``spmd_name``), ``dims`` one batch dimension or ``None`` (:data:`not_mapped`)
per operand, and expects ``(out, out_dim)`` (sequences of both for
``multiple_results``).  JAX's three tables differ only in what the rule is
given first, so each is a view of plait-batching's registry
(:mod:`plait.interpreters._tables`):

* ``primitive_batchers[p] = rule(args, dims, **params)``;
* ``fancy_primitive_batchers[p] = rule(axis_data, args, dims, **params)``;
* ``axis_primitive_batchers[p] = rule(axis_size, axis_name, trace_type,
  args, dims, **params)`` (``trace_type`` is ``None``, as in JAX 0.10).

What a rule returns is checked (one batch dimension per result, each
``None`` or an axis of that result; a negative one counts from the end).
Inside ``vmap`` over piles, an extension primitive with a ragged operand
follows its ``lower_fun`` function instead (:mod:`plait.interpreters._expansion`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import plait_core.numpy as pnp
from plait.extend._primitive import Primitive, on_new_primitive
from plait.interpreters._tables import RuleTable, check_primitive
from plait_batching import register_vmappable
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core import Primitive as AnyPrimitive
from plait_core import get_aval

__all__ = [
    "AxisData",
    "axis_primitive_batchers",
    "bdim_at_front",
    "broadcast",
    "defbroadcasting",
    "defvectorized",
    "fancy_primitive_batchers",
    "moveaxis",
    "not_mapped",
    "primitive_batchers",
    "register_vmappable",
]

JaxRule = Callable[..., Any]

#: The batch dimension of a value that is not batched.
not_mapped = None


def _check_dim(prim: AnyPrimitive, value: Any, dim: Any, k: int | None) -> int | None:
    where = f"the batching rule of {prim.name}" + ("" if k is None else f" (result {k})")
    if dim is None:
        return None
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(
            f"{where} returned the batch dimension {dim!r}; expected an int or batching.not_mapped"
        )
    ndim = len(get_aval(value).shape)
    if not -ndim <= dim < ndim:
        raise ValueError(f"{where} returned the batch dimension {dim} for a result of rank {ndim}")
    return dim % ndim


def _adapter(call: Callable[[JaxRule, AxisData, Sequence[Any], Sequence[Any], dict[str, Any]], Any]) -> Any:
    def make(prim: AnyPrimitive, rule: JaxRule) -> JaxRule:
        def batch(axis: AxisData, args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple[Any, Any]:
            if all(d is None for d in dims):
                out = prim.bind(*args, **params)
                return (out, [None] * len(out)) if prim.multiple_results else (out, None)
            res = call(rule, axis, list(args), list(dims), params)
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(f"the batching rule of {prim.name} must return (out, out_dim), got {res!r}")
            out, out_dim = res
            if not prim.multiple_results:
                return out, _check_dim(prim, out, out_dim, None)
            if not (isinstance(out, (list, tuple)) and isinstance(out_dim, (list, tuple))):
                raise TypeError(
                    f"the batching rule of {prim.name} (multiple_results) must return two sequences (outs, "
                    f"out_dims), got {type(out).__name__} and {type(out_dim).__name__}"
                )
            if len(out) != len(out_dim):
                raise ValueError(
                    f"the batching rule of {prim.name} returned {len(out)} results and {len(out_dim)} batch dimensions"
                )
            return list(out), [_check_dim(prim, o, d, k) for k, (o, d) in enumerate(zip(out, out_dim))]

        batch.__name__ = f"batch_{prim.name}"
        return batch

    return make


#: ``primitive_batchers[p] = rule(args, dims, **params) -> (out, out_dim)``.
primitive_batchers = RuleTable(
    "batching.primitive_batchers", batching_rules,
    _adapter(lambda rule, axis, args, dims, params: rule(args, dims, **params)), shares_convention=False,
)  # fmt: skip

#: ``fancy_primitive_batchers[p] = rule(axis_data, args, dims, **params) -> (out, out_dim)``.
fancy_primitive_batchers = RuleTable(
    "batching.fancy_primitive_batchers", batching_rules,
    _adapter(lambda rule, axis, args, dims, params: rule(axis, args, dims, **params)), shares_convention=False,
)  # fmt: skip

#: ``axis_primitive_batchers[p] = rule(axis_size, axis_name, None, args, dims, **params)``.
axis_primitive_batchers = RuleTable(
    "batching.axis_primitive_batchers", batching_rules,
    _adapter(lambda rule, axis, args, dims, params: rule(axis.size, axis.name, None, args, dims, **params)),
    shares_convention=False,
)  # fmt: skip


def defvectorized(prim: AnyPrimitive) -> None:
    """``prim`` acts elementwise on operands of one shape: under ``vmap`` it is
    applied to the batched operands as they are (every operand must be batched
    along the same dimension)."""
    prim = check_primitive(prim, "batching.defvectorized")

    def rule(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        if len(set(dims)) != 1:
            raise ValueError(
                f"vmap of the vectorized primitive {prim.name}: every operand must be batched along one "
                f"dimension, got batch dimensions {list(dims)}"
            )
        out = prim.bind(*args, **params)
        return (out, [dims[0]] * len(out)) if prim.multiple_results else (out, dims[0])

    primitive_batchers[prim] = rule


def defbroadcasting(prim: AnyPrimitive) -> None:
    """``prim`` broadcasts its operands as NumPy does over axes of size 1 (and
    rank-0 operands): under ``vmap`` the batch dimension of every batched
    operand is moved to the front, unbatched operands get a leading axis of
    size 1, and batched operands of lower rank get trailing axes of size 1;
    operands that already agree (one shape, one batch dimension) are passed
    as they are."""
    prim = check_primitive(prim, "batching.defbroadcasting")

    def rule(args: Sequence[Any], dims: Sequence[Any], **params: Any) -> tuple[Any, Any]:
        shapes = [tuple(get_aval(x).shape) for x in args]
        batched = [(s, d) for s, d in zip(shapes, dims) if d is not None]
        shape, dim = batched[0]
        if all(s == shape and d == dim for s, d in zip(shapes, dims) if len(s)):
            out = prim.bind(*args, **params)
            return (out, [dim] * len(out)) if prim.multiple_results else (out, dim)
        moved = [bdim_at_front(x, d, 1) if len(s) else x for x, s, d in zip(args, shapes, dims)]
        rank = max(len(get_aval(x).shape) for x in moved)
        moved = [
            x if d is None or len(get_aval(x).shape) == rank
            else pnp.reshape(x, (*get_aval(x).shape, *(1,) * (rank - len(get_aval(x).shape))))
            for x, d in zip(moved, dims)
        ]  # fmt: skip
        out = prim.bind(*moved, **params)
        return (out, [0] * len(out)) if prim.multiple_results else (out, 0)

    primitive_batchers[prim] = rule


def moveaxis(x: Any, src: int, dst: int) -> Any:
    """``x`` with its axis ``src`` moved to ``dst``."""
    return x if src == dst else pnp.moveaxis(x, src, dst)


def broadcast(x: Any, size: int, axis: int) -> Any:
    """``x`` repeated ``size`` times along a new axis ``axis``."""
    x = pnp.expand_dims(x, axis)
    shape = list(get_aval(x).shape)
    shape[axis] = size
    return pnp.broadcast_to(x, tuple(shape))


def bdim_at_front(x: Any, bdim: int | None, size: int) -> Any:
    """``x`` with its batch dimension first (an unbatched ``x`` is repeated ``size`` times)."""
    return broadcast(x, size, 0) if bdim is None else moveaxis(x, bdim, 0)


def _register(prim: Primitive) -> None:
    batching_rules.not_supported(
        prim,
        f"no batching rule was registered for the primitive {prim.name} (use batching.primitive_batchers"
        f"[{prim.name}] = rule)",
    )


on_new_primitive.append(_register)
