"""``invertible`` and ``custom_ivjp``: memory-efficient reverse mode.

``invertible(fun)`` stages ``fun`` and binds ``invertible_call(*consts,
*args)``.  Its value is ``fun``'s; plait-autodiff differentiates it without
storing intermediates: the backward pass rebuilds them from the outputs by
inverting the body's equations in reverse order.

``custom_ivjp(fun)`` binds ``custom_ivjp_call``; ``.defivjp(ivjp)`` gives the
inverse and the VJP at once: ``ivjp(xs, ys, dys) -> (xs, dxs)`` where ``xs``
is the tuple of positional arguments (leaves that are not available are
``None``), ``ys`` the outputs and ``dys`` their cotangents; it returns the
reconstructed arguments and their cotangents (``None`` for zero subtrees).
Outside ``invertible`` a ``custom_ivjp`` function differentiates as an
ordinary function; under ``invertible`` without ``defivjp`` it is an error
(:func:`custom_ivjp_rule_missing_error`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from plait_core.abstract import ShapedArray
from plait_core.custom_derivatives import check_tangent, check_value, match_zero_tree, tangent_aval, zeros_of
from plait_core.jaxpr import ClosedJaxpr
from plait_core.primitives.calls import (
    StagingCache,
    custom_ivjp_call_p,
    fun_name,
    invertible_call_p,
    resolve_kwargs,
    stage_cached,
)
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["IvjpRule", "custom_ivjp", "custom_ivjp_rule_missing_error", "invertible"]

F = TypeVar("F", bound=Callable[..., Any])


def invertible(fun: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fun`` for invertible reverse mode: differentiating it stores
    only its inputs and outputs and rebuilds every intermediate value from the
    outputs in the backward pass.  Returns a function with ``fun``'s value."""
    if not callable(fun):
        raise TypeError(f"invertible expects a function, got {type(fun).__name__}")
    name = fun_name(fun)
    cache = StagingCache()

    @functools.wraps(fun)
    def inverted(*args: Any, **kwargs: Any) -> Any:
        staged, leaves = stage_cached(
            f"invertible function {name}", (args, kwargs), lambda t: fun(*t[0], **t[1]), cache
        )
        outs = invertible_call_p.bind(
            *staged.consts, *leaves, jaxpr=staged.body, name=name, num_consts=len(staged.consts)
        )
        return tree_unflatten(staged.out_tree, outs)

    return inverted


def custom_ivjp_rule_missing_error(fun: Any) -> str:
    """Message for inverting a ``custom_ivjp`` function that has no ``defivjp`` rule."""
    name = fun if isinstance(fun, str) else fun_name(fun)
    return (
        f"No inverse-VJP rule is defined for the custom_ivjp function {name}: it is called inside an "
        "invertible function being differentiated, so define one with defivjp(ivjp), "
        "where ivjp(xs, ys, dys) returns (xs, dxs)"
    )


