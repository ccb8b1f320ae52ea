"""``custom_vmap``: a function with a user-defined batching rule.

``f = custom_vmap(fun)`` stages ``fun`` and binds ``custom_vmap_call(*consts,
*args)``; called outside ``vmap`` it computes ``fun``.  Under ``vmap``,
plait-batching calls the ``rule`` param (a :class:`CustomVmapRule`) instead
of batching ``fun``'s body.  A function whose rule was never defined
(``def_vmap``) raises the error of :func:`custom_vmap_rule_missing_error`
when batched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from plait_core.abstract import ShapedArray
from plait_core.custom_derivatives import check_value
from plait_core.dims import SymbolicDim
from plait_core.jaxpr import ClosedJaxpr
from plait_core.primitives.calls import (
    StagingCache,
    custom_vmap_call_p,
    fun_name,
    resolve_kwargs,
    stage_cached,
)
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["CustomVmapRule", "custom_vmap", "custom_vmap_rule_missing_error"]

F = TypeVar("F", bound=Callable[..., Any])


def custom_vmap_rule_missing_error(fun: Any) -> str:
    """Message for batching a ``custom_vmap`` function that has no rule."""
    name = fun if isinstance(fun, str) else fun_name(fun)
    return (
        f"No batching rule is defined for the custom_vmap function {name}: it was called inside vmap, "
        "so define one with def_vmap before batching it"
    )


class CustomVmapRule:
    """The ``rule`` param of ``custom_vmap_call`` (hashable by identity).

    ``rule(axis_size, in_batched, *operands) -> (outs, out_batched)`` works on
    flat lists: ``in_batched`` has one flag per operand (consts first; consts
    must not be batched) and batched operands carry the batch axis first.  It
    calls the user's ``rule(axis_size, in_batched, *args)`` with pytrees,
    checks what it returns and gives back the output leaves (batched ones
    with the batch axis first) and one flag per output leaf."""

    __slots__ = ("in_tree", "name", "num_consts", "out_avals", "out_tree", "rule")

    def __init__(
        self,
        rule: Callable[..., Any] | None,
        name: str,
        num_consts: int,
        in_tree: PyTreeDef,
        out_tree: PyTreeDef,
        out_avals: Sequence[ShapedArray],
    ) -> None:
        self.rule, self.name, self.num_consts = rule, name, num_consts
        self.in_tree, self.out_tree, self.out_avals = in_tree, out_tree, tuple(out_avals)

    def __repr__(self) -> str:
        return f"vmap_rule({fun_name(self.rule) if self.rule is not None else None})"

    def __call__(self, axis_size: Any, in_batched: Sequence[bool], *operands: Any) -> tuple[list[Any], list[bool]]:
        if self.rule is None:
            raise AttributeError(custom_vmap_rule_missing_error(self.name))
        nc = self.num_consts
        if len(in_batched) != len(operands) or len(operands) != nc + self.in_tree.num_leaves:
            raise ValueError(
                f"custom_vmap rule of {self.name}: expected {nc + self.in_tree.num_leaves} operands and as many "
                f"flags, got {len(operands)} operands and {len(in_batched)} flags"
            )
        if any(in_batched[:nc]):
            raise TypeError(
                f"The custom_vmap function {self.name} closes over a value that vmap batches; that is not "
                "supported (its batching rule only sees the explicit arguments). Pass the value as an argument"
            )
        args = tree_unflatten(self.in_tree, operands[nc:])
        batched = tree_unflatten(self.in_tree, [bool(b) for b in in_batched[nc:]])
        result = self.rule(axis_size, list(batched), *args)
        return self._check(axis_size, result)

    def _check(self, axis_size: Any, result: Any) -> tuple[list[Any], list[bool]]:
        where = f"custom_vmap rule {fun_name(self.rule)} of {self.name}"
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            got = f"a {type(result).__name__} of length {len(result)}" if isinstance(result, (tuple, list)) else type(result).__name__
            raise TypeError(f"{where} must return a pair (out, out_batched), got {got}")
        out, out_batched = result
        leaves, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise TypeError(
                f"{where} returned outputs with the structure {tree}, but {self.name} returns {self.out_tree}; "
                "they must be the same"
            )
        if isinstance(out_batched, bool):
            flags = [out_batched] * len(leaves)
        else:
            flags, ftree = tree_flatten(out_batched)
            if ftree != self.out_tree or not all(isinstance(f, bool) for f in flags):
                raise TypeError(
                    f"{where} returned out_batched {out_batched!r}; it must be a bool or a tree of bools with "
                    f"the structure {self.out_tree}"
                )
        sized = type(axis_size) is int or isinstance(axis_size, SymbolicDim)
        checked = []
        for k, (x, a, b) in enumerate(zip(leaves, self.out_avals, flags)):
            if b and sized:
                expected = a.update(shape=(axis_size, *a.shape))
            elif b:
                checked.append(x)
                continue
            else:
                expected = a
            what = "batched " if b else "unbatched "
            checked.append(check_value(f"{where}: {what}output leaf {k}", x, expected))
        return checked, list(flags)


class custom_vmap(Generic[F]):
    """A function with a custom batching rule.

    ``f = custom_vmap(fun)`` behaves like ``fun``; ``f.def_vmap(rule)`` sets
    ``rule(axis_size, in_batched, *args) -> (out, out_batched)``, used by
    ``vmap``: ``in_batched`` is a list with one tree of bools per positional
    argument, batched arguments have the batch axis first, and ``out_batched``
    is a bool or a tree of bools matching ``out``.  Keyword arguments are
    resolved against ``fun``'s signature (keyword-only ones are an error).
    """

    def __init__(self, fun: F) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., Any] | None = None
        self._cache = StagingCache()

    def def_vmap(self, rule: Callable[..., Any]) -> Callable[..., Any]:
        """Set the batching rule; returns it (usable as a decorator)."""
        if not callable(rule):
            raise TypeError(f"custom_vmap {fun_name(self.fun)}: def_vmap expects a function, got {type(rule).__name__}")
        self.vmap_rule = rule
        return rule

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = resolve_kwargs(self.fun, args, kwargs, "custom_vmap")
        name, rule = fun_name(self.fun), self.vmap_rule

        def make_rule(body: ClosedJaxpr, consts: list[Any], in_tree: PyTreeDef, out_tree: PyTreeDef) -> CustomVmapRule:
            return CustomVmapRule(rule, name, len(consts), in_tree, out_tree, body.out_avals)

        staged, leaves = stage_cached(
            f"custom_vmap function {name}", args, lambda a: self.fun(*a), self._cache, (rule,), make_rule
        )
        outs = custom_vmap_call_p.bind(
            *staged.consts,
            *leaves,
            call_jaxpr=staged.body,
            rule=staged.extra,
            in_tree=staged.in_tree,
            out_tree=staged.out_tree,
            num_consts=len(staged.consts),
        )
        return tree_unflatten(staged.out_tree, outs)
