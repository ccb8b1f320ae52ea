"""The public differentiation API: ``jvp``, ``linearize``, ``vjp``, ``grad``,
``value_and_grad`` and ``linear_transpose`` (Jacobians are in
:mod:`plait_autodiff.jacobians`).

Semantics and signatures follow JAX.  Reverse mode is forward mode under
partial evaluation (``linearize``: the primal computation runs now, the
tangent computation is staged into a linear jaxpr whose constants are the
residuals) followed by transposition of that linear jaxpr.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff.api_util import (
    FlatFun,
    check_callable,
    check_input_dtypes,
    check_scalar_output,
    check_tangent,
    normalize_argnums,
    primal_aval,
    split_args,
    tangent_or_zero,
)
from plait_autodiff.jaxpr_util import eval_jaxpr
from plait_autodiff.jvp import jvp_flat
from plait_autodiff.tangents import Zero, instantiate, is_float0, to_tangent_type, typed_as_primal
from plait_autodiff.transpose import UndefinedPrimal, backward_pass
from plait_core import (
    ClosedJaxpr,
    PartialEvalTrace,
    dtypes,
    get_aval,
    trace_pytree_function,
    transformation,
)
from plait_core.abstract import ShapedArray
from plait_core.dce import dce_closed_jaxpr
from plait_core.numpy.creation import asarray
from plait_core.primitives.structural import broadcast_in_dim_p
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from plait_core.wrapping import wraps

__all__ = [
    "grad",
    "jvp",
    "linear_transpose",
    "linearize",
    "linearize_flat",
    "value_and_grad",
    "vjp",
]


# ---------------------------------------------------------------------------
# jvp


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> tuple[Any, ...]:
    """Forward-mode derivative: evaluate ``fun(*primals)`` and its directional
    derivative along ``tangents``.

    ``primals`` and ``tangents`` are tuples (or lists) of the same pytree
    structure; each tangent leaf has its primal's shape and tangent dtype (the
    same inexact dtype, ``float0`` for integer and boolean primals).  Returns
    ``(primals_out, tangents_out)``, or ``(primals_out, tangents_out, aux)``
    with ``has_aux=True`` (``fun`` then returns ``(output, aux)``)."""
    check_callable(fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "jvp: primal and tangent arguments must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}"
        )
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise TypeError(
            f"jvp: primal and tangent arguments must have the same tree structure; primals have structure "
            f"{p_tree} whereas tangents have structure {t_tree}"
        )
    p_avals = [primal_aval("jvp", k, p) for k, p in enumerate(p_leaves)]
    tangents_in = [
        tangent_or_zero(check_tangent("jvp", "tangent", k, t, a), a) for k, (t, a) in enumerate(zip(t_leaves, p_avals))
    ]
    flat = FlatFun(fun, p_tree, has_aux, "jvp")
    outs, out_tangents = jvp_flat(flat, p_leaves, tangents_in)
    assert flat.out_tree is not None
    n = flat.out_tree.num_leaves
    primals_out = tree_unflatten(flat.out_tree, outs[:n])
    typed = [_as_array_if_computed(typed_as_primal(t, get_aval(o)), o) for t, o in zip(out_tangents[:n], outs[:n])]
    tangents_out = tree_unflatten(flat.out_tree, typed)
    if has_aux:
        assert flat.aux_tree is not None
        return primals_out, tangents_out, flat.rebuild_aux(outs[n:])
    return primals_out, tangents_out

_PY_SCALARS = (bool, int, float, complex)


def _as_array_if_computed(t: Any, primal_out: Any) -> Any:
    """An output tangent that is still a Python scalar given as an input tangent,
    as an array when its primal output was computed (is not a Python scalar): as
    JAX's ``jvp(lambda x: x + 1, (1.0,), (1.0,))`` returns an array tangent,
    while ``jvp(lambda x: x, ...)`` gives both back as they were passed."""
    if type(t) in _PY_SCALARS and type(primal_out) not in _PY_SCALARS:
        return asarray(t)
    return t


# ---------------------------------------------------------------------------
# linearize


def linearize_flat(fun: Callable[..., Sequence[Any]], primals: Sequence[Any]) -> tuple[list[Any], ClosedJaxpr]:
    """Forward mode under partial evaluation.

    Returns the primal outputs (computed now) and a closed linear jaxpr
    mapping one tangent per primal input (``float0`` for integer inputs, which
    it ignores) to one tangent per output; its constants are the residuals."""
    tangent_avals = [to_tangent_type(get_aval(p)) for p in primals]
    pe = PartialEvalTrace()
    with transformation(pe):
        args = [pe.new_arg(a) for a in tangent_avals]
        tangents = [Zero(a) if is_float0(a) else t for a, t in zip(tangent_avals, args)]
        outs, out_tangents = jvp_flat(fun, primals, tangents)
        for k, o in enumerate(outs):
            if pe.is_unknown(o):
                raise AssertionError(f"linearize: primal output {k} depends on the tangents (a jvp rule is wrong)")
        staged = [_stage_tangent(pe, t) for t in out_tangents]
        linear = pe.to_closed_jaxpr(staged)
    return outs, linear


def _stage_tangent(pe: PartialEvalTrace, t: Any) -> Any:
    """An output tangent as a value of the linear jaxpr (zeros staged, not saved)."""
    if type(t) is Zero and t.aval.shape and not is_float0(t.aval):
        zero = np.zeros((), t.aval.dtype)
        return pe.stage(broadcast_in_dim_p, [zero], {"shape": tuple(t.aval.shape), "broadcast_dimensions": ()})
    return pe.instantiate(instantiate(t))


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Evaluate ``fun(*primals)`` and return its linearization.

    Returns ``(primals_out, f_jvp)`` (or ``(primals_out, f_jvp, aux)`` with
    ``has_aux``) where ``f_jvp(*tangents)`` maps tangents of the inputs (same
    structure as ``primals``) to tangents of the outputs, like
    ``jvp(fun, primals, tangents)[1]`` but without recomputing the primal
    values: the linear part is staged once and replayed."""
    check_callable(fun, "linearize")
    leaves, in_tree = tree_flatten(primals)
    avals = [primal_aval("linearize", k, p) for k, p in enumerate(leaves)]
    flat = FlatFun(fun, in_tree, has_aux, "linearize")
    outs, linear = linearize_flat(flat, leaves)
    assert flat.out_tree is not None
    out_tree, n = flat.out_tree, flat.out_tree.num_leaves
    if has_aux:
        linear = dce_closed_jaxpr(linear, [True] * n + [False] * (len(outs) - n))[0]
    out_avals = [get_aval(o) for o in outs[:n]]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(
                f"linearize: the linearized function expects tangents with the structure {in_tree} of the "
                f"primal inputs, got {t_tree}"
            )
        ts = [check_tangent("linearize", "tangent", k, t, a) for k, (t, a) in enumerate(zip(t_leaves, avals))]
        out_ts = eval_jaxpr(linear.jaxpr, linear.consts, *ts)
        return tree_unflatten(out_tree, [typed_as_primal(t, a) for t, a in zip(out_ts, out_avals)])

    primals_out = tree_unflatten(out_tree, outs[:n])
    if has_aux:
        assert flat.aux_tree is not None
        return primals_out, f_jvp, flat.rebuild_aux(outs[n:])
    return primals_out, f_jvp


