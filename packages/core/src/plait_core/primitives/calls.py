"""Primitives of the calls family: calls, custom-rule calls, checkpoint, invertible call.

All of them are *initial style*: the function they call is a
:class:`ClosedJaxpr` without constants held in a param; values the function
closed over travel as leading operands (so every interpreter sees them).
Their abstract evaluation is the called jaxpr's output types and their eager
implementation evaluates the called jaxpr (the primal semantics).  Params are
hashable; closed jaxprs and the rule wrappers hash by identity.

Operands and params (the protocol autodiff and batching are built against):

``closed_call(*operands; call_jaxpr, name, jit_info)``
    The call ``jit`` binds.  ``call_jaxpr`` takes exactly the operands.
    ``name`` is a ``str``; ``jit_info`` is an opaque hashable value (``None``
    by default) for plait-dispatch (device, donation).  Rules that build a
    new call from part of the operands derive its ``jit_info`` with
    :func:`remap_jit_info`; ``vmap``'s rule with :func:`batch_jit_info`.

``custom_jvp_call(*consts, *args; call_jaxpr, jvp_jaxpr_fun, num_consts, symbolic_zeros)``
    ``jvp_jaxpr_fun(in_nonzeros) -> JvpJaxpr`` (see
    :mod:`plait_core.custom_derivatives`).

``custom_vjp_call(*consts, *args; call_jaxpr, fwd_jaxpr_thunk, bwd, num_consts,
out_trees, symbolic_zeros, optimize_remat)``
    ``fwd_jaxpr_thunk(in_perturbed=None) -> FwdJaxpr``; ``bwd(*res, *cts_out)``
    returns one cotangent (or ``None`` for zero) per operand; ``out_trees()``
    returns ``(out_tree, res_tree)``.

``checkpoint(*operands; jaxpr, prevent_cse, differentiated, policy)``
    ``policy(prim, *in_avals, **params) -> bool`` says whether an equation's
    results may be saved for the backward pass (always a callable here; the
    front-end turns ``policy=None`` into ``nothing_saveable``).

``invertible_call(*consts, *args; jaxpr, name, num_consts, check)``
    ``check``: ``None``, or the drift check's tolerance and argument names
    (a :class:`~plait_core.invertible.DriftCheck`).

``custom_ivjp_call(*consts, *args; call_jaxpr, ivjp, in_tree, out_tree, num_consts)``
    ``ivjp(xs, ys, dys) -> (xs, dxs)`` on flat operand/output lists.

``custom_vmap_call(*consts, *args; call_jaxpr, rule, in_tree, out_tree, num_consts)``
    ``rule(axis_size, in_batched, *operands) -> (outs, out_batched)``.

``in_tree``/``out_tree`` are the :class:`PyTreeDef` of the argument tuple
(without consts) and of the output.  Partial evaluation splits
``closed_call`` into a known call bound now and an unknown call staged, and
``checkpoint`` into a known part evaluated now and an unknown ``checkpoint``
that recomputes whatever the policy does not let it save; dead-code
elimination prunes unused outputs and inputs of both.

The last section holds what the front-ends (``custom_jvp``, ``checkpoint``,
...) share: resolving keyword arguments, flattening arguments, and staging
with a small cache.
"""

from __future__ import annotations

import inspect
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any, NamedTuple

import numpy as np

from plait_core.abstract import ShapedArray, get_aval, registered_array_types, to_numpy
from plait_core.axes import axis_frame_size, bound_axis_names
from plait_core.config import config
from plait_core.dce import dce_closed_jaxpr, dce_rules
from plait_core.dims import definitely_equal_shapes
from plait_core.jaxpr import Atom, ClosedJaxpr, Jaxpr, JaxprEqn, Var, eval_jaxpr
from plait_core.partial_eval import PartialEvalTrace, partial_eval_jaxpr, partial_eval_rules
from plait_core.primitive import Primitive
from plait_core.staging import check_output_leaves, trace_to_jaxpr
from plait_core.trace import Tracer, set_current_trace
from plait_core.tree_util import PyTreeDef, keystr, tree_flatten, tree_flatten_with_path, tree_unflatten

