"""``invertible`` and ``custom_ivjp``: memory-efficient reverse mode.

``invertible(fun)`` stages ``fun`` and binds ``invertible_call(*consts,
*args)``.  Its value is ``fun``'s; plait-autodiff differentiates it without
storing intermediates: the backward pass rebuilds them from the outputs by
inverting the body's equations in reverse order, and keeps the arguments the
outputs do not determine (weights passed as arguments).  The returned
:class:`Invertible` also says what it keeps (``.residuals(*args)``) and how
far rebuilt values drift from the forward ones (``.drift(*args)``, and
``check=True`` to be warned); both are computed by plait-autodiff, which
installs them with :func:`register_invertible_analysis`.

``custom_ivjp(fun)`` binds ``custom_ivjp_call``; ``.defivjp(ivjp)`` gives the
inverse and the VJP at once: ``ivjp(xs, ys, dys) -> (xs, dxs)`` where ``xs``
is the tuple of positional arguments as called (weights and every other leaf
the outputs do not determine are values; the leaves the rule is to rebuild
are ``None``), ``ys`` the outputs and ``dys`` their cotangents; it returns the
reconstructed arguments and their cotangents (``None`` for zero subtrees).
Outside ``invertible`` a ``custom_ivjp`` function differentiates as an
ordinary function; under ``invertible`` without ``defivjp`` it is an error
(:func:`custom_ivjp_rule_missing_error`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

from plait_core.abstract import ShapedArray, ShapeDtypeStruct
from plait_core.custom_derivatives import check_tangent, check_value, match_zero_tree, tangent_aval, zeros_of
from plait_core.jaxpr import ClosedJaxpr, Jaxpr
from plait_core.primitives.calls import (
    CALL_PRIMITIVES,
    StagedFunction,
    StagingCache,
    called_jaxpr,
    custom_ivjp_call_p,
    fun_name,
    invertible_call_p,
    resolve_kwargs,
    stage_cached,
)
from plait_core.tree_util import (
    PyTreeDef,
    keystr,
    tree_flatten,
    tree_flatten_with_path,
    tree_map,
    tree_unflatten,
)

__all__ = [
    "DriftCheck",
    "Invertible",
    "InvertibleDriftWarning",
    "InvertibleResiduals",
    "IvjpRule",
    "custom_ivjp",
    "custom_ivjp_rule_missing_error",
    "invertible",
    "register_invertible_analysis",
]

F = TypeVar("F", bound=Callable[..., Any])


class InvertibleResiduals(NamedTuple):
    """What differentiating an invertible function stores, for given arguments.

    ``kept`` maps each argument leaf the backward pass keeps (it cannot be
    rebuilt from the outputs: a weight, a multiplier) to its shape, and
    ``rebuilt`` each argument leaf it rebuilds instead.  ``stored_bytes`` is
    what the backward pass holds: the kept arguments, the function's
    constants and its outputs.  ``intermediate_bytes`` is the size of every
    intermediate value of the body (calls included): about what ordinary
    reverse mode would store, and what is rebuilt instead."""

    kept: dict[str, ShapedArray]
    rebuilt: dict[str, ShapedArray]
    stored_bytes: int
    intermediate_bytes: int

    def __str__(self) -> str:
        lines = [f"stored {self.stored_bytes} bytes; rebuilt intermediates {self.intermediate_bytes} bytes"]
        lines += [f"  kept    {k}: {a.str_short()}" for k, a in self.kept.items()]
        lines += [f"  rebuilt {k}: {a.str_short()}" for k, a in self.rebuilt.items()]
        return "\n".join(lines)


class DriftCheck(NamedTuple):
    """The ``check`` param of ``invertible_call``: the relative tolerance and
    the names of the argument leaves (for the warning)."""

    tol: float
    paths: tuple[str, ...]


class InvertibleDriftWarning(UserWarning):
    """Values rebuilt by an invertible function's backward pass drift from the
    forward values by more than the ``check`` tolerance (issued when the
    program runs, also compiled)."""


_analysis: dict[str, Callable[..., Any]] = {}


def register_invertible_analysis(kind: str, fn: Callable[..., Any]) -> None:
    """Install ``fn`` as the ``kind`` analysis (``"kept"`` or ``"drift"``) of
    invertible functions; plait-autodiff calls this when imported.

    ``kept(body, num_consts, name) -> flags`` says which operands the
    backward pass keeps; ``drift(body, num_consts, name, *operands) ->
    (per_operand, per_block)`` gives the largest relative error of each
    rebuilt operand (``None`` for kept ones) and of each block's rebuilt
    inputs (a dict keyed by a description of the block)."""
    _analysis[kind] = fn


def _analysis_of(kind: str) -> Callable[..., Any]:
    fn = _analysis.get(kind)
    if fn is None:
        raise RuntimeError(
            f"the {kind} analysis of invertible functions is done by plait-autodiff: install it and import it"
        )
    return fn


def _leaf_paths(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[str]:
    """``args[1]['F'][0]``-style names of the argument leaves."""
    flat, _ = tree_flatten_with_path((args, kwargs))
    return [("args" if getattr(path[0], "idx", 0) == 0 else "kwargs") + keystr(path[1:]) for path, _ in flat]


def _nbytes(aval: ShapedArray) -> int:
    size = 1
    for d in aval.shape:
        size *= d if isinstance(d, int) else 1
    return size * np.dtype(aval.dtype).itemsize


def _intermediate_bytes(jaxpr: Jaxpr) -> int:
    total = 0
    for eqn in jaxpr.eqns:
        total += sum(_nbytes(v.aval) for v in eqn.outvars)
        if eqn.primitive in CALL_PRIMITIVES:
            total += _intermediate_bytes(called_jaxpr(eqn.primitive, eqn.params).jaxpr)
    return total


def _placeholder(x: Any) -> Any:
    """An array standing for a ``ShapeDtypeStruct`` (never read: zeros cost no memory until touched)."""
    if isinstance(x, ShapeDtypeStruct):
        return np.zeros(x.shape, x.dtype)
    return x


class Invertible:
    """A function marked ``invertible`` (see :func:`invertible`)."""

    def __init__(self, fun: Callable[..., Any], check: float | None) -> None:
        functools.update_wrapper(self, fun)
        self.fun, self.check = fun, check
        self.name = fun_name(fun)
        self._cache = StagingCache()

    def _stage(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[StagedFunction, list[Any]]:
        return stage_cached(
            f"invertible function {self.name}", (args, kwargs), lambda t: self.fun(*t[0], **t[1]), self._cache
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        staged, leaves = self._stage(args, kwargs)
        check = None if self.check is None else DriftCheck(self.check, tuple(_leaf_paths(args, kwargs)))
        outs = invertible_call_p.bind(
            *staged.consts, *leaves, jaxpr=staged.body, name=self.name, num_consts=len(staged.consts), check=check
        )
        return tree_unflatten(staged.out_tree, outs)

    def residuals(self, *args: Any, **kwargs: Any) -> InvertibleResiduals:
        """What differentiating this function at these arguments stores
        (only shapes matter: the arguments may be ``ShapeDtypeStruct`` values;
        every float argument is taken as differentiated)."""
        args, kwargs = tree_map(_placeholder, (args, kwargs))
        staged, _ = self._stage(args, kwargs)
        nc = len(staged.consts)
        flags = _analysis_of("kept")(staged.body, nc, self.name)
        avals = staged.body.in_avals
        paths = _leaf_paths(args, kwargs)
        kept = {p: a for p, a, k in zip(paths, avals[nc:], flags[nc:]) if k}
        rebuilt = {p: a for p, a, k in zip(paths, avals[nc:], flags[nc:]) if not k}
        stored = sum(_nbytes(a) for a, k in zip(avals, flags) if k)
        stored += sum(_nbytes(a) for a in staged.body.out_avals)
        return InvertibleResiduals(kept, rebuilt, stored, _intermediate_bytes(staged.body.jaxpr))

    def drift(self, *args: Any, **kwargs: Any) -> dict[str, dict[str, Any]]:
        """How far the values the backward pass rebuilds drift from the
        forward values, at these arguments: ``{"arguments": {path: err},
        "blocks": {block: err}}`` with the largest relative error (largest
        absolute difference over the largest magnitude) of each rebuilt
        argument leaf and of the rebuilt inputs of each block (a call inside
        the body: a ``jit``, ``custom_ivjp`` or nested ``invertible``
        function).  Works under ``jit`` (``jit(f.drift)(*args)``), where the
        errors are arrays."""
        staged, leaves = self._stage(args, kwargs)
        per_leaf, per_block = _analysis_of("drift")(staged.body, len(staged.consts), self.name, *staged.consts, *leaves)
        paths = _leaf_paths(args, kwargs)
        return {"arguments": {p: e for p, e in zip(paths, per_leaf) if e is not None}, "blocks": dict(per_block)}


def invertible(fun: Callable[..., Any], *, check: bool | float = False) -> Invertible:
    """Mark ``fun`` for invertible reverse mode: differentiating it stores
    only its outputs and the arguments they do not determine (weights passed
    as arguments are kept, and get their gradients), and rebuilds every
    other value from the outputs in the backward pass.

    The result calls like ``fun`` and has ``.residuals(*args)`` (what is
    kept, in bytes) and ``.drift(*args)`` (how far rebuilt values drift).
    With ``check=True`` (or a relative tolerance; ``True`` means ``1e-3``),
    differentiating it also computes the drift, in the same program (eager,
    or compiled by ``jit``; per element under ``vmap``), and a host callback
    issues an :class:`InvertibleDriftWarning` when it runs, naming every
    argument and block whose rebuilt value is off by more than the
    tolerance.  It costs a second forward and backward walk: a debugging
    aid."""
    if not callable(fun):
        raise TypeError(f"invertible expects a function, got {type(fun).__name__}")
    if check is True:
        tol: float | None = 1e-3
    elif check is False or check is None:
        tol = None
    elif isinstance(check, (int, float)) and check > 0:
        tol = float(check)
    else:
        raise ValueError(f"invertible: check must be a bool or a positive relative tolerance, got {check!r}")
    return Invertible(fun, tol)


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
