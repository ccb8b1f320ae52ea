"""Derivatives of ``custom_vmap_call`` that keep the user's batching rule.

A ``vmap`` applied outside a derivative of a ``custom_vmap`` function must
still batch with the user's rule, so every derivative of the call is again a
``custom_vmap_call`` whose function is the derivative of the called jaxpr and
whose rule is the same derivative of the user's rule (as in JAX):

* JVP: the call is bound again with the JVP of its jaxpr (primal outputs,
  then the nonzero output tangents) and :class:`JvpOfRule`, the JVP of the
  rule: it runs the rule under forward mode.
* Partial evaluation (``linearize``, ``vjp``, ``grad``): a JVP call whose
  primal operands are known splits into the original call, bound now, and a
  *tangent call* (the tangent half of the JVP, with :class:`JvpOfRule`
  giving tangents only), staged with the primal operands as its residuals.
  The tangent call recomputes from them what it needs, as a ``checkpoint``
  would: the residuals of the function's own derivative depend on how it is
  batched, which is not known yet.
* Transposition: a call linear in some operands transposes into a call of
  the transposed jaxpr whose rule, :class:`VjpOfRule`, is the VJP of the
  rule with respect to those operands.

A rule only sees the function's explicit arguments, so differentiating
with respect to a value the function closes over (a leading constant
operand) is a ``TypeError`` saying to pass it as an argument.  In a rule's
derivative an operand whose primal and tangent (or cotangent) disagree on
being batched is broadcast along the batch, since each element of the batch
has its own derivative.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from plait_autodiff.jaxpr_util import eval_jaxpr, hoist_consts
from plait_autodiff.jvp import jvp_flat, jvp_jaxpr
from plait_autodiff.registries import jvp_rules, transpose_rules
from plait_autodiff.tangents import Zero, instantiate, is_float0, to_tangent_type
from plait_autodiff.transpose import (
    NonlinearError,
    UndefinedPrimal,
    backward_pass,
    is_undefined,
    transpose_jaxpr,
)
from plait_core import ClosedJaxpr, get_aval, set_current_trace
from plait_core.abstract import ShapedArray
from plait_core.custom_derivatives import closure_differentiation_error
from plait_core.dce import dce_closed_jaxpr
from plait_core.partial_eval import PartialEvalTrace, partial_eval_rules
from plait_core.primitives.calls import StagingCache, custom_vmap_call_p, fun_name, hashable_key
from plait_core.primitives.structural import broadcast_in_dim_p
from plait_core.staging import trace_to_jaxpr
from plait_core.tree_util import PyTreeDef, tree_structure

__all__ = ["JvpOfRule", "VjpOfRule"]

Rule = Callable[..., tuple[list[Any], list[bool]]]


def _rule_name(rule: Any) -> str:
    return getattr(rule, "name", None) or fun_name(getattr(rule, "rule", rule))


def _flat_tree(n: int) -> PyTreeDef:
    return tree_structure((0,) * n)


def _broadcast(x: Any, axis_size: Any) -> Any:
    """``x`` repeated along a new leading batch axis."""
    shape = tuple(get_aval(x).shape)
    return broadcast_in_dim_p.bind(x, shape=(axis_size, *shape), broadcast_dimensions=tuple(range(1, len(shape) + 1)))


def _check_count(rule: Any, in_batched: Sequence[bool], ops: Sequence[Any], expected: int) -> None:
    if len(in_batched) != len(ops) or len(ops) != expected:
        raise ValueError(
            f"{rule!r}: expected {expected} operands and as many flags, got {len(ops)} operands and "
            f"{len(in_batched)} flags"
        )


def _check_leading_unbatched(rule: Any, in_batched: Sequence[bool], count: int) -> None:
    """The leading constants of a derivative call are the derivative's own
    (numbers it computes with), never batched by a correct program."""
    if any(in_batched[:count]):
        raise TypeError(
            f"The custom_vmap function {rule.name} closes over a value that vmap batches; that is not "
            "supported (its batching rule only sees the explicit arguments). Pass the value as an argument"
        )


_memo = StagingCache(256)


def _memoized(key: tuple[Any, ...], make: Callable[[], Any], consts: Callable[[Any], Sequence[Any]] = lambda _: ()) -> Any:
    """One rule object (or staged jaxpr) per key, so that the same derivative
    taken twice binds equal params (and hits the caches keyed on them).  What
    holds tracers (``consts`` of the result) is not remembered."""
    hkey = hashable_key(*key)
    hit = _memo.get(hkey)
    if hit is None:
        hit = make()
        _memo.put(hkey, hit, list(consts(hit)))
    return hit


# ---------------------------------------------------------------------------
# JVP


class JvpOfRule:
    """The rule of the JVP of a ``custom_vmap_call``: the JVP of ``inner``.

    Operands: ``(*hoisted, *primals, *nonzero tangents)`` where ``hoisted``
    are constants of the JVP jaxpr (ignored by the rule) and ``nonzeros``
    flags the primals whose tangent is given.  Returns the primal outputs
    (unless ``primal_outs`` is false: the tangent call) and the tangents of
    the outputs flagged in ``out_nonzeros``, each batched as ``inner`` says
    its primal output is.  ``primal_params`` are the params of the call
    whose JVP this is (partial evaluation binds it again)."""

    __slots__ = ("inner", "name", "nonzeros", "num_hoisted", "out_nonzeros", "primal_outs", "primal_params")

    def __init__(
        self, inner: Rule, name: str, num_hoisted: int, nonzeros: tuple[bool, ...], out_nonzeros: tuple[bool, ...],
        primal_outs: bool, primal_params: dict[str, Any],
    ) -> None:  # fmt: skip
        self.inner, self.name, self.num_hoisted = inner, name, num_hoisted
        self.nonzeros, self.out_nonzeros, self.primal_outs = nonzeros, out_nonzeros, primal_outs
        self.primal_params = primal_params

    def __repr__(self) -> str:
        return f"{'jvp' if self.primal_outs else 'tangent'}_of({self.inner!r})"

    def tangent_part(self, num_hoisted: int) -> JvpOfRule:
        """The rule of the tangent call (tangent outputs only)."""
        part: JvpOfRule = _memoized(
            ("tangent", self, num_hoisted),
            lambda: JvpOfRule(
                self.inner, self.name, num_hoisted, self.nonzeros, self.out_nonzeros, False, self.primal_params
            ),
        )
        return part

    def __call__(self, axis_size: Any, in_batched: Sequence[bool], *ops: Any) -> tuple[list[Any], list[bool]]:
        h, n, nz = self.num_hoisted, len(self.nonzeros), self.nonzeros
        _check_count(self, in_batched, ops, h + n + sum(nz))
        _check_leading_unbatched(self, in_batched, h)
        given, given_b = iter(ops[h + n :]), iter(in_batched[h + n :])
        flags: list[bool] = []
        primals: list[Any] = []
        tangents: list[Any] = []
        for p, pb, z in zip(ops[h : h + n], in_batched[h : h + n], nz):
            t, tb = (next(given), bool(next(given_b))) if z else (None, False)
            b = bool(pb) or tb
            flags.append(b)
            primals.append(_broadcast(p, axis_size) if b and not pb else p)
            if t is None:
                tangents.append(Zero.from_primal_value(primals[-1]))
            else:
                tangents.append(_broadcast(t, axis_size) if b and not tb else t)
        out_batched: list[list[bool]] = []

        def run(*xs: Any) -> list[Any]:
            outs, ob = self.inner(axis_size, flags, *xs)
            out_batched.append([bool(b) for b in ob])
            return list(outs)

        outs, out_ts = jvp_flat(run, primals, tangents)
        ob = out_batched[0]
        kept = [instantiate(t) for t, keep in zip(out_ts, self.out_nonzeros) if keep]
        kept_b = [b for b, keep in zip(ob, self.out_nonzeros) if keep]
        if self.primal_outs:
            return [*outs, *kept], [*ob, *kept_b]
        return kept, kept_b


def _nonzero_tangents(primals: Sequence[Any], tangents: Sequence[Any]) -> list[Any]:
    """Tangents with ``float0`` ones (of integer operands) made symbolic zeros."""
    out = []
    for p, t in zip(primals, tangents):
        aval = t.aval if type(t) is Zero else get_aval(t)
        out.append(Zero.from_primal_value(p) if type(t) is not Zero and is_float0(aval) else t)
    return out


def _custom_vmap_call_jvp(
    primals: Sequence[Any], tangents: Sequence[Any], *, call_jaxpr: ClosedJaxpr, rule: Rule, num_consts: int,
    in_tree: PyTreeDef, out_tree: PyTreeDef,
) -> tuple[list[Any], list[Any]]:  # fmt: skip
    tangents = _nonzero_tangents(primals, tangents)
    nz = tuple(type(t) is not Zero for t in tangents)
    name = _rule_name(rule)
    if any(nz[:num_consts]):
        raise TypeError(closure_differentiation_error("custom_vmap", name))
    body, out_nz = jvp_jaxpr(call_jaxpr, nz, False)
    body, hoisted = hoist_consts(body)
    params = {"call_jaxpr": call_jaxpr, "rule": rule, "num_consts": num_consts, "in_tree": in_tree, "out_tree": out_tree}
    onz = tuple(out_nz)
    new_rule = _memoized(
        ("jvp", rule, call_jaxpr, nz, onz, len(hoisted)),
        lambda: JvpOfRule(rule, name, len(hoisted), nz, onz, True, params),
    )
    given = [t for t in tangents if type(t) is not Zero]
    outs = custom_vmap_call_p.bind(
        *hoisted, *primals, *given, call_jaxpr=body, rule=new_rule, num_consts=len(hoisted),
        in_tree=_flat_tree(len(primals) + len(given)), out_tree=_flat_tree(len(body.out_avals)),
    )  # fmt: skip
    n = len(call_jaxpr.out_avals)
    it = iter(outs[n:])
    return list(outs[:n]), [next(it) if z else Zero.from_primal_value(p) for z, p in zip(out_nz, outs[:n])]


jvp_rules[custom_vmap_call_p] = _custom_vmap_call_jvp


# ---------------------------------------------------------------------------
# Partial evaluation: the primal call now, the tangent call later


def _tangent_jaxpr(call_jaxpr: ClosedJaxpr, nonzeros: tuple[bool, ...], out_nonzeros: tuple[bool, ...]) -> ClosedJaxpr:
    """The tangent call's jaxpr: ``(*primals, *nonzero tangents)`` to the
    nonzero output tangents, as ``linearize`` stages it (the primal values it
    needs computed first, then a jaxpr linear in the tangents, which
    transposition can take apart)."""
    from plait_autodiff.api import linearize_flat

    in_avals = call_jaxpr.in_avals
    n = len(in_avals)

    def fun(*xs: Any) -> list[Any]:
        primals = xs[:n]

        def call(*d: Any) -> list[Any]:
            it = iter(d)
            full = [next(it) if z else p for p, z in zip(primals, nonzeros)]
            return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *full)

        _, linear = linearize_flat(call, [p for p, z in zip(primals, nonzeros) if z])
        outs = eval_jaxpr(linear.jaxpr, linear.consts, *xs[n:])
        return [t for t, keep in zip(outs, out_nonzeros) if keep]

    tangent_avals = [to_tangent_type(a) for a, z in zip(in_avals, nonzeros) if z]
    pruned, _ = dce_closed_jaxpr(trace_to_jaxpr(fun, [*in_avals, *tangent_avals]))
    return pruned


def _custom_vmap_call_partial_eval(trace: PartialEvalTrace, args: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    rule = params["rule"]
    n_known = rule.num_hoisted + len(rule.nonzeros) if type(rule) is JvpOfRule and rule.primal_outs else 0
    if not n_known or any(trace.is_unknown(x) for x in args[:n_known]):
        return list(trace.stage(custom_vmap_call_p, args, params))
    primals = args[rule.num_hoisted : n_known]
    with set_current_trace(trace.parent):  # type: ignore[arg-type]
        primal_outs = custom_vmap_call_p.bind(*primals, **rule.primal_params)
    call_jaxpr, nz, onz = rule.primal_params["call_jaxpr"], rule.nonzeros, rule.out_nonzeros
    body, hoisted = _memoized(
        ("tangent_body", call_jaxpr, nz, onz), lambda: hoist_consts(_tangent_jaxpr(call_jaxpr, nz, onz)), lambda r: r[1]
    )
    tangent_args = [*hoisted, *primals, *args[n_known:]]
    tangent_params = dict(
        params, call_jaxpr=body, rule=rule.tangent_part(len(hoisted)), num_consts=len(hoisted),
        in_tree=_flat_tree(len(tangent_args) - len(hoisted)), out_tree=_flat_tree(len(body.out_avals)),
    )  # fmt: skip
    tangent_outs = trace.stage(custom_vmap_call_p, tangent_args, tangent_params)
    return [*primal_outs, *tangent_outs]


partial_eval_rules[custom_vmap_call_p] = _custom_vmap_call_partial_eval


# ---------------------------------------------------------------------------
# Transposition


class VjpOfRule:
    """The rule of the transpose of a ``custom_vmap_call``: the VJP of ``inner``
    with respect to the operands flagged ``linear``.

    Operands: ``(*hoisted, *non-linear operands, *cotangents of the outputs
    flagged in ct_nonzeros)``; returns one cotangent per linear operand, all
    batched (each element of the batch has its own)."""

    __slots__ = ("ct_nonzeros", "in_avals", "inner", "linear", "name", "num_hoisted")

    def __init__(
        self, inner: Rule, name: str, num_hoisted: int, linear: tuple[bool, ...], ct_nonzeros: tuple[bool, ...],
        in_avals: tuple[ShapedArray, ...],
    ) -> None:  # fmt: skip
        self.inner, self.name, self.num_hoisted = inner, name, num_hoisted
        self.linear, self.ct_nonzeros, self.in_avals = linear, ct_nonzeros, in_avals

    def __repr__(self) -> str:
        return f"vjp_of({self.inner!r})"

    def __call__(self, axis_size: Any, in_batched: Sequence[bool], *ops: Any) -> tuple[list[Any], list[bool]]:
        from plait_autodiff.api import linearize_flat

        h, lin = self.num_hoisted, self.linear
        nres = lin.count(False)
        _check_count(self, in_batched, ops, h + nres + sum(self.ct_nonzeros))
        _check_leading_unbatched(self, in_batched, h)
        res, res_b = iter(ops[h : h + nres]), iter(in_batched[h : h + nres])
        given, given_b = iter(ops[h + nres :]), iter(in_batched[h + nres :])
        flags = [True if is_lin else bool(next(res_b)) for is_lin in lin]
        fixed = [None if is_lin else next(res) for is_lin in lin]
        # The linear operands are batched: each element gets its own cotangent.
        zeros = [
            instantiate(Zero(to_tangent_type(a.update(shape=(axis_size, *a.shape)))))
            for a, is_lin in zip(self.in_avals, lin)
            if is_lin
        ]

        def run(*xs: Any) -> list[Any]:
            it = iter(xs)
            full = [next(it) if is_lin else x for x, is_lin in zip(fixed, lin)]
            outs, ob = self.inner(axis_size, flags, *full)
            return [o if b else _broadcast(o, axis_size) for o, b in zip(outs, ob)]

        outs, linear = linearize_flat(run, zeros)
        cts: list[Any] = []
        for o, z in zip(outs, self.ct_nonzeros):
            if not z:
                cts.append(Zero.from_primal_value(o))
                continue
            ct, b = next(given), bool(next(given_b))
            cts.append(ct if b else _broadcast(ct, axis_size))
        cts_in = backward_pass(linear.jaxpr, linear.consts, [UndefinedPrimal(a) for a in linear.in_avals], cts)
        return [instantiate(c) for c in cts_in], [True] * len(cts_in)


def _custom_vmap_call_transpose(
    cts: Sequence[Any], *args: Any, call_jaxpr: ClosedJaxpr, rule: Rule, num_consts: int, in_tree: PyTreeDef,
    out_tree: PyTreeDef,
) -> list[Any]:  # fmt: skip
    linear = tuple(is_undefined(x) for x in args)
    name = _rule_name(rule)
    if any(linear[:num_consts]):
        raise NonlinearError(
            f"cannot transpose the custom_vmap function {name} with respect to a value it closes over: its "
            "batching rule only sees the explicit arguments. Pass the value to the function as an argument"
        )
    ct_nz = tuple(type(ct) is not Zero for ct in cts)
    if not any(ct_nz):
        return [Zero(to_tangent_type(x.aval)) if is_lin else None for x, is_lin in zip(args, linear)]
    body, hoisted = hoist_consts(transpose_jaxpr(call_jaxpr, linear, ct_nz))
    in_avals = tuple(call_jaxpr.in_avals)
    new_rule = _memoized(
        ("vjp", rule, call_jaxpr, linear, ct_nz, len(hoisted)),
        lambda: VjpOfRule(rule, name, len(hoisted), linear, ct_nz, in_avals),
    )
    residuals = [x for x, is_lin in zip(args, linear) if not is_lin]
    given = [ct for ct in cts if type(ct) is not Zero]
    outs = iter(custom_vmap_call_p.bind(
        *hoisted, *residuals, *given, call_jaxpr=body, rule=new_rule, num_consts=len(hoisted),
        in_tree=_flat_tree(len(residuals) + len(given)), out_tree=_flat_tree(len(body.out_avals)),
    ))  # fmt: skip
    return [next(outs) if is_lin else None for is_lin in linear]


transpose_rules[custom_vmap_call_p] = _custom_vmap_call_transpose