__all__ = [
    "CALL_PRIMITIVES",
    "StagedFunction",
    "StagingCache",
    "bind_closed_call",
    "called_jaxpr",
    "checkpoint_p",
    "closed_call_p",
    "custom_ivjp_call_p",
    "custom_jvp_call_p",
    "custom_vjp_call_p",
    "custom_vmap_call_p",
    "hoist_consts",
    "invertible_call_p",
    "batch_jit_info",
    "remap_jit_info",
    "split_with_policy",
    "stage_cached",
]

closed_call_p = Primitive("closed_call", family="call", multiple_results=True)
custom_jvp_call_p = Primitive("custom_jvp_call", family="call", multiple_results=True)
custom_vjp_call_p = Primitive("custom_vjp_call", family="call", multiple_results=True)
checkpoint_p = Primitive("checkpoint", family="call", multiple_results=True)
invertible_call_p = Primitive("invertible_call", family="call", multiple_results=True)
custom_ivjp_call_p = Primitive("custom_ivjp_call", family="call", multiple_results=True)
custom_vmap_call_p = Primitive("custom_vmap_call", family="call", multiple_results=True)

#: The param naming the called jaxpr, and every param, per call primitive.
_PARAMS: dict[Primitive, tuple[str, frozenset[str]]] = {
    closed_call_p: ("call_jaxpr", frozenset({"call_jaxpr", "name", "jit_info"})),
    custom_jvp_call_p: (
        "call_jaxpr",
        frozenset({"call_jaxpr", "jvp_jaxpr_fun", "num_consts", "symbolic_zeros"}),
    ),
    custom_vjp_call_p: (
        "call_jaxpr",
        frozenset(
            {"call_jaxpr", "fwd_jaxpr_thunk", "bwd", "num_consts", "out_trees", "symbolic_zeros", "optimize_remat"}
        ),
    ),
    checkpoint_p: ("jaxpr", frozenset({"jaxpr", "prevent_cse", "differentiated", "policy"})),
    invertible_call_p: ("jaxpr", frozenset({"jaxpr", "name", "num_consts", "check"})),
    custom_ivjp_call_p: ("call_jaxpr", frozenset({"call_jaxpr", "ivjp", "in_tree", "out_tree", "num_consts"})),
    custom_vmap_call_p: ("call_jaxpr", frozenset({"call_jaxpr", "rule", "in_tree", "out_tree", "num_consts"})),
}

#: Every primitive of the calls family.
CALL_PRIMITIVES: tuple[Primitive, ...] = tuple(_PARAMS)

_CALLABLE_PARAMS = ("jvp_jaxpr_fun", "fwd_jaxpr_thunk", "bwd", "out_trees", "policy", "ivjp", "rule")
_BOOL_PARAMS = ("symbolic_zeros", "optimize_remat", "prevent_cse", "differentiated")


def called_jaxpr(prim: Primitive, params: dict[str, Any]) -> ClosedJaxpr:
    """The jaxpr a call primitive calls (``call_jaxpr`` or ``jaxpr``): its
    primal semantics, taking all the primitive's operands."""
    return params[_PARAMS[prim][0]]  # type: ignore[no-any-return]


def hoist_consts(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, list[Any]]:
    """Turn a closed jaxpr's constants into leading inputs: returns the
    const-free jaxpr and the constant values (to pass as leading operands).
    The const-free jaxpr is made once per closed jaxpr, so that calls built
    from a cached jaxpr are the same call each time (compiled once)."""
    j = closed.jaxpr
    if not j.constvars:
        return closed, []
    body = _hoisted.get(closed)
    if body is None:
        body = ClosedJaxpr(Jaxpr([], list(j.constvars) + list(j.invars), j.outvars, j.eqns), [])
        _hoisted[closed] = body
    return body, list(closed.consts)


_hoisted: weakref.WeakKeyDictionary[ClosedJaxpr, ClosedJaxpr] = weakref.WeakKeyDictionary()


def remap_jit_info(jit_info: Any, origin: tuple[int | None, ...]) -> Any:
    """The ``jit_info`` of a call built from part of another call's operands.

    ``origin[k]`` is the index in the original call of the new call's
    operand ``k``, or ``None`` for an operand the original did not have (a
    residual).  A ``jit_info`` with a ``remap_operands(origin)`` method
    decides (plait-dispatch drops or renumbers donations there); any other
    value is kept unchanged."""
    remap = getattr(jit_info, "remap_operands", None)
    return jit_info if remap is None else remap(origin)


