"""The public differentiation API: ``jvp``, ``linearize``, ``vjp``, ``grad``,
``value_and_grad``, ``linear_transpose``, ``jacfwd``, ``jacrev``, ``hessian``.

Semantics and signatures follow JAX.  Reverse mode is forward mode under
partial evaluation (``linearize``: the primal computation runs now, the
tangent computation is staged into a linear jaxpr whose constants are the
residuals) followed by transposition of that linear jaxpr.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff import ops
from plait_autodiff.jaxpr_util import eval_jaxpr
from plait_autodiff.jvp import jvp_flat
from plait_autodiff.tangents import Zero, instantiate, is_float0, to_tangent_type
from plait_autodiff.transpose import UndefinedPrimal, backward_pass
from plait_core import (
    ClosedJaxpr,
    PartialEvalTrace,
    Tracer,
    dtypes,
    get_aval,
    to_numpy,
    trace_pytree_function,
    transformation,
)
from plait_core.abstract import ShapedArray
from plait_core.dce import dce_closed_jaxpr
from plait_core.dims import definitely_equal_shapes, dim_as_int
from plait_core.primitives.structural import broadcast_in_dim_p
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = [
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linear_transpose",
    "linearize",
    "linearize_flat",
    "value_and_grad",
    "vjp",
]


# ---------------------------------------------------------------------------
# Flattening user functions


class _FlatFun:
    """A pytree function as a flat one; records the output structure (and the
    structure of the auxiliary output with ``has_aux``) when called."""

    def __init__(self, fun: Callable[..., Any], in_tree: PyTreeDef, has_aux: bool, what: str) -> None:
        self.fun, self.in_tree, self.has_aux, self.what = fun, in_tree, has_aux, what
        self.out_tree: PyTreeDef | None = None
        self.aux_tree: PyTreeDef | None = None

    def __call__(self, *leaves: Any) -> list[Any]:
        args = tree_unflatten(self.in_tree, leaves)
        out = self.fun(*args)
        aux_leaves: list[Any] = []
        if self.has_aux:
            if not isinstance(out, (tuple, list)) or len(out) != 2:
                raise TypeError(
                    f"{self.what} with has_aux=True requires the function to return a pair (output, aux), "
                    f"got {_describe(out)}"
                )
            out, aux = out
            aux_leaves, self.aux_tree = tree_flatten(aux)
        out_leaves, self.out_tree = tree_flatten(out)
        _check_leaves(out_leaves, self.out_tree, f"{self.what}: the function's output")
        return [*out_leaves, *aux_leaves]


def _describe(x: Any) -> str:
    if isinstance(x, (tuple, list)):
        return f"a {type(x).__name__} of length {len(x)}"
    if isinstance(x, Tracer):
        return f"a single array of type {x.aval.str_short()}"
    return f"a value of type {type(x).__name__}"


def _dtype_name(dt: Any) -> str:
    return "float0" if dt == dtypes.float0 else str(np.dtype(dt).name)


def _check_leaves(leaves: Sequence[Any], tree: PyTreeDef, where: str) -> None:
    for k, x in enumerate(leaves):
        if isinstance(x, Tracer):
            continue
        try:
            get_aval(x)
        except TypeError:
            raise TypeError(
                f"{where} has a leaf {k} of type {type(x).__name__} (structure {tree}); "
                "only arrays and scalars can be differentiated"
            ) from None


def _check_callable(fun: Any, what: str) -> None:
    if not callable(fun):
        raise TypeError(f"{what}: expected a callable function, got {_describe(fun)}")


# ---------------------------------------------------------------------------
# Tangent and cotangent checks


def _check_tangent(what: str, kind: str, k: int, t: Any, primal: ShapedArray) -> Any:
    """A tangent/cotangent leaf ``t`` for a primal of type ``primal``: returned
    as is (weakly typed scalars are converted), or a TypeError/ValueError."""
    expected = to_tangent_type(primal)
    try:
        a = get_aval(t)
    except TypeError:
        raise TypeError(
            f"{what}: {kind} leaf {k} has type {type(t).__name__}, expected an array of type {expected.str_short()}"
        ) from None
    if a.dtype != expected.dtype:
        if a.weak_type and not isinstance(t, Tracer) and not is_float0(expected):
            t = to_numpy(t, expected.dtype)
        else:
            hint = " (integer and boolean values have float0 tangents)" if is_float0(expected) else ""
            raise TypeError(
                f"{what}: {kind} leaf {k} has dtype {_dtype_name(a.dtype)}, but its primal has type "
                f"{primal.str_short()} so the {kind} must have dtype {_dtype_name(expected.dtype)}{hint}"
            )
    if not definitely_equal_shapes(a.shape, expected.shape):
        raise ValueError(
            f"{what}: {kind} leaf {k} has shape {tuple(a.shape)}, but its primal has shape {tuple(primal.shape)}"
        )
    return t


def _tangent_or_zero(t: Any, primal: ShapedArray) -> Any:
    return Zero(to_tangent_type(primal)) if is_float0(to_tangent_type(primal)) else t


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
    _check_callable(fun, "jvp")
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
    p_avals = [_primal_aval("jvp", k, p) for k, p in enumerate(p_leaves)]
    tangents_in = [
        _tangent_or_zero(_check_tangent("jvp", "tangent", k, t, a), a) for k, (t, a) in enumerate(zip(t_leaves, p_avals))
    ]
    flat = _FlatFun(fun, p_tree, has_aux, "jvp")
    outs, out_tangents = jvp_flat(flat, p_leaves, tangents_in)
    assert flat.out_tree is not None
    n = flat.out_tree.num_leaves
    primals_out = tree_unflatten(flat.out_tree, outs[:n])
    tangents_out = tree_unflatten(flat.out_tree, [instantiate(t) for t in out_tangents[:n]])
    if has_aux:
        assert flat.aux_tree is not None
        return primals_out, tangents_out, tree_unflatten(flat.aux_tree, outs[n:])
    return primals_out, tangents_out


def _primal_aval(what: str, k: int, x: Any) -> ShapedArray:
    try:
        return get_aval(x)
    except TypeError:
        raise TypeError(
            f"{what}: primal argument leaf {k} has type {type(x).__name__}; only arrays and scalars "
            "can be differentiated"
        ) from None


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
    _check_callable(fun, "linearize")
    leaves, in_tree = tree_flatten(primals)
    avals = [_primal_aval("linearize", k, p) for k, p in enumerate(leaves)]
    flat = _FlatFun(fun, in_tree, has_aux, "linearize")
    outs, linear = linearize_flat(flat, leaves)
    assert flat.out_tree is not None
    out_tree, n = flat.out_tree, flat.out_tree.num_leaves
    if has_aux:
        linear = dce_closed_jaxpr(linear, [True] * n + [False] * (len(outs) - n))[0]

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise TypeError(
                f"linearize: the linearized function expects tangents with the structure {in_tree} of the "
                f"primal inputs, got {t_tree}"
            )
        ts = [_check_tangent("linearize", "tangent", k, t, a) for k, (t, a) in enumerate(zip(t_leaves, avals))]
        out_ts = eval_jaxpr(linear.jaxpr, linear.consts, *ts)
        return tree_unflatten(out_tree, out_ts)

    primals_out = tree_unflatten(out_tree, outs[:n])
    if has_aux:
        assert flat.aux_tree is not None
        return primals_out, f_jvp, tree_unflatten(flat.aux_tree, outs[n:])
    return primals_out, f_jvp


# ---------------------------------------------------------------------------
# vjp


class _Pullback:
    """The function ``vjp`` returns: cotangents of the outputs to cotangents of
    the inputs, by transposing the linear jaxpr."""

    def __init__(self, linear: ClosedJaxpr, in_tree: PyTreeDef, out_tree: PyTreeDef, out_avals: Sequence[ShapedArray]):
        self.linear, self.in_tree, self.out_tree, self.out_avals = linear, in_tree, out_tree, list(out_avals)

    def __call__(self, ct: Any) -> tuple[Any, ...]:
        ct_leaves, ct_tree = tree_flatten(ct)
        if ct_tree != self.out_tree:
            raise TypeError(
                f"vjp: the cotangent given to the pullback has the structure {ct_tree}, but the function's "
                f"output has the structure {self.out_tree}; they must be the same"
            )
        cts = [
            _check_tangent("vjp pullback", "cotangent", k, c, a) for k, (c, a) in enumerate(zip(ct_leaves, self.out_avals))
        ]
        lin = self.linear
        cts = [Zero(to_tangent_type(a)) if is_float0(to_tangent_type(a)) else c for c, a in zip(cts, self.out_avals)]
        cts_in = backward_pass(lin.jaxpr, lin.consts, [UndefinedPrimal(a) for a in lin.in_avals], cts)
        return tuple(tree_unflatten(self.in_tree, [instantiate(c) for c in cts_in]))


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Reverse-mode derivative: evaluate ``fun(*primals)`` and return its pullback.

    Returns ``(primals_out, vjp_fun)`` (or ``(primals_out, vjp_fun, aux)`` with
    ``has_aux``); ``vjp_fun(ct)`` takes a cotangent with the structure, shapes
    and tangent dtypes of ``primals_out`` and returns a tuple with one
    cotangent per positional argument (``float0`` zeros for integer inputs)."""
    _check_callable(fun, "vjp")
    return _vjp(fun, primals, has_aux, "vjp")