# ---------------------------------------------------------------------------
# vjp


class _Pullback:
    """The function ``vjp`` returns: cotangents of the outputs to cotangents of
    the inputs, by transposing the linear jaxpr."""

    def __init__(self, linear: ClosedJaxpr, in_tree: PyTreeDef, out_tree: PyTreeDef, out_avals: Sequence[ShapedArray],
                 in_avals: Sequence[ShapedArray]):
        self.linear, self.in_tree, self.out_tree, self.out_avals = linear, in_tree, out_tree, list(out_avals)
        self.in_avals = list(in_avals)

    def __call__(self, ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != self.out_tree:
            raise TypeError(
                f"vjp: the cotangent given to the pullback has the structure {ct_tree}, but the function's "
                f"output has the structure {self.out_tree}; they must be the same"
            )
        cts = [
            check_tangent("vjp pullback", "cotangent", k, c, a) for k, (c, a) in enumerate(zip(ct_leaves, self.out_avals))
        ]
        lin = self.linear
        cts = [Zero(to_tangent_type(a)) if is_float0(to_tangent_type(a)) else c for c, a in zip(cts, self.out_avals)]
        cts_in = backward_pass(lin.jaxpr, lin.consts, [UndefinedPrimal(a) for a in lin.in_avals], cts)
        typed = [typed_as_primal(c, a) for c, a in zip(cts_in, self.in_avals)]
        return tuple(tree_unflatten(self.in_tree, typed))


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse-mode derivative: evaluate ``fun(*primals)`` and return its pullback.

    Returns ``(primals_out, vjp_fun)`` (or ``(primals_out, vjp_fun, aux)`` with
    ``has_aux``); ``vjp_fun(ct)`` takes a cotangent with the structure, shapes
    and tangent dtypes of ``primals_out`` and returns a tuple with one
    cotangent per positional argument (``float0`` zeros for integer inputs)."""
    check_callable(fun, "vjp")
    return _vjp(fun, primals, has_aux, "vjp")


def _vjp(fun: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool, what: str) -> tuple[Any, ...]:
    leaves, in_tree = tree_flatten(primals)
    in_avals = [primal_aval(what, k, p) for k, p in enumerate(leaves)]
    flat = FlatFun(fun, in_tree, has_aux, what)
    outs, linear = linearize_flat(flat, leaves)
    assert flat.out_tree is not None
    out_tree, n = flat.out_tree, flat.out_tree.num_leaves
    if has_aux:
        linear = dce_closed_jaxpr(linear, [True] * n + [False] * (len(outs) - n))[0]
    pullback = _Pullback(linear, in_tree, out_tree, [get_aval(o) for o in outs[:n]], in_avals)
    primals_out = tree_unflatten(out_tree, outs[:n])
    if has_aux:
        assert flat.aux_tree is not None
        return primals_out, pullback, flat.rebuild_aux(outs[n:])
    return primals_out, pullback

def value_and_grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """A function computing both ``fun``'s value and its gradient.

    ``fun`` must return a real scalar (complex with ``holomorphic=True``).
    The gradient is taken with respect to the positional argument(s)
    ``argnums`` (an int: the gradient has that argument's structure; a tuple:
    a tuple of them).  With ``has_aux`` ``fun`` returns ``(value, aux)`` and
    the result is ``((value, aux), gradient)``.  Integer inputs are an error
    unless ``allow_int`` (their gradient is ``float0`` zeros)."""
    check_callable(fun, "value_and_grad")
    what = "grad"

    @wraps(fun)
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        nums = normalize_argnums(what, argnums, len(args))
        f, dyn = split_args(fun, args, kwargs, nums)
        check_input_dtypes(what, tree_flatten(dyn)[0], holomorphic, allow_int)
        if has_aux:
            out, pullback, aux = _vjp(f, dyn, True, what)
        else:
            out, pullback = _vjp(f, dyn, False, what)
        aval = check_scalar_output(what, out, holomorphic)
        grads = pullback(np.ones((), aval.dtype))
        g = grads[0] if isinstance(argnums, int) else grads
        return ((out, aux), g) if has_aux else (out, g)

    return value_and_grad_fun


def grad(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The gradient of a scalar function: ``grad(f)(x)`` is ``df/dx`` at ``x``.

    Arguments as for :func:`value_and_grad`; with ``has_aux`` the result is
    ``(gradient, aux)``."""
    check_callable(fun, "grad")
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @wraps(fun)
    def grad_fun(*args: Any, **kwargs: Any) -> Any:
        (value, g) = vg(*args, **kwargs)
        if has_aux:
            return g, value[1]
        return g

    return grad_fun


# ---------------------------------------------------------------------------
# linear_transpose


def linear_transpose(fun: Callable[..., Any], *primals: Any) -> Callable[..., Any]:
    """The transpose of a linear function.

    ``primals`` (arrays or ``ShapeDtypeStruct``s) give the input types;
    ``fun`` must be linear in them.  Returns ``f_t`` with ``f_t(ct)`` (a
    cotangent with the output's structure and types) returning a tuple with
    one cotangent per positional input.  Inputs and outputs must be floating
    or complex."""
    check_callable(fun, "linear_transpose")
    traced = trace_pytree_function(fun, primals, {}, (), "linear_transpose")
    closed = traced.closed_jaxpr
    in_avals, out_avals = closed.in_avals, closed.out_avals
    for a in [*in_avals, *out_avals]:
        if not dtypes.is_inexact(a.dtype):
            ins = ", ".join(x.dtype.name for x in in_avals)
            outs = ", ".join(x.dtype.name for x in out_avals)
            raise TypeError(
                f"linear_transpose only supports floating or complex inputs and outputs, but got ({ins}) -> ({outs})"
            )
    out_tree = traced.out_tree

    def transposed(ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(
                f"linear_transpose: the cotangent has the structure {ct_tree}, but the function's output has "
                f"the structure {out_tree}"
            )
        cts = [check_tangent("linear_transpose", "cotangent", k, c, a) for k, (c, a) in enumerate(zip(ct_leaves, out_avals))]
        cts_in = backward_pass(closed.jaxpr, closed.consts, [UndefinedPrimal(a) for a in in_avals], cts)
        args, _ = tree_unflatten(traced.in_tree, [instantiate(c) for c in cts_in])
        return tuple(args)

    return transposed