def batch_jit_info(jit_info: Any, batched: tuple[bool, ...]) -> Any:
    """The ``jit_info`` of a call under ``vmap``, whose operands flagged in
    ``batched`` carry the batch as a new leading dimension.  A ``jit_info``
    with a ``batch_operands(batched)`` method decides (plait-dispatch gives
    their requested shardings an unsplit leading dimension); any other value
    is kept unchanged."""
    batch = getattr(jit_info, "batch_operands", None)
    return jit_info if batch is None else batch(batched)


def bind_closed_call(closed: ClosedJaxpr, *args: Any, name: str, jit_info: Any = None) -> list[Any]:
    """Call ``closed`` on ``args`` through ``closed_call`` (its constants are
    hoisted into leading operands)."""
    body, consts = hoist_consts(closed)
    return closed_call_p.bind(*consts, *args, call_jaxpr=body, name=name, jit_info=jit_info)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------
# Abstract evaluation and eager implementation (shared by every call primitive)


def _check_params(prim: Primitive, params: dict[str, Any], num_operands: int) -> ClosedJaxpr:
    jaxpr_param, expected = _PARAMS[prim]
    got = set(params)
    if got != expected:
        missing = ", ".join(sorted(expected - got)) or "none"
        extra = ", ".join(sorted(got - expected)) or "none"
        raise TypeError(f"{prim.name}: wrong params (missing: {missing}; unexpected: {extra})")
    closed = params[jaxpr_param]
    if not isinstance(closed, ClosedJaxpr):
        raise TypeError(f"{prim.name}: the param {jaxpr_param} must be a ClosedJaxpr, got {type(closed).__name__}")
    if closed.consts:
        raise ValueError(
            f"{prim.name}: the param {jaxpr_param} must have no constants; pass them as leading operands "
            "(see hoist_consts)"
        )
    for k in _CALLABLE_PARAMS:
        if k in params and not callable(params[k]):
            raise TypeError(f"{prim.name}: the param {k} must be callable, got {type(params[k]).__name__}")
    for k in _BOOL_PARAMS:
        if k in params and type(params[k]) is not bool:
            raise TypeError(f"{prim.name}: the param {k} must be a bool, got {params[k]!r}")
    if "name" in params and not isinstance(params["name"], str):
        raise TypeError(f"{prim.name}: the param name must be a str, got {type(params['name']).__name__}")
    if "jit_info" in params:
        try:
            hash(params["jit_info"])
        except TypeError:
            raise TypeError(
                f"{prim.name}: the param jit_info must be hashable, got {type(params['jit_info']).__name__}"
            ) from None
    nc = params.get("num_consts", 0)
    if type(nc) is not int or not 0 <= nc <= num_operands:
        raise TypeError(f"{prim.name}: num_consts must be an int in [0, {num_operands}], got {nc!r}")
    for k, n in (("in_tree", num_operands - nc), ("out_tree", len(closed.out_avals))):
        if k in params:
            tree = params[k]
            if not isinstance(tree, PyTreeDef):
                raise TypeError(f"{prim.name}: the param {k} must be a PyTreeDef, got {type(tree).__name__}")
            if tree.num_leaves != n:
                raise ValueError(f"{prim.name}: {k} has {tree.num_leaves} leaves but there are {n} values")
    return closed


def _call_abstract_eval(prim: Primitive) -> Callable[..., list[ShapedArray]]:
    def rule(*avals: ShapedArray, **params: Any) -> list[ShapedArray]:
        closed = _check_params(prim, params, len(avals))
        expected = closed.in_avals
        if len(avals) != len(expected):
            raise TypeError(f"{prim.name}: the called jaxpr takes {len(expected)} operands, got {len(avals)}")
        for k, (a, e) in enumerate(zip(avals, expected)):
            if a.dtype != e.dtype or not definitely_equal_shapes(a.shape, e.shape):
                raise TypeError(
                    f"{prim.name}: operand {k} has type {a.str_short()} but the called jaxpr takes {e.str_short()}"
                )
        return list(closed.out_avals)

    return rule