def _vjp(fun: Callable[..., Any], primals: tuple[Any, ...], has_aux: bool, what: str) -> tuple[Any, ...]:
    leaves, in_tree = tree_flatten(primals)
    for k, p in enumerate(leaves):
        _primal_aval(what, k, p)
    flat = _FlatFun(fun, in_tree, has_aux, what)
    outs, linear = linearize_flat(flat, leaves)
    assert flat.out_tree is not None
    out_tree, n = flat.out_tree, flat.out_tree.num_leaves
    if has_aux:
        linear = dce_closed_jaxpr(linear, [True] * n + [False] * (len(outs) - n))[0]
    pullback = _Pullback(linear, in_tree, out_tree, [get_aval(o) for o in outs[:n]])
    primals_out = tree_unflatten(out_tree, outs[:n])
    if has_aux:
        assert flat.aux_tree is not None
        return primals_out, pullback, tree_unflatten(flat.aux_tree, outs[n:])
    return primals_out, pullback


# ---------------------------------------------------------------------------
# grad / value_and_grad


def _normalize_argnums(what: str, argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise ValueError(f"{what}: argnums must name at least one argument, got {argnums!r}")
    out = []
    for a in nums:
        if type(a) is not int:
            raise TypeError(f"{what}: argnums must be ints, got {a!r} of type {type(a).__name__}")
        m = a + nargs if a < 0 else a
        if not 0 <= m < nargs:
            raise TypeError(
                f"{what}: differentiating with respect to argnums={argnums!r} requires at least {abs(a) + (a >= 0)} "
                f"positional arguments, but the function was called with {nargs}"
            )
        out.append(m)
    if len(set(out)) != len(out):
        raise ValueError(f"{what}: argnums {argnums!r} names an argument twice")
    return tuple(out)


def _split_args(
    fun: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any], nums: tuple[int, ...]
) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """``fun`` as a function of the arguments at ``nums`` only, and those arguments."""

    def partial_fun(*dyn: Any) -> Any:
        full = list(args)
        for i, x in zip(nums, dyn):
            full[i] = x
        return fun(*full, **kwargs)

    return partial_fun, tuple(args[i] for i in nums)