class IvjpRule:
    """The ``ivjp`` param of ``custom_ivjp_call`` (hashable by identity).

    ``ivjp(xs, ys, dys) -> (xs, dxs)`` works on flat lists: ``xs`` has one
    entry per operand (consts first; ``None`` where not available), ``ys``
    and ``dys`` one per output (a ``None`` cotangent is zero).  It returns the
    operands (consts passed through) and one cotangent per operand (``None``
    for zero, always for consts)."""

    __slots__ = ("in_avals", "in_tree", "ivjp", "name", "num_consts", "out_avals", "out_tree")

    def __init__(
        self,
        ivjp: Callable[..., Any] | None,
        name: str,
        num_consts: int,
        in_tree: PyTreeDef,
        out_tree: PyTreeDef,
        in_avals: Sequence[ShapedArray],
        out_avals: Sequence[ShapedArray],
    ) -> None:
        self.ivjp, self.name, self.num_consts = ivjp, name, num_consts
        self.in_tree, self.out_tree = in_tree, out_tree
        self.in_avals, self.out_avals = tuple(in_avals), tuple(out_avals)

    def __repr__(self) -> str:
        return f"ivjp({fun_name(self.ivjp) if self.ivjp is not None else None})"

    def __call__(self, xs: Sequence[Any], ys: Sequence[Any], dys: Sequence[Any]) -> tuple[list[Any], list[Any]]:
        if self.ivjp is None:
            raise AttributeError(custom_ivjp_rule_missing_error(self.name))
        nc, nin, nout = self.num_consts, len(self.in_avals), len(self.out_avals)
        if len(xs) != nin or len(ys) != nout or len(dys) != nout:
            raise ValueError(
                f"ivjp of {self.name}: expected {nin} inputs and {nout} outputs and output cotangents, "
                f"got {len(xs)}, {len(ys)} and {len(dys)}"
            )
        dys = [zeros_of(tangent_aval(a)) if d is None else d for d, a in zip(dys, self.out_avals)]
        result = self.ivjp(
            tree_unflatten(self.in_tree, xs[nc:]),
            tree_unflatten(self.out_tree, ys),
            tree_unflatten(self.out_tree, dys),
        )
        where = f"custom_ivjp rule {fun_name(self.ivjp)} of {self.name}"
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            got = f"a {type(result).__name__} of length {len(result)}" if isinstance(result, (tuple, list)) else type(result).__name__
            raise TypeError(f"{where} must return a pair (xs, dxs), got {got}")
        new_xs, dxs = result
        leaves, tree = tree_flatten(new_xs)
        if tree != self.in_tree:
            raise TypeError(
                f"{where} returned inputs xs with the structure {tree}, but the arguments have the structure "
                f"{self.in_tree}; they must be the same"
            )
        avals = self.in_avals[nc:]
        leaves = [check_value(f"{where}: input leaf {k}", x, a) for k, (x, a) in enumerate(zip(leaves, avals))]
        cts = match_zero_tree(self.in_tree, dxs, f"{where}: the input cotangents dxs")
        cts = [check_tangent(f"{where}: cotangent leaf {k}", c, a) for k, (c, a) in enumerate(zip(cts, avals))]
        return [*xs[:nc], *leaves], [None] * nc + cts


class custom_ivjp(Generic[F]):
    """A function with a custom inverse-and-VJP rule for ``invertible``.

    ``f = custom_ivjp(fun)`` behaves like ``fun``; ``f.defivjp(ivjp)`` sets
    ``ivjp(xs, ys, dys) -> (xs, dxs)``: given the positional arguments ``xs``
    (as a tuple; unavailable leaves are ``None``), the outputs ``ys`` and their
    cotangents ``dys``, return the arguments and their cotangents.  Keyword
    arguments are resolved against ``fun``'s signature.
    """

    def __init__(self, fun: F) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.ivjp: Callable[..., Any] | None = None
        self._cache = StagingCache()

    def defivjp(self, ivjp: Callable[..., Any]) -> Callable[..., Any]:
        """Set the rule ``ivjp(xs, ys, dys) -> (xs, dxs)``; returns it (usable as a decorator)."""
        if not callable(ivjp):
            raise TypeError(f"custom_ivjp {fun_name(self.fun)}: defivjp expects a function, got {type(ivjp).__name__}")
        self.ivjp = ivjp
        return ivjp

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = resolve_kwargs(self.fun, args, kwargs, "custom_ivjp")
        name, ivjp = fun_name(self.fun), self.ivjp

        def make_rule(body: ClosedJaxpr, consts: list[Any], in_tree: PyTreeDef, out_tree: PyTreeDef) -> IvjpRule:
            return IvjpRule(ivjp, name, len(consts), in_tree, out_tree, body.in_avals, body.out_avals)

        staged, leaves = stage_cached(
            f"custom_ivjp function {name}", args, lambda a: self.fun(*a), self._cache, (ivjp,), make_rule
        )
        outs = custom_ivjp_call_p.bind(
            *staged.consts,
            *leaves,
            call_jaxpr=staged.body,
            ivjp=staged.extra,
            in_tree=staged.in_tree,
            out_tree=staged.out_tree,
            num_consts=len(staged.consts),
        )
        return tree_unflatten(staged.out_tree, outs)