def _outputs_as(outs: Sequence[Any], avals: Sequence[ShapedArray]) -> list[Any]:
    """Results of evaluating a body as arrays of the promised dtypes.  Arrays
    of an installed backend (registered types) are kept as they are."""
    registered = registered_array_types()
    res: list[Any] = []
    for o, a in zip(outs, avals):
        if (type(o) is np.ndarray and o.dtype == a.dtype) or (registered and isinstance(o, registered)):
            res.append(o)
        else:
            res.append(to_numpy(o, a.dtype))
    return res


def _call_impl(prim: Primitive) -> Callable[..., list[Any]]:
    jaxpr_param = _PARAMS[prim][0]

    def impl(*args: Any, **params: Any) -> list[Any]:
        closed: ClosedJaxpr = params[jaxpr_param]
        return _outputs_as(eval_jaxpr(closed.jaxpr, closed.consts, *args), closed.out_avals)

    return impl


for _p in CALL_PRIMITIVES:
    _p.def_abstract_eval(_call_abstract_eval(_p))
    _p.def_impl(_call_impl(_p))


# ---------------------------------------------------------------------------
# Dead-code elimination: unused outputs and inputs are pruned inside the body.


def _dce_call(eqn: JaxprEqn, used_outs: list[bool]) -> tuple[list[bool], JaxprEqn | None]:
    if not any(used_outs):
        return [False] * len(eqn.invars), None
    jaxpr_param = _PARAMS[eqn.primitive][0]
    closed: ClosedJaxpr = eqn.params[jaxpr_param]
    new_closed, used_ins = dce_closed_jaxpr(closed, used_outs, prune_inputs=True)
    if all(used_outs) and all(used_ins) and len(new_closed.eqns) == len(closed.eqns):
        return [True] * len(eqn.invars), eqn  # unchanged: keep the params (and caches keyed on them)
    params = dict(eqn.params)
    params[jaxpr_param] = new_closed
    if "jit_info" in params:
        params["jit_info"] = remap_jit_info(params["jit_info"], tuple(i for i, u in enumerate(used_ins) if u))
    new_eqn = eqn.replace(
        invars=[a for a, u in zip(eqn.invars, used_ins) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outs) if u],
        params=params,
    )
    # As dce_jaxpr reads it: one flag per input of the *new* equation.
    return [True] * len(new_eqn.invars), new_eqn


dce_rules[closed_call_p] = _dce_call
dce_rules[checkpoint_p] = _dce_call


# ---------------------------------------------------------------------------
# Partial evaluation


def _merge(out_unknowns: Sequence[bool], known: Sequence[Any], unknown: Sequence[Any]) -> list[Any]:
    ki, ui = iter(known), iter(unknown)
    return [next(ui) if u else next(ki) for u in out_unknowns]


def _closed_call_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """Bind the known half of the call now (as a call) and stage the unknown half."""
    closed: ClosedJaxpr = params["call_jaxpr"]
    in_unknowns = [trace.is_unknown(x) for x in args]
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, in_unknowns)
    known_body, known_consts = hoist_consts(known)
    known_args = [x for x, u in zip(args, in_unknowns) if not u]
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        if known_body.eqns:
            origin = (None,) * len(known_consts) + tuple(i for i, u in enumerate(in_unknowns) if not u)
            known_outs = closed_call_p.bind(
                *known_consts,
                *known_args,
                call_jaxpr=known_body,
                name=params["name"],
                jit_info=remap_jit_info(params["jit_info"], origin),
            )
        else:  # nothing to compute: the known outputs and residuals are forwarded values
            known_outs = eval_jaxpr(known_body.jaxpr, [], *known_consts, *known_args)
    nk = len(known_outs) - num_res
    unknown_outs: list[Any] = []
    if any(out_unknowns):
        origin = (None,) * num_res + tuple(i for i, u in enumerate(in_unknowns) if u)
        unknown_args = [x for x, u in zip(args, in_unknowns) if u]
        unknown_params = dict(params, call_jaxpr=unknown, jit_info=remap_jit_info(params["jit_info"], origin))
        unknown_outs = trace.stage(closed_call_p, [*known_outs[nk:], *unknown_args], unknown_params)
    return _merge(out_unknowns, known_outs[:nk], unknown_outs)


