"""``custom_jvp`` and ``custom_vjp``: functions with user-defined derivatives.

The front-ends only *bind* primitives; plait-autodiff gives them meaning.

``custom_jvp(fun)`` stages ``fun`` and binds ``custom_jvp_call(*consts,
*args)``.  Its ``jvp_jaxpr_fun`` param, called by autodiff with one flag per
operand saying which tangents are nonzero, stages the user's rule and returns
a :class:`JvpJaxpr`: a closed jaxpr taking ``(*operands, *nonzero tangents)``
and returning ``(*primal outputs, *nonzero output tangents)``, with the flags
of the nonzero output tangents.

``custom_vjp(fun)`` binds ``custom_vjp_call(*consts, *args)``.  Its
``fwd_jaxpr_thunk`` param returns a :class:`FwdJaxpr` (a closed jaxpr taking
the operands and returning ``(*outputs, *residuals)``); its ``bwd`` param maps
``(*residuals, *output cotangents)`` to one cotangent per operand.

Conventions, as in JAX:

* Keyword arguments are resolved against ``fun``'s signature; passing a
  keyword-only argument is a ``TypeError``.
* Arguments in ``nondiff_argnums`` are passed to the rules first.  Those
  holding no array are static Python values (part of the staging cache key
  when hashable); those holding arrays or traced values are operands whose
  tangent (cotangent) is taken to be zero.
* Called with no transformation active, the function simply runs ``fun``.
  A function without a rule (``defjvp``/``defvjp`` never called) works
  until it is differentiated; autodiff then gets an ``AttributeError``
  saying the rule is missing.
* Differentiating with respect to a value the function closes over is not
  supported (the rules only speak of the explicit arguments): a
  ``TypeError`` says to pass the value as an argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval, registered_array_types, to_numpy, to_tangent_type
from plait_core.dims import definitely_equal_shapes, dim_as_int
from plait_core.jaxpr import ClosedJaxpr
from plait_core.primitives.ad_helpers import add_any_p, custom_lin_p, zeros_like_p
from plait_core.primitives.calls import (
    StagedFunction,
    StagingCache,
    custom_jvp_call_p,
    custom_vjp_call_p,
    fun_name,
    hashable_key,
    merge_static,
    resolve_kwargs,
    split_static,
    stage_cached,
)
from plait_core.primitives.structural import broadcast_in_dim_p
from plait_core.staging import trace_to_jaxpr
from plait_core.trace import Tracer, current_trace, is_eager
from plait_core.tree_util import (
    PyTreeDef,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

__all__ = [
    "CustomVJPPrimal",
    "FwdJaxpr",
    "JvpJaxpr",
    "SymbolicZero",
    "CustomVJPException",
    "closure_differentiation_error",
    "closure_differentiation_exception",
    "custom_jvp",
    "custom_jvp_rule_missing_error",
    "custom_vjp",
    "custom_vjp_rule_missing_error",
    "tangent_aval",
]

F = TypeVar("F", bound=Callable[..., Any])


# ---------------------------------------------------------------------------
# Values the rules see


tangent_aval = to_tangent_type  # the one definition lives in plait_core.abstract


def zeros_of(aval: ShapedArray, what: str = "a zero (co)tangent") -> np.ndarray:
    """A concrete zero array of type ``aval`` (its shape must be concrete)."""
    return np.zeros(tuple(dim_as_int(d, what) for d in aval.shape), aval.dtype)


class SymbolicZero:
    """A tangent or cotangent known to be zero, given to rules defined with
    ``symbolic_zeros=True`` instead of an array of zeros.  A rule may also
    return one (or ``None``) for a zero output tangent or cotangent."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval

    @property
    def shape(self) -> tuple[Any, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return self.aval.dtype

    def instantiate(self) -> Any:
        """The zeros this stands for, as an array: a NumPy array when the
        shape is concrete, else (a symbolic shape, under ``mask`` or ``vmap``
        over piles) zeros broadcast on the current trace, which knows the size."""
        if all(type(d) is int for d in self.aval.shape) or self.aval.dtype == dtypes.float0:
            return zeros_of(self.aval)
        zero = np.zeros((), self.aval.dtype)
        return broadcast_in_dim_p.bind(zero, shape=tuple(self.aval.shape), broadcast_dimensions=())

    def __repr__(self) -> str:
        return f"SymbolicZero({self.aval.str_short()})"


class CustomVJPPrimal:
    """An argument of a ``custom_vjp`` forward rule defined with
    ``symbolic_zeros=True``: the primal ``value`` and whether it is
    ``perturbed`` (differentiated with respect to)."""

    __slots__ = ("perturbed", "value")

    def __init__(self, value: Any, perturbed: bool) -> None:
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


# ---------------------------------------------------------------------------
# Error messages (autodiff raises some of them)


def custom_jvp_rule_missing_error(fun: Any) -> str:
    """Message for differentiating a ``custom_jvp`` function with no rule."""
    return (
        f"No JVP rule is defined for the custom_jvp function {_name(fun)}: it was differentiated, "
        "so define one with defjvp (or defjvps) before differentiating it"
    )


def custom_vjp_rule_missing_error(fun: Any) -> str:
    """Message for differentiating a ``custom_vjp`` function with no rules."""
    return (
        f"No VJP rules are defined for the custom_vjp function {_name(fun)}: it was differentiated, "
        "so define them with defvjp(fwd, bwd) before differentiating it"
    )


def closure_differentiation_error(kind: str, fun: Any) -> str:
    """Message for differentiating a custom-rule function with respect to a value it closes over."""
    return (
        f"The {kind} function {_name(fun)} was differentiated with respect to a value it closes over. "
        f"That is not supported: the {kind} rules only say how to differentiate with respect to the "
        "explicit arguments. Pass the closed-over value to the function as an argument and adapt the rules"
    )


class CustomVJPException(TypeError):
    """A ``custom_vjp`` function was differentiated with respect to a value it
    closes over (JAX's ``jax._src.interpreters.ad.CustomVJPException``, which
    diffrax's tests catch; also a ``TypeError``, as plait raised before)."""


def closure_differentiation_exception(kind: str, fun: Any, detail: str = "") -> TypeError:
    """The exception for :func:`closure_differentiation_error`: a
    :class:`CustomVJPException` for ``custom_vjp``, a ``TypeError`` otherwise;
    ``detail`` (the error that revealed it) is appended in parentheses."""
    message = closure_differentiation_error(kind, fun) + (f" ({detail})" if detail else "")
    return CustomVJPException(message) if kind == "custom_vjp" else TypeError(message)


def _name(fun: Any) -> str:
    return fun if isinstance(fun, str) else fun_name(fun)


def _describe(x: Any) -> str:
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of length {len(x)}"
    return f"a value of type {type(x).__name__}"


# ---------------------------------------------------------------------------
# Matching trees where None stands for a zero subtree


class _Mismatch(Exception):
    pass


def _is_zero(x: Any) -> bool:
    return x is None or isinstance(x, SymbolicZero)


def _match(treedef: PyTreeDef, x: Any) -> list[Any]:
    if _is_zero(x):
        return [None] * treedef.num_leaves
    if treedef.node_data() is None:
        if tree_structure(x).node_data() is not None:  # a container where a leaf belongs
            raise _Mismatch
        return [x]
    kids, xdef = tree_flatten(x, is_leaf=lambda y: y is not x)
    sub = treedef.children()
    if xdef.node_data() != treedef.node_data() or len(kids) != len(sub):
        raise _Mismatch
    out: list[Any] = []
    for t, k in zip(sub, kids):
        out.extend(_match(t, k))
    return out


def match_zero_tree(treedef: PyTreeDef, tree: Any, where: str) -> list[Any]:
    """The leaves of ``tree`` in the order of ``treedef``, where ``tree`` may
    hold ``None`` (or a :class:`SymbolicZero`) in place of any subtree; those
    leaves come back as ``None``.  A ``TypeError`` naming ``where`` otherwise."""
    try:
        return _match(treedef, tree)
    except _Mismatch:
        got = tree_structure(tree, is_leaf=_is_zero)
        raise TypeError(
            f"{where} has the structure {got}, but the expected structure is {treedef} "
            "(None may stand for a zero subtree)"
        ) from None


def check_value(where: str, x: Any, expected: ShapedArray) -> Any:
    """``x`` must be an array of ``expected``'s shape and dtype (a weakly typed
    concrete value is converted).  TypeError for non-arrays and dtypes,
    ValueError for shapes."""
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError(f"{where} is a value of type {type(x).__name__}, expected an array of type {expected.str_short()}") from None
    if not definitely_equal_shapes(aval.shape, expected.shape):
        raise ValueError(f"{where} has type {aval.str_short()}, expected the shape of {expected.str_short()}")
    if aval.dtype != expected.dtype:
        if aval.weak_type and not isinstance(x, Tracer):
            return to_numpy(x, expected.dtype)
        raise TypeError(f"{where} has dtype {aval.dtype.name} ({aval.str_short()}), expected {expected.str_short()}")
    return x


def check_tangent(where: str, x: Any, primal: ShapedArray) -> Any:
    """A (co)tangent leaf for a primal of type ``primal``: ``None`` for zeros
    (and for integer or boolean primals, whose tangents are ``float0``),
    otherwise checked by :func:`check_value` against the tangent type."""
    if _is_zero(x):
        return None
    t = tangent_aval(primal)
    if t.dtype == dtypes.float0:
        return None
    return check_value(where, x, t)


def _is_array_like(x: Any) -> bool:
    return isinstance(x, (Tracer, np.ndarray, np.generic, *registered_array_types()))


# ---------------------------------------------------------------------------
# How operands map back to the user's positional arguments


class CallSpec:
    """The calling convention of one staged custom-rule call.

    Operands are ``(*consts, *leaves of the positional arguments)``; static
    (array-free) ``nondiff_argnums`` arguments are not operands and stand as
    ``None`` in ``in_tree``, the structure of the positional-argument tuple."""

    __slots__ = (
        "arg_trees",
        "in_tree",
        "kind",
        "leaf_start",
        "name",
        "nargs",
        "nondiff",
        "num_consts",
        "operand_avals",
        "out_avals",
        "out_tree",
        "static",
    )

    def __init__(
        self, kind: str, name: str, nargs: int, nondiff: tuple[int, ...], static: dict[int, Any],
        in_tree: PyTreeDef, consts_avals: Sequence[ShapedArray], arg_avals: Sequence[ShapedArray],
        out_tree: PyTreeDef, out_avals: Sequence[ShapedArray],
    ) -> None:  # fmt: skip
        self.kind, self.name, self.nargs = kind, name, nargs
        self.nondiff, self.static, self.in_tree = nondiff, static, in_tree
        self.num_consts = len(consts_avals)
        self.operand_avals = tuple(consts_avals) + tuple(arg_avals)
        self.out_tree, self.out_avals = out_tree, tuple(out_avals)
        self.arg_trees = in_tree.children()
        starts, n = [], 0
        for t in self.arg_trees:
            starts.append(n)
            n += t.num_leaves
        self.leaf_start = tuple(starts)

    @property
    def diff_positions(self) -> list[int]:
        return [i for i in range(self.nargs) if i not in self.nondiff]

    def leaves_of(self, pos: int) -> range:
        """Indices (among the argument leaves) of positional argument ``pos``."""
        return range(self.leaf_start[pos], self.leaf_start[pos] + self.arg_trees[pos].num_leaves)

    def nondiff_leaf_indices(self) -> list[int]:
        """Argument-leaf indices of the nondiff arguments that are operands."""
        return [k for i in sorted(self.nondiff) for k in self.leaves_of(i)]

    def args_from_leaves(self, leaves: Sequence[Any]) -> list[Any]:
        """The positional arguments, rebuilt from argument leaves."""
        args = list(tree_unflatten(self.in_tree, leaves))
        for i, v in self.static.items():
            args[i] = v
        return args

    def nondiff_values(self, args: Sequence[Any]) -> list[Any]:
        """The nondiff arguments, in ``nondiff_argnums`` order."""
        return [args[i] for i in self.nondiff]


def _leaf_range(args: Sequence[Any], pos: int) -> range:
    """Indices (among the leaves of ``args``) of positional argument ``pos``."""
    start = sum(len(tree_leaves(a)) for a in args[:pos])
    return range(start, start + len(tree_leaves(args[pos])))


def _normalize_nondiff(kind: str, name: str, nondiff_argnums: tuple[int, ...], nargs: int) -> tuple[int, ...]:
    out = []
    for n in nondiff_argnums:
        m = n + nargs if n < 0 else n
        if not 0 <= m < nargs:
            raise ValueError(
                f"{kind} function {name}: nondiff_argnums {n} is out of range for a call with {nargs} "
                "positional arguments"
            )
        out.append(m)
    return tuple(out)


def _check_argnums(kind: str, nondiff_argnums: Any) -> tuple[int, ...]:
    nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else tuple(nondiff_argnums)
    for n in nums:
        if type(n) is not int:
            raise TypeError(f"{kind}: nondiff_argnums must be ints, got {n!r}")
    if len(set(nums)) != len(nums):
        raise ValueError(f"{kind}: nondiff_argnums {nums} has repeated entries")
    return nums


def _stage_call(
    kind: str, fun: Callable[..., Any], nondiff_argnums: tuple[int, ...], args: tuple[Any, ...],
    cache: StagingCache, rule_key: tuple[Any, ...], make_rules: Callable[[CallSpec], tuple[Any, ...]],
) -> tuple[StagedFunction, list[Any]]:  # fmt: skip
    """Stage ``fun`` on ``args`` (cached); ``extra`` of the result is
    ``(spec, *rules)``.  Also returns the argument leaves to bind."""
    name = fun_name(fun)
    nondiff = _normalize_nondiff(kind, name, nondiff_argnums, len(args))
    static_pos = [i for i in nondiff if not any(_is_array_like(x) for x in tree_leaves(args[i]))]
    dyn, static = split_static(args, static_pos)

    def make_extra(body: ClosedJaxpr, consts: list[Any], in_tree: PyTreeDef, out_tree: PyTreeDef) -> tuple[Any, ...]:
        arg_avals = body.in_avals[len(consts) :]
        spec = CallSpec(
            kind, name, len(args), nondiff, static, in_tree, body.in_avals[: len(consts)], arg_avals,
            out_tree, body.out_avals,
        )  # fmt: skip
        return (spec, *make_rules(spec))

    return stage_cached(
        f"{kind} function {name}",
        dyn,
        lambda d: fun(*merge_static(d, static)),
        cache,
        (tuple(sorted(static.items())), rule_key),
        make_extra,
    )


# ---------------------------------------------------------------------------
# custom_jvp


class JvpJaxpr(NamedTuple):
    """What ``jvp_jaxpr_fun`` returns: ``jaxpr`` maps ``(*operands, *nonzero
    input tangents)`` to ``(*primal outputs, *nonzero output tangents)``;
    ``out_nonzeros`` flags which output tangents it returns."""

    jaxpr: ClosedJaxpr
    out_nonzeros: tuple[bool, ...]


class JvpJaxprFun:
    """The ``jvp_jaxpr_fun`` param of ``custom_jvp_call`` (hashable by identity,
    memoized).  Call it with one flag per operand (consts first; consts must
    be ``False``) saying whether that operand's tangent is nonzero."""

    __slots__ = ("_memo", "jvp", "spec", "symbolic_zeros")

    def __init__(self, spec: CallSpec, jvp: Callable[..., Any] | None, symbolic_zeros: bool) -> None:
        self.spec, self.jvp, self.symbolic_zeros = spec, jvp, symbolic_zeros
        self._memo = StagingCache(8)

    def __repr__(self) -> str:
        return f"jvp_jaxpr_fun({fun_name(self.jvp) if self.jvp is not None else None})"

    def __call__(self, in_nonzeros: Sequence[bool]) -> JvpJaxpr:
        spec = self.spec
        nz = tuple(bool(b) for b in in_nonzeros)
        if len(nz) != len(spec.operand_avals):
            raise ValueError(
                f"jvp_jaxpr_fun of {spec.name}: expected {len(spec.operand_avals)} flags (one per operand), got {len(nz)}"
            )
        if any(nz[: spec.num_consts]):
            raise TypeError(closure_differentiation_error("custom_jvp", spec.name))
        if self.jvp is None:
            raise AttributeError(custom_jvp_rule_missing_error(spec.name))
        key = hashable_key(nz)
        hit: JvpJaxpr | None = self._memo.get(key)
        if hit is not None:
            return hit
        jvp, nc, n = self.jvp, spec.num_consts, len(spec.operand_avals)
        rule_name = fun_name(jvp)
        out_nz: list[tuple[bool, ...]] = []

        def flat_jvp(*xs: Any) -> list[Any]:
            ops, given = xs[:n], iter(xs[n:])
            tans = []
            for x, a, z in zip(ops, spec.operand_avals, nz):
                if z:
                    tans.append(next(given))
                elif self.symbolic_zeros:
                    tans.append(SymbolicZero(tangent_aval(a)))
                else:
                    tans.append(_zero_tangent(x, a))
            args, targs = spec.args_from_leaves(ops[nc:]), spec.args_from_leaves(tans[nc:])
            diff = spec.diff_positions
            result = jvp(*spec.nondiff_values(args), tuple(args[i] for i in diff), tuple(targs[i] for i in diff))
            primals, tangents = _check_jvp_result(spec, rule_name, result)
            out_nz.append(tuple(t is not None for t in tangents))
            return [*primals, *[t for t in tangents if t is not None]]

        tangent_avals = [tangent_aval(a) for a, z in zip(spec.operand_avals, nz) if z]
        closed = trace_to_jaxpr(flat_jvp, list(spec.operand_avals) + tangent_avals)
        out = JvpJaxpr(closed, out_nz[0])
        self._memo.put(key, out, closed.consts)
        return out


def _zero_tangent(x: Any, aval: ShapedArray) -> Any:
    t = tangent_aval(aval)
    if t.dtype == dtypes.float0:
        return zeros_of(t)
    return zeros_like_p.bind(x)


def _check_jvp_result(spec: CallSpec, rule_name: str, result: Any) -> tuple[list[Any], list[Any]]:
    where = f"custom_jvp rule {rule_name} of {spec.name}"
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError(f"{where} must return a pair (primal_out, tangent_out), got {_describe(result)}")
    primal_out, tangent_out = result
    leaves, tree = tree_flatten(primal_out)
    if tree != spec.out_tree:
        raise TypeError(
            f"{where} returned primal outputs with the structure {tree}, but {spec.name} returns {spec.out_tree}; "
            "they must be the same"
        )
    try:
        primals = [check_value(f"{where}: primal output leaf {k}", x, a) for k, (x, a) in enumerate(zip(leaves, spec.out_avals))]
        tleaves = match_zero_tree(spec.out_tree, tangent_out, f"{where}: the tangent output")
        tangents = [
            check_tangent(f"{where}: tangent output leaf {k}", t, a) for k, (t, a) in enumerate(zip(tleaves, spec.out_avals))
        ]
    except ValueError as e:  # JAX reports shape mismatches of custom_jvp rules as TypeError
        raise TypeError(str(e)) from None
    return primals, tangents


class custom_jvp(Generic[F]):
    """A function with a custom JVP (forward-mode derivative) rule.

    ``f = custom_jvp(fun, nondiff_argnums=())`` behaves like ``fun``; define the
    rule with ``f.defjvp(jvp)`` where ``jvp(*nondiff_args, primals, tangents)``
    returns ``(primal_out, tangent_out)`` (``primals``/``tangents`` are tuples
    of the differentiable positional arguments), or with ``f.defjvps(*jvps)``.
    With ``symbolic_zeros=True`` zero input tangents arrive as
    :class:`SymbolicZero` instead of arrays of zeros.
    """

    def __init__(self, fun: F, nondiff_argnums: Sequence[int] | int = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_argnums("custom_jvp", nondiff_argnums)
        self.jvp: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        self._cache = StagingCache()

    def defjvp(self, jvp: Callable[..., Any], symbolic_zeros: bool = False) -> Callable[..., Any]:
        """Set the JVP rule ``jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)``;
        returns ``jvp`` (so it can be used as a decorator)."""
        if not callable(jvp):
            raise TypeError(f"custom_jvp {fun_name(self.fun)}: defjvp expects a function, got {type(jvp).__name__}")
        self.jvp, self.symbolic_zeros = jvp, bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps: Callable[..., Any] | None) -> None:
        """Set the JVP rule as a sum of per-argument contributions: ``jvps[k](g, ans, *args)``
        is the output tangent due to the tangent ``g`` of the k-th differentiable
        positional argument (``None`` for an argument with zero contribution)."""
        nondiff = self.nondiff_argnums
        name = fun_name(self.fun)

        def jvp(*xs: Any) -> tuple[Any, Any]:
            nd_vals, primals, tangents = xs[:-2], xs[-2], xs[-1]
            if len(jvps) != len(primals):
                raise TypeError(
                    f"custom_jvp {name}: defjvps was given {len(jvps)} rules but the function has "
                    f"{len(primals)} differentiable arguments"
                )
            nargs = len(primals) + len(nd_vals)
            nd = _normalize_nondiff("custom_jvp", name, nondiff, nargs)
            it, nd_it = iter(primals), iter(nd_vals)
            by_pos = dict(zip(nd, nd_it))
            args = [by_pos[i] if i in by_pos else next(it) for i in range(nargs)]
            ans = self(*args)
            total: Any = None
            for g, rule in zip(tangents, jvps):
                if rule is None or all(_is_zero(t) for t in tree_leaves(g, is_leaf=_is_zero)):
                    continue
                g = tree_map(lambda t: t.instantiate() if isinstance(t, SymbolicZero) else t, g)
                contrib = rule(g, ans, *args)
                total = contrib if total is None else tree_map(add_any_p.bind, total, contrib)
            if total is None:
                total = tree_map(lambda y: SymbolicZero(tangent_aval(get_aval(y))), ans)
            return ans, total

        jvp.__name__ = f"defjvps_of_{name}"
        self.defjvp(jvp, symbolic_zeros=True)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = resolve_kwargs(self.fun, args, kwargs, "custom_jvp")
        nondiff = _normalize_nondiff("custom_jvp", fun_name(self.fun), self.nondiff_argnums, len(args))
        if is_eager():
            return self.fun(*args)
        handled = current_trace().process_custom_derivative_call(self, args)
        if handled is not NotImplemented:
            return handled
        jvp, sz = self.jvp, self.symbolic_zeros
        staged, leaves = _stage_call(
            "custom_jvp", self.fun, nondiff, args, self._cache, (jvp, sz), lambda s: (JvpJaxprFun(s, jvp, sz),)
        )
        outs = custom_jvp_call_p.bind(
            *staged.consts,
            *leaves,
            call_jaxpr=staged.body,
            jvp_jaxpr_fun=staged.extra[1],
            num_consts=len(staged.consts),
            symbolic_zeros=sz,
        )
        return tree_unflatten(staged.out_tree, outs)


    def jvp_on_values(
        self, args: tuple[Any, ...], tangents: Sequence[Any]
    ) -> tuple[PyTreeDef, list[Any], list[Any]] | None:
        """Run the rule in Python on ``args`` (values of the current trace) and
        ``tangents`` (one per leaf of ``args``, ``None`` for a zero), as JAX does
        when differentiating outside ``jit``.  Returns the output tree, the primal
        output leaves and the tangent output leaves (``None`` for zeros); ``None``
        when an argument in ``nondiff_argnums`` carries a tangent (the staged
        call reports that)."""
        name = fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(custom_jvp_rule_missing_error(name))
        nondiff = _normalize_nondiff("custom_jvp", name, self.nondiff_argnums, len(args))
        given = iter(tangents)
        tangent_args: list[Any] = []
        for pos, arg in enumerate(args):
            leaves, tdef = tree_flatten(arg)
            ts = [next(given) for _ in leaves]
            if pos in nondiff:
                if any(t is not None for t in ts):
                    return None
                tangent_args.append(None)
                continue
            filled = [
                t if t is not None
                else SymbolicZero(tangent_aval(get_aval(x))) if self.symbolic_zeros
                else _zero_tangent(x, get_aval(x))
                for x, t in zip(leaves, ts)
            ]  # fmt: skip
            tangent_args.append(tree_unflatten(tdef, filled))
        diff = [i for i in range(len(args)) if i not in nondiff]
        rule_name = fun_name(self.jvp)
        result = self.jvp(
            *[args[i] for i in nondiff], tuple(args[i] for i in diff), tuple(tangent_args[i] for i in diff)
        )
        where = f"custom_jvp rule {rule_name} of {name}"
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(f"{where} must return a pair (primal_out, tangent_out), got {_describe(result)}")
        primal_out, tangent_out = result
        primals, out_tree = tree_flatten(primal_out)
        tleaves = match_zero_tree(out_tree, tangent_out, f"{where}: the tangent output")
        try:
            out_tangents = [
                check_tangent(f"{where}: tangent output leaf {k}", t, get_aval(p))
                for k, (t, p) in enumerate(zip(tleaves, primals))
            ]
        except ValueError as e:  # JAX reports shape mismatches of custom_jvp rules as TypeError
            raise TypeError(str(e)) from None
        return out_tree, primals, out_tangents


# ---------------------------------------------------------------------------
# custom_vjp


class FwdJaxpr(NamedTuple):
    """What ``fwd_jaxpr_thunk`` returns: ``jaxpr`` maps the operands to
    ``(*outputs, *residuals)``; ``num_res`` counts the residuals (the user's
    residual leaves, then the leaves of array-valued nondiff arguments);
    ``res_tree`` is the structure of the user's residuals."""

    jaxpr: ClosedJaxpr
    num_res: int
    out_tree: PyTreeDef
    res_tree: PyTreeDef


class FwdJaxprThunk:
    """The ``fwd_jaxpr_thunk`` param of ``custom_vjp_call`` (hashable by identity,
    memoized).  ``in_perturbed`` has one flag per operand (consts must be
    ``False``); ``None`` means every argument is perturbed."""

    __slots__ = ("_memo", "fwd", "res_tree", "spec", "symbolic_zeros")

    def __init__(self, spec: CallSpec, fwd: Callable[..., Any] | None, symbolic_zeros: bool) -> None:
        self.spec, self.fwd, self.symbolic_zeros = spec, fwd, symbolic_zeros
        self.res_tree: PyTreeDef | None = None
        self._memo = StagingCache(8)

    def __repr__(self) -> str:
        return f"fwd_jaxpr_thunk({fun_name(self.fwd) if self.fwd is not None else None})"

    def __call__(self, in_perturbed: Sequence[bool] | None = None) -> FwdJaxpr:
        spec = self.spec
        nc, n = spec.num_consts, len(spec.operand_avals)
        pert = (False,) * nc + (True,) * (n - nc) if in_perturbed is None else tuple(bool(b) for b in in_perturbed)
        if len(pert) != n:
            raise ValueError(f"fwd_jaxpr_thunk of {spec.name}: expected {n} flags (one per operand), got {len(pert)}")
        if any(pert[:nc]):
            raise closure_differentiation_exception("custom_vjp", spec.name)
        if self.fwd is None:
            raise AttributeError(custom_vjp_rule_missing_error(spec.name))
        key = hashable_key(pert)
        hit: FwdJaxpr | None = self._memo.get(key)
        if hit is not None:
            self.res_tree = hit.res_tree
            return hit
        fwd, fwd_name = self.fwd, fun_name(self.fwd)
        diff_leaves = {k for i in spec.diff_positions for k in spec.leaves_of(i)}
        extra = spec.nondiff_leaf_indices()
        res_trees: list[PyTreeDef] = []

        def flat_fwd(*ops: Any) -> list[Any]:
            leaves = list(ops[nc:])
            if self.symbolic_zeros:
                leaves = [CustomVJPPrimal(x, pert[nc + k]) if k in diff_leaves else x for k, x in enumerate(leaves)]
            outs, res, res_tree = _check_fwd_result(spec, fwd_name, fwd(*spec.args_from_leaves(leaves)))
            res_trees.append(res_tree)
            return [*outs, *res, *[ops[nc + k] for k in extra]]

        closed = trace_to_jaxpr(flat_fwd, list(spec.operand_avals))
        out = FwdJaxpr(closed, len(closed.out_avals) - len(spec.out_avals), spec.out_tree, res_trees[0])
        self.res_tree = out.res_tree
        self._memo.put(key, out, closed.consts)
        return out

    def out_trees(self) -> tuple[PyTreeDef, PyTreeDef]:
        """``(out_tree, res_tree)``: the output structure and that of the user's
        residuals (staging the forward rule if it has not been yet)."""
        if self.res_tree is None:
            self()
        assert self.res_tree is not None
        return self.spec.out_tree, self.res_tree


def _check_fwd_result(spec: CallSpec, fwd_name: str, result: Any) -> tuple[list[Any], list[Any], PyTreeDef]:
    where = f"custom_vjp fwd rule {fwd_name} of {spec.name}"
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError(
            f"{where} must return a pair (output, residuals) where output has the structure {spec.out_tree}, "
            f"got {_describe(result)}"
        )
    out, res = result
    leaves, tree = tree_flatten(out)
    if tree != spec.out_tree:
        raise TypeError(
            f"{where} returned an output with the structure {tree}, but {spec.name} returns {spec.out_tree}; "
            "they must be the same"
        )
    for k, (x, a) in enumerate(zip(leaves, spec.out_avals)):
        try:
            b = get_aval(x)
        except TypeError:
            b = None
        if b is None or b.dtype != a.dtype or not definitely_equal_shapes(b.shape, a.shape):
            got = b.str_short() if b is not None else type(x).__name__
            raise TypeError(
                f"{where} returned output leaf {k} of type {got}, but {spec.name} returns {a.str_short()} there "
                f"(expected output types: {', '.join(v.str_short() for v in spec.out_avals)})"
            )
    res_leaves, res_tree = tree_flatten(res)
    for k, r in enumerate(res_leaves):
        if not (isinstance(r, Tracer) or _is_array_like(r) or type(r) in (bool, int, float, complex)):
            raise TypeError(f"{where} returned residual leaf {k} of type {type(r).__name__}; residuals must be arrays")
    return leaves, res_leaves, res_tree


class _KnownTrees:
    """The output and residual structures of a forward rule that already ran
    (the ``fwd_thunk`` of a :class:`BwdRule` made without staging)."""

    __slots__ = ("trees",)

    def __init__(self, out_tree: PyTreeDef, res_tree: PyTreeDef) -> None:
        self.trees = (out_tree, res_tree)

    def out_trees(self) -> tuple[PyTreeDef, PyTreeDef]:
        return self.trees


class BwdRule:
    """The ``bwd`` param of ``custom_vjp_call`` (hashable by identity).

    ``bwd(*residuals, *output_cotangents)`` returns one cotangent per operand
    (``None`` for a zero cotangent: consts, nondiff arguments, integer inputs
    and subtrees the user's rule returned as ``None``).  Output cotangents may
    be ``None`` (zero): they reach the user's rule as :class:`SymbolicZero`
    when ``symbolic_zeros`` else as arrays of zeros.  Call the forward thunk
    first: the residual structure is that of its latest staging."""

    __slots__ = ("bwd", "fwd_thunk", "spec", "symbolic_zeros")

    def __init__(
        self, spec: CallSpec, bwd: Callable[..., Any] | None, fwd_thunk: FwdJaxprThunk | _KnownTrees,
        symbolic_zeros: bool,
    ) -> None:  # fmt: skip
        self.spec, self.bwd, self.fwd_thunk, self.symbolic_zeros = spec, bwd, fwd_thunk, symbolic_zeros

    def __repr__(self) -> str:
        return f"bwd({fun_name(self.bwd) if self.bwd is not None else None})"

    def __call__(self, *res_and_cts: Any) -> list[Any]:
        spec = self.spec
        if self.bwd is None:
            raise AttributeError(custom_vjp_rule_missing_error(spec.name))
        _, res_tree = self.fwd_thunk.out_trees()
        extra_idx = spec.nondiff_leaf_indices()
        nres, nout = res_tree.num_leaves, len(spec.out_avals)
        if len(res_and_cts) != nres + len(extra_idx) + nout:
            raise TypeError(
                f"bwd of {spec.name}: expected {nres + len(extra_idx)} residuals and {nout} output cotangents, "
                f"got {len(res_and_cts)} values"
            )
        res = res_and_cts[:nres]
        extra = res_and_cts[nres : nres + len(extra_idx)]
        cts = [self._output_ct(c, a) for c, a in zip(res_and_cts[nres + len(extra_idx) :], spec.out_avals)]
        leaves: list[Any] = [None] * (len(spec.operand_avals) - spec.num_consts)
        for k, x in zip(extra_idx, extra):
            leaves[k] = x
        args = spec.args_from_leaves(leaves)
        bwd_name = fun_name(self.bwd)
        result = self.bwd(*spec.nondiff_values(args), tree_unflatten(res_tree, res), tree_unflatten(spec.out_tree, cts))
        return [None] * spec.num_consts + _check_bwd_result(spec, bwd_name, result)

    def _output_ct(self, ct: Any, aval: ShapedArray) -> Any:
        if not _is_zero(ct):
            return ct
        t = tangent_aval(aval)
        return SymbolicZero(t) if self.symbolic_zeros else zeros_of(t)


def _check_bwd_result(spec: CallSpec, bwd_name: str, result: Any) -> list[Any]:
    where = f"custom_vjp bwd rule {bwd_name} of {spec.name}"
    diff = spec.diff_positions
    expected = "(" + ", ".join(str(spec.arg_trees[i]) for i in diff) + ")"
    if not isinstance(result, tuple) or len(result) != len(diff):
        raise TypeError(
            f"{where} must return a tuple with one cotangent per differentiable argument ({len(diff)}), "
            f"of the structures {expected}; got {_describe(result)}"
        )
    nargs_leaves = len(spec.operand_avals) - spec.num_consts
    cts: list[Any] = [None] * nargs_leaves
    arg_avals = spec.operand_avals[spec.num_consts :]
    for pos, ct in zip(diff, result):
        idx = spec.leaves_of(pos)
        leaves = match_zero_tree(spec.arg_trees[pos], ct, f"{where}: the cotangent of argument {pos}")
        for j, (k, leaf) in enumerate(zip(idx, leaves)):
            cts[k] = check_tangent(f"{where}: cotangent leaf {j} of argument {pos}", leaf, arg_avals[k])
    return cts


class custom_vjp(Generic[F]):
    """A function with a custom VJP (reverse-mode derivative) rule.

    ``f = custom_vjp(fun, nondiff_argnums=())`` behaves like ``fun``; define the
    rule with ``f.defvjp(fwd, bwd)``: ``fwd`` takes ``fun``'s arguments and
    returns ``(output, residuals)``; ``bwd(*nondiff_args, residuals, g)`` returns
    a tuple with one cotangent per differentiable positional argument (``None``
    for a zero cotangent, of any subtree).
    """

    def __init__(self, fun: F, nondiff_argnums: Sequence[int] | int = ()) -> None:
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _check_argnums("custom_vjp", nondiff_argnums)
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        self.symbolic_zeros = False
        self.optimize_remat = False
        self._cache = StagingCache()

    def defvjp(
        self,
        fwd: Callable[..., Any],
        bwd: Callable[..., Any],
        symbolic_zeros: bool = False,
        optimize_remat: bool = False,
    ) -> None:
        """Set the forward rule ``fwd(*args) -> (output, residuals)`` and the
        backward rule ``bwd(*nondiff_args, residuals, output_cotangent) -> tuple``."""
        for what, f in (("fwd", fwd), ("bwd", bwd)):
            if not callable(f):
                raise TypeError(f"custom_vjp {fun_name(self.fun)}: defvjp expects a function as {what}, got {type(f).__name__}")
        self.fwd, self.bwd = fwd, bwd
        self.symbolic_zeros, self.optimize_remat = bool(symbolic_zeros), bool(optimize_remat)

    def jvp_on_values(
        self, args: tuple[Any, ...], tangents: Sequence[Any]
    ) -> tuple[PyTreeDef, list[Any], list[Any]] | None:
        """Run the forward rule in Python on ``args`` (values of the current
        trace), as JAX does when differentiating outside ``jit``, and bind the
        linear ``custom_lin`` whose transpose calls the backward rule on the
        residuals.  ``tangents`` has one entry per leaf of ``args`` (``None`` for
        a zero).  Returns the output tree, the primal output leaves and the
        output tangents; ``None`` when an argument in ``nondiff_argnums``
        carries a tangent (the staged call reports that)."""
        name = fun_name(self.fun)
        if self.fwd is None:
            raise AttributeError(custom_vjp_rule_missing_error(name))
        nondiff = _normalize_nondiff("custom_vjp", name, self.nondiff_argnums, len(args))
        static_pos = [i for i in nondiff if not any(_is_array_like(x) for x in tree_leaves(args[i]))]
        given = iter(tangents)
        operand_tangents: list[Any] = []
        for pos, arg in enumerate(args):
            ts = [next(given) for _ in tree_leaves(arg)]
            if pos in nondiff and any(t is not None for t in ts):
                return None
            if pos not in static_pos:
                operand_tangents.extend(ts)
        dyn, static = split_static(args, static_pos)
        leaves, in_tree = tree_flatten(dyn)
        nondiff_leaves = {k for i in nondiff if i not in static_pos for k in _leaf_range(dyn, i)}
        fwd_args = leaves
        if self.symbolic_zeros:
            fwd_args = [x if k in nondiff_leaves else CustomVJPPrimal(x, operand_tangents[k] is not None)
                        for k, x in enumerate(leaves)]
        result = self.fwd(*merge_static(tree_unflatten(in_tree, fwd_args), static))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(f"custom_vjp fwd rule {fun_name(self.fwd)} of {name} must return a pair "
                            f"(output, residuals), got {_describe(result)}")
        out_leaves, out_tree = tree_flatten(result[0])
        spec = CallSpec(
            "custom_vjp", name, len(args), nondiff, static, in_tree, [], [get_aval(x) for x in leaves],
            out_tree, [get_aval(x) for x in out_leaves],
        )  # fmt: skip
        outs, residuals, res_tree = _check_fwd_result(spec, fun_name(self.fwd), result)
        bwd = BwdRule(spec, self.bwd, _KnownTrees(out_tree, res_tree), self.symbolic_zeros)
        residuals = [*residuals, *[leaves[k] for k in spec.nondiff_leaf_indices()]]
        tangent_out = custom_lin_p.bind(
            *residuals, *[t for t in operand_tangents if t is not None], num_res=len(residuals), bwd=bwd,
            out_avals=tuple(tangent_aval(a) for a in spec.out_avals),
            in_nonzeros=tuple(t is not None for t in operand_tangents),
        )  # fmt: skip
        return out_tree, outs, list(tangent_out)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = resolve_kwargs(self.fun, args, kwargs, "custom_vjp")
        nondiff = _normalize_nondiff("custom_vjp", fun_name(self.fun), self.nondiff_argnums, len(args))
        if is_eager():
            return self.fun(*args)
        handled = current_trace().process_custom_derivative_call(self, args)
        if handled is not NotImplemented:
            return handled
        fwd, bwd, sz = self.fwd, self.bwd, self.symbolic_zeros

        def make_rules(spec: CallSpec) -> tuple[Any, ...]:
            thunk = FwdJaxprThunk(spec, fwd, sz)
            return thunk, BwdRule(spec, bwd, thunk, sz)

        staged, leaves = _stage_call("custom_vjp", self.fun, nondiff, args, self._cache, (fwd, bwd, sz), make_rules)
        _, thunk, bwd_rule = staged.extra
        outs = custom_vjp_call_p.bind(
            *staged.consts,
            *leaves,
            call_jaxpr=staged.body,
            fwd_jaxpr_thunk=thunk,
            bwd=bwd_rule,
            num_consts=len(staged.consts),
            out_trees=thunk.out_trees,
            symbolic_zeros=sz,
            optimize_remat=self.optimize_remat,
        )
        return tree_unflatten(staged.out_tree, outs)