def _check_input_dtypes(what: str, leaves: Sequence[Any], holomorphic: bool, allow_int: bool) -> None:
    for x in leaves:
        dt = get_aval(x).dtype
        if holomorphic:
            if not dtypes.is_complex(dt):
                raise TypeError(f"{what} with holomorphic=True requires inputs with complex dtype, but got {dt.name}")
        elif not dtypes.is_inexact(dt) and not allow_int:
            raise TypeError(
                f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
                f"numpy.inexact), but got {dt.name}. If you want to use boolean- or integer-valued inputs, "
                "use vjp or set allow_int to True"
            )


def _check_scalar_output(what: str, out: Any, holomorphic: bool) -> ShapedArray:
    try:
        aval = get_aval(out)
    except TypeError:
        raise TypeError(f"{what}: the function must return a scalar array, got {_describe(out)}") from None
    if aval.shape != ():
        raise TypeError(f"{what}: gradient only defined for scalar-output functions; the output had shape {tuple(aval.shape)}")
    if holomorphic:
        if not dtypes.is_complex(aval.dtype):
            raise TypeError(f"{what} with holomorphic=True requires outputs with complex dtype, but got {aval.dtype.name}")
    elif not dtypes.is_float(aval.dtype):
        raise TypeError(
            f"{what} requires real-valued outputs (output dtype that is a sub-dtype of numpy.floating), but got "
            f"{aval.dtype.name}. For holomorphic differentiation pass holomorphic=True; for functions with "
            "complex outputs that are not holomorphic use vjp directly"
        )
    return aval


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
    _check_callable(fun, "value_and_grad")
    what = "grad"

    @functools.wraps(fun)
    def value_and_grad_fun(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_argnums(what, argnums, len(args))
        f, dyn = _split_args(fun, args, kwargs, nums)
        _check_input_dtypes(what, tree_flatten(dyn)[0], holomorphic, allow_int)
        if has_aux:
            out, pullback, aux = _vjp(f, dyn, True, what)
        else:
            out, pullback = _vjp(f, dyn, False, what)
        aval = _check_scalar_output(what, out, holomorphic)
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
    _check_callable(fun, "grad")
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
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
    _check_callable(fun, "linear_transpose")
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
        cts = [_check_tangent("linear_transpose", "cotangent", k, c, a) for k, (c, a) in enumerate(zip(ct_leaves, out_avals))]
        cts_in = backward_pass(closed.jaxpr, closed.consts, [UndefinedPrimal(a) for a in in_avals], cts)
        args, _ = tree_unflatten(traced.in_tree, [instantiate(c) for c in cts_in])
        return tuple(args)

    return transposed


# ---------------------------------------------------------------------------
# Jacobians


def _concrete_size(aval: ShapedArray, what: str) -> int:
    n = 1
    for d in aval.shape:
        n *= dim_as_int(d, f"{what} of an array of shape {tuple(aval.shape)}")
    return n


def _basis(aval: ShapedArray, k: int) -> np.ndarray:
    """The k-th unit vector of type ``aval`` (row-major order)."""
    shape = tuple(int(d) for d in aval.shape)
    e = np.zeros(shape, aval.dtype)
    e.reshape(-1)[k] = 1
    return e


def _stack(xs: Sequence[Any], aval: ShapedArray, n: int) -> Any:
    """``n`` arrays of type ``aval`` stacked along a new leading axis."""
    if n == 0:
        return np.zeros((0, *(int(d) for d in aval.shape)), aval.dtype)
    rows = [ops.reshape(x, (1, *aval.shape)) for x in xs]
    return ops.concatenate(rows, 0)


def _jac_checks(what: str, leaves: Sequence[Any], holomorphic: bool, kind: str) -> None:
    for x in leaves:
        dt = get_aval(x).dtype
        ok = dtypes.is_complex(dt) if holomorphic else dtypes.is_float(dt)
        if not ok:
            need = "complex" if holomorphic else "real"
            raise TypeError(
                f"{what} requires {need}-valued {kind}s ({kind} dtype that is a sub-dtype of "
                f"numpy.{'complexfloating' if holomorphic else 'floating'}), but got {dt.name}. "
                + ("" if holomorphic else "For holomorphic differentiation pass holomorphic=True; ")
                + f"for other {kind}s use {'jvp' if what == 'jacfwd' else 'vjp'} directly"
            )


def jacfwd(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by forward mode (one JVP per input element).

    For an output leaf of shape ``S`` and an input leaf of shape ``T`` the
    Jacobian block has shape ``S + T``; the result has the output's
    structure with each leaf replaced by the input structure (of the
    argument ``argnums``, or a tuple of them)."""
    _check_callable(fun, "jacfwd")

    @functools.wraps(fun)
    def jac_fun(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_argnums("jacfwd", argnums, len(args))
        f, dyn = _split_args(fun, args, kwargs, nums)
        leaves, in_tree = tree_flatten(dyn)
        _jac_checks("jacfwd", leaves, holomorphic, "input")
        flat = _FlatFun(f, in_tree, has_aux, "jacfwd")
        outs, linear = linearize_flat(flat, leaves)
        assert flat.out_tree is not None
        n = flat.out_tree.num_leaves
        in_avals = [get_aval(x) for x in leaves]
        out_avals = [get_aval(o) for o in outs[:n]]
        blocks: list[list[Any]] = [[None] * len(leaves) for _ in range(n)]
        for i, a in enumerate(in_avals):
            size = _concrete_size(a, "jacfwd")
            columns: list[list[Any]] = [[] for _ in range(n)]
            for k in range(size):
                ts = [_basis(b, k) if j == i else np.zeros(tuple(int(d) for d in b.shape), b.dtype) for j, b in enumerate(in_avals)]
                for o, t in enumerate(eval_jaxpr(linear.jaxpr, linear.consts, *ts)[:n]):
                    columns[o].append(t)
            for o, oa in enumerate(out_avals):
                stacked = _stack(columns[o], oa, size)  # (size, *S)
                block = ops.reshape(stacked, (*a.shape, *oa.shape))
                nt, ns = a.ndim, oa.ndim
                blocks[o][i] = ops.transpose(block, (*range(nt, nt + ns), *range(nt)))
        jac = _assemble(flat.out_tree, in_tree, blocks, argnums)
        if has_aux:
            assert flat.aux_tree is not None
            return jac, tree_unflatten(flat.aux_tree, outs[n:])
        return jac

    return jac_fun


def jacrev(
    fun: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable[..., Any]:
    """The Jacobian of ``fun`` by reverse mode (one VJP per output element);
    the result is laid out as for :func:`jacfwd`."""
    _check_callable(fun, "jacrev")

    @functools.wraps(fun)
    def jac_fun(*args: Any, **kwargs: Any) -> Any:
        nums = _normalize_argnums("jacrev", argnums, len(args))
        f, dyn = _split_args(fun, args, kwargs, nums)
        leaves, in_tree = tree_flatten(dyn)
        _check_input_dtypes("jacrev", leaves, holomorphic, allow_int)
        flat = _FlatFun(f, in_tree, has_aux, "jacrev")
        outs, linear = linearize_flat(flat, leaves)
        assert flat.out_tree is not None
        n = flat.out_tree.num_leaves
        _jac_checks("jacrev", outs[:n], holomorphic, "output")
        in_avals = [to_tangent_type(get_aval(x)) for x in leaves]
        out_avals = [get_aval(o) for o in outs[:n]]
        blocks: list[list[Any]] = [[None] * len(leaves) for _ in range(n)]
        undefined = [UndefinedPrimal(a) for a in linear.in_avals]
        for o, oa in enumerate(out_avals):
            size = _concrete_size(oa, "jacrev")
            rows: list[list[Any]] = [[] for _ in leaves]
            for k in range(size):
                cts: list[Any] = [Zero(to_tangent_type(b)) for b in out_avals] + [
                    Zero(to_tangent_type(get_aval(x))) for x in outs[n:]
                ]
                cts[o] = _basis(oa, k)
                for i, c in enumerate(backward_pass(linear.jaxpr, linear.consts, undefined, cts)):
                    rows[i].append(instantiate(c))
            for i, a in enumerate(in_avals):
                stacked = _stack(rows[i], a, size)  # (size, *T)
                blocks[o][i] = ops.reshape(stacked, (*oa.shape, *a.shape)) if size else np.zeros(
                    (*(int(d) for d in oa.shape), *(int(d) for d in a.shape)), a.dtype
                )
        jac = _assemble(flat.out_tree, in_tree, blocks, argnums)
        if has_aux:
            assert flat.aux_tree is not None
            return jac, tree_unflatten(flat.aux_tree, outs[n:])
        return jac

    return jac_fun


def _assemble(out_tree: PyTreeDef, in_tree: PyTreeDef, blocks: list[list[Any]], argnums: int | Sequence[int]) -> Any:
    """The Jacobian pytree: the output structure of input structures."""
    per_output = []
    for row in blocks:
        args = tree_unflatten(in_tree, row)
        per_output.append(args[0] if isinstance(argnums, int) else tuple(args))
    return tree_unflatten(out_tree, per_output)


def hessian(
    fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False
) -> Callable[..., Any]:
    """The Hessian of a scalar function: ``jacfwd(jacrev(fun))``."""
    _check_callable(fun, "hessian")
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)