def split_with_policy(
    known: ClosedJaxpr, unknown: ClosedJaxpr, num_res: int, policy: Callable[..., Any]
) -> tuple[ClosedJaxpr, ClosedJaxpr, int]:
    """Apply a checkpoint policy to a known/unknown split (of :func:`partial_eval_jaxpr`).

    A residual may be saved only if it is an input of the known part or the
    result of an equation the policy accepts; any other residual is
    recomputed in the unknown part from saved values.  Returns the new
    known part (known inputs -> known outputs, saved values), the new unknown
    part (saved values, unknown inputs -> unknown outputs) and the number of
    saved values."""
    kj = known.jaxpr
    nk = len(kj.outvars) - num_res
    residuals = kj.outvars[nk:]
    producer: dict[Var, JaxprEqn] = {v: e for e in kj.eqns for v in e.outvars}
    verdict: dict[int, bool] = {}

    def saveable(e: JaxprEqn) -> bool:
        if id(e) not in verdict:
            verdict[id(e)] = bool(policy(e.primitive, *[a.aval for a in e.invars], **e.params))
        return verdict[id(e)]

    saved: dict[Atom, None] = {}
    need: set[Var] = set()
    for a in residuals:
        if type(a) is Var and a in producer and not saveable(producer[a]):
            need.add(a)
        else:
            saved[a] = None
    recompute: list[JaxprEqn] = []
    for e in reversed(kj.eqns):
        wanted = [v for v in e.outvars if v in need]
        if not wanted:
            continue
        need.difference_update(wanted)
        if saveable(e):
            saved.update(dict.fromkeys(wanted))
            continue
        recompute.append(e)
        need.update(a for a in e.invars if type(a) is Var)
    saved.update(dict.fromkeys(v for v in kj.invars + kj.constvars if v in need))
    recompute.reverse()
    saved_atoms = list(saved)

    new_known, _ = dce_closed_jaxpr(
        ClosedJaxpr(Jaxpr(kj.constvars, kj.invars, kj.outvars[:nk] + saved_atoms, kj.eqns), known.consts)
    )
    # The unknown part reads saved values through the same variables (a literal
    # gets a fresh input variable) and recomputed ones from the recomputing eqns.
    uj = unknown.jaxpr
    inputs: dict[Atom, Var] = {a: a if type(a) is Var else Var(a.aval) for a in saved_atoms}
    rename: dict[Var, Atom] = {r: inputs.get(s, s) for r, s in zip(uj.invars[:num_res], residuals)}

    def sub(a: Atom) -> Atom:
        return rename.get(a, a) if type(a) is Var else a

    eqns = recompute + [e.replace(invars=[sub(a) for a in e.invars]) for e in uj.eqns]
    body = Jaxpr([], list(inputs.values()) + list(uj.invars[num_res:]), [sub(a) for a in uj.outvars], eqns)
    return new_known, ClosedJaxpr(body, []), len(saved_atoms)


def _checkpoint_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """Evaluate the known part now; stage the unknown part as a checkpoint that
    recomputes what the policy does not save."""
    closed: ClosedJaxpr = params["jaxpr"]
    in_unknowns = [trace.is_unknown(x) for x in args]
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, in_unknowns)
    known, unknown, num_saved = _split_with_policy_cached(known, unknown, num_res, params["policy"])
    known_args = [x for x, u in zip(args, in_unknowns) if not u]
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        known_outs = eval_jaxpr(known.jaxpr, known.consts, *known_args)
    nk = len(known_outs) - num_saved
    unknown_outs: list[Any] = []
    if any(out_unknowns):
        unknown_args = [x for x, u in zip(args, in_unknowns) if u]
        staged_params = dict(params, jaxpr=unknown, differentiated=True)
        unknown_outs = trace.stage(checkpoint_p, [*known_outs[nk:], *unknown_args], staged_params)
    return _merge(out_unknowns, known_outs[:nk], unknown_outs)


_policy_splits: weakref.WeakKeyDictionary[ClosedJaxpr, dict[Hashable, tuple[ClosedJaxpr, ClosedJaxpr, int]]] = (
    weakref.WeakKeyDictionary()
)


def _split_with_policy_cached(
    known: ClosedJaxpr, unknown: ClosedJaxpr, num_res: int, policy: Callable[..., Any]
) -> tuple[ClosedJaxpr, ClosedJaxpr, int]:
    """:func:`split_with_policy`, cached per known part (itself cached per jaxpr by
    :func:`partial_eval_jaxpr`): differentiating one checkpoint again (an eager
    ``grad`` in a loop, or a layer applied several times) stages the same
    unknown part, which a compiling backend then finds compiled, as JAX's."""
    key = (unknown, num_res, policy)
    try:
        hit = _policy_splits.get(known, {}).get(key)
    except TypeError:  # an unhashable policy
        return split_with_policy(known, unknown, num_res, policy)
    if hit is not None:
        return hit
    out = split_with_policy(known, unknown, num_res, policy)
    if not any(isinstance(c, Tracer) for c in [*known.consts, *unknown.consts, *out[0].consts, *out[1].consts]):
        _policy_splits.setdefault(known, {})[key] = out
    return out


partial_eval_rules[closed_call_p] = _closed_call_partial_eval
partial_eval_rules[checkpoint_p] = _checkpoint_partial_eval


# ---------------------------------------------------------------------------
# What the front-ends share: keyword resolution, flattening, cached staging.


def fun_name(fun: Any) -> str:
    """A readable name for a user function (for messages and ``name`` params)."""
    name = getattr(fun, "__name__", None)
    if isinstance(name, str):
        return name
    inner = getattr(fun, "func", None)  # functools.partial
    if inner is not None:
        return fun_name(inner)
    return type(fun).__name__


def resolve_kwargs(fun: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], what: str) -> tuple[Any, ...]:
    """Positional arguments equivalent to ``fun(*args, **kwargs)``, defaults filled in.

    Keyword arguments are bound to ``fun``'s parameters; passing a
    keyword-only argument (or one caught by ``**kwargs``) is a ``TypeError``:
    ``what`` functions (``custom_jvp``, ...) take positional arguments only."""
    name = fun_name(fun)
    try:
        sig = inspect.signature(fun)
    except (TypeError, ValueError):
        if kwargs:
            raise TypeError(
                f"{what} function {name}: cannot resolve the keyword arguments {sorted(kwargs)} because the "
                "function's signature is not available; pass them positionally"
            ) from None
        return args
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{what} function {name}: {e}") from None
    bound.apply_defaults()
    passed = [k for k in bound.kwargs if k in kwargs]
    if passed:
        raise TypeError(
            f"{what} function {name} was called with the keyword-only argument(s) {', '.join(passed)}; "
            f"{what} functions can't take keyword-only arguments: make them positional, or close over them"
        )
    return tuple(bound.args)


def flatten_operands(tree: Any, what: str) -> tuple[list[Any], PyTreeDef, list[ShapedArray]]:
    """Leaves, structure and abstract values of a pytree of arguments.  A leaf
    that is not an array or scalar is a ``TypeError`` naming ``what`` and its path."""
    pairs, treedef = tree_flatten_with_path(tree)
    leaves = [x for _, x in pairs]
    avals: list[ShapedArray] = []
    for path, x in pairs:
        try:
            avals.append(get_aval(x))
        except TypeError:
            raise TypeError(
                f"{what}: the argument leaf at {keystr(path) or 'the root'} has type {type(x).__name__}, "
                "which is not an array or scalar"
            ) from None
    return leaves, treedef, avals


def has_tracers(xs: Sequence[Any]) -> bool:
    """True if any value is a tracer (such values must not be cached)."""
    return any(isinstance(x, Tracer) for x in xs)


def context_key() -> Hashable:
    """What staging depends on besides the arguments: the x64 flag and the
    bound axis names with their sizes."""
    names = bound_axis_names()
    return (config.x64_enabled, tuple((n, axis_frame_size(n)) for n in names))


def hashable_key(*parts: Any) -> Hashable | None:
    """``parts`` as a cache key, or ``None`` when some part is not hashable."""
    key = (*parts, context_key())
    try:
        hash(key)
    except TypeError:
        return None
    return key


class StagingCache:
    """A small least-recently-used cache of staged functions, keyed by
    abstract inputs, pytree structure and static arguments.  Entries whose
    constants include tracers are never stored (they belong to one trace)."""

    __slots__ = ("_entries", "maxsize")

    def __init__(self, maxsize: int = 32) -> None:
        self._entries: OrderedDict[Hashable, Any] = OrderedDict()
        self.maxsize = maxsize

    def get(self, key: Hashable | None) -> Any:
        """The entry for ``key``, or ``None``."""
        if key is None:
            return None
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
        return entry

    def put(self, key: Hashable | None, entry: Any, consts: Sequence[Any]) -> None:
        """Remember ``entry`` unless ``key`` is ``None`` or ``consts`` hold tracers."""
        if key is None or has_tracers(consts):
            return
        self._entries[key] = entry
        if len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)


def stage_flat(fun: Callable[..., Sequence[Any]], in_avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[Any]]:
    """Stage a flat function and hoist its constants: ``(const-free jaxpr, consts)``."""
    return hoist_consts(trace_to_jaxpr(fun, in_avals))


class StagedFunction(NamedTuple):
    """A pytree function staged for a call primitive: the const-free ``body``
    (taking ``consts`` then the argument leaves), the argument and output
    structures, and whatever the front-end built alongside (``extra``)."""

    body: ClosedJaxpr
    consts: list[Any]
    in_tree: PyTreeDef
    out_tree: PyTreeDef
    extra: Any


def stage_cached(
    what: str,
    in_value: Any,
    apply: Callable[[Any], Any],
    cache: StagingCache,
    extra_key: Any = (),
    make_extra: Callable[[ClosedJaxpr, list[Any], PyTreeDef, PyTreeDef], Any] | None = None,
) -> tuple[StagedFunction, list[Any]]:
    """Stage ``apply(in_value)`` with the leaves of ``in_value`` abstracted.

    Returns the staged function and the argument leaves to bind.  Staging is
    cached by abstract inputs, structure, ``extra_key`` (static arguments,
    rules) and :func:`context_key`; ``what`` names the function in errors."""
    leaves, in_tree, avals = flatten_operands(in_value, what)
    key = hashable_key(in_tree, tuple(avals), extra_key)
    hit: StagedFunction | None = cache.get(key)
    if hit is not None:
        return hit, leaves
    out_trees: list[PyTreeDef] = []

    def flat_fun(*xs: Any) -> list[Any]:
        out_leaves, out_tree = tree_flatten(apply(tree_unflatten(in_tree, xs)))
        check_output_leaves(out_leaves, out_tree, what)
        out_trees.append(out_tree)
        return out_leaves

    body, consts = stage_flat(flat_fun, avals)
    extra = None if make_extra is None else make_extra(body, consts, in_tree, out_trees[0])
    staged = StagedFunction(body, consts, in_tree, out_trees[0], extra)
    cache.put(key, staged, consts)
    return staged, leaves


def normalize_argnums(what: str, argnums: int | Sequence[int], nargs: int, param: str) -> tuple[int, ...]:
    """``argnums`` as sorted non-negative positions; ValueError when out of range."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    out = set()
    for n in nums:
        if type(n) is not int:
            raise TypeError(f"{what}: {param} must be ints, got {n!r}")
        m = n + nargs if n < 0 else n
        if not 0 <= m < nargs:
            raise ValueError(f"{what}: {param} {n} is out of range for a call with {nargs} positional arguments")
        out.add(m)
    return tuple(sorted(out))


def split_static(args: Sequence[Any], static: Sequence[int]) -> tuple[tuple[Any, ...], dict[int, Any]]:
    """``(args with static positions replaced by None, {position: static value})``."""
    s = {i: args[i] for i in static}
    return tuple(None if i in s else a for i, a in enumerate(args)), s


def merge_static(dyn: Sequence[Any], static: dict[int, Any]) -> list[Any]:
    """Undo :func:`split_static`."""
    full = list(dyn)
    for i, v in static.items():
        full[i] = v
    return full
