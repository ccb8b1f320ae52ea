"""``lax.custom_root`` and ``lax.custom_linear_solve``: solvers differentiated
implicitly (by the implicit function theorem) instead of through their
iterations.

Both are built on :class:`~plait_core.custom_derivatives.custom_jvp` and
:class:`~plait_core.custom_derivatives.custom_vjp`, so ``jit``, ``vmap`` and
reverse mode apply as to any custom rule:

* The values the user's functions close over are hoisted into explicit
  operands (the functions are staged once on the argument types), so that
  derivatives with respect to the parameters of ``matvec`` (``f``) flow, and
  the solvers' own closed-over values are operands with a zero derivative (a
  solver is taken to be exact, as in JAX).
* ``custom_linear_solve(matvec, b, solve)`` has the value ``solve(matvec, b)``
  and the tangent ``solve(matvec, db - dmatvec(x))``.  That tangent solve is a
  linear function with a custom transpose (a ``custom_vjp``) whose backward
  pass is again a ``custom_linear_solve`` of the transposed system with
  ``transpose_solve`` (``solve`` itself when ``symmetric``).
* ``custom_root(f, x0, solve, tangent_solve)`` has the value ``solve(f, x0)``
  and the tangent ``-J^{-1} df/dparams`` at the root, the linear system of the
  Jacobian ``J = df/dx`` solved by a ``custom_linear_solve`` with
  ``tangent_solve``; ``x0`` gets a zero derivative.

The rules need forward-mode differentiation of the user's function and the
transpose of a linear one: plait-autodiff installs both with
:func:`register_solve_transforms` when imported (without it nothing is ever
differentiated, and the solvers just run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait_core import dtypes
from plait_core.abstract import ShapedArray, get_aval
from plait_core.custom_derivatives import custom_jvp, custom_vjp
from plait_core.jaxpr import ClosedJaxpr, eval_jaxpr
from plait_core.lax.reductions import stop_gradient
from plait_core.staging import trace_pytree_function
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_map, tree_unflatten

Array = Any

_transforms: dict[str, Callable[..., Any]] = {}


def register_solve_transforms(jvp: Callable[..., Any], linear_transpose: Callable[..., Any]) -> None:
    """Install the forward-mode ``jvp(fun, primals, tangents)`` and
    ``linear_transpose(fun, *primals)`` the derivative rules of
    :func:`custom_root` and :func:`custom_linear_solve` use; plait-autodiff
    calls this when imported."""
    _transforms["jvp"] = jvp
    _transforms["linear_transpose"] = linear_transpose


def _transform(kind: str) -> Callable[..., Any]:
    fn = _transforms.get(kind)
    if fn is None:
        raise RuntimeError(
            f"differentiating custom_root / custom_linear_solve needs plait-autodiff's {kind}: install it and import it"
        )
    return fn


class _Converted:
    """A function of one pytree argument staged on its types, with the values
    it closes over hoisted: ``self(consts, x)`` is the function's value."""

    def __init__(self, fun: Callable[..., Any], args: tuple[Any, ...], what: str) -> None:
        traced = trace_pytree_function(fun, args, {}, (), what)
        self.closed: ClosedJaxpr = traced.closed_jaxpr
        self.out_tree: PyTreeDef = traced.out_tree
        self.consts: list[Any] = list(self.closed.consts)

    def __call__(self, consts: list[Any], *args: Any) -> Any:
        flat, _ = tree_flatten(args)
        return tree_unflatten(self.out_tree, eval_jaxpr(self.closed.jaxpr, consts, *flat))


def _check_same(what: str, expected: Any, got: Any) -> None:
    """``got`` must have ``expected``'s tree structure (``TypeError``), leaf shapes
    (``ValueError``, as JAX) and dtypes (``TypeError``)."""
    e_leaves, e_tree = tree_flatten(expected)
    g_leaves, g_tree = tree_flatten(got)
    if e_tree != g_tree:
        raise TypeError(f"{what} must have the same tree structure as the input, got {g_tree} and {e_tree}")
    for k, (e, g) in enumerate(zip(e_leaves, g_leaves)):
        ea, ga = (x if isinstance(x, ShapedArray) else get_aval(x) for x in (e, g))
        if tuple(ea.shape) != tuple(ga.shape) or ea.dtype != ga.dtype:
            raise (ValueError if tuple(ea.shape) != tuple(ga.shape) else TypeError)(
                f"{what} must have the same shapes and dtypes as the input, but leaf {k} is "
                f"{ga.str_short()} where {ea.str_short()} is expected"
            )


def _inexact_jvp(fun: Callable[[list[Any]], Any], consts: list[Any], tangents: list[Any]) -> Any:
    """The tangent of ``fun(consts)`` along ``tangents`` (integer and boolean consts held fixed)."""
    idx = [i for i, c in enumerate(consts) if dtypes.is_inexact(get_aval(c).dtype)]

    def of_inexact(*vals: Any) -> Any:
        full = list(consts)
        for i, v in zip(idx, vals):
            full[i] = v
        return fun(full)

    _, out = _transform("jvp")(of_inexact, tuple(consts[i] for i in idx), tuple(tangents[i] for i in idx))
    return out


def _vecmat(mv: _Converted, mvc: list[Any], example: Any) -> Callable[[Any], Any]:
    """The transpose of the linear ``x -> mv(mvc, x)`` (inputs shaped like ``example``)."""
    transposed = _transform("linear_transpose")(lambda x: mv(mvc, x), example)
    return lambda y: transposed(y)[0]


def _split_aux(out: Any, has_aux: bool, what: str) -> tuple[Any, Any]:
    if not has_aux:
        return out, None
    if not isinstance(out, (tuple, list)) or len(out) != 2:
        raise TypeError(f"{what} with has_aux=True must return a pair (solution, aux), got {type(out).__name__}")
    return out[0], out[1]


def custom_linear_solve(matvec: Callable[[Any], Any], b: Any, solve: Callable[[Callable[[Any], Any], Any], Any],
                        transpose_solve: Callable[[Callable[[Any], Any], Any], Any] | None = None,
                        symmetric: bool = False, has_aux: bool = False) -> Any:
    """Solve ``matvec(x) == b`` with ``solve(matvec, b)`` and differentiate the
    solution implicitly: its derivative is that of the exact solution of the
    linear system, ``dx = solve(matvec, db - dmatvec(x))``, not that of the
    solver's iterations.

    ``matvec`` is linear in its argument (a pytree shaped like ``b``) and may
    depend on other values (its closed-over parameters are differentiated);
    ``solve(matvec, b)`` returns ``x``.  Reverse mode solves the transposed
    system with ``transpose_solve(vecmat, ct)`` (``solve`` when ``symmetric``:
    then ``matvec`` must be symmetric); without either it is a ``TypeError``.
    With ``has_aux`` the solvers return ``(x, aux)`` and so does this function
    (``aux`` gets no derivative)."""
    if not callable(matvec) or not callable(solve):
        raise TypeError("custom_linear_solve: matvec and solve must be functions")
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    mv = _Converted(matvec, (b,), "custom_linear_solve matvec")
    _check_same("custom_linear_solve: matvec's output", b, tree_unflatten(mv.out_tree, mv.closed.out_avals))

    def solve_with(mvc: list[Any], bb: Any) -> Any:
        return solve(lambda x: mv(mvc, x), bb)

    sv = _Converted(solve_with, (mv.consts, b), "custom_linear_solve solve")
    shapes = tree_unflatten(sv.out_tree, sv.closed.out_avals)
    x_shape, _ = _split_aux(shapes, has_aux, "custom_linear_solve: solve")
    _check_same("custom_linear_solve: solve's solution", b, x_shape)

    # transpose_solve is staged now too (its closed-over values are those of
    # this call), on the transposed matvec: plait-autodiff transposes it (without
    # it nothing is differentiated, and it is not needed).
    if symmetric:
        tsv: _Converted | None = sv
    elif transpose_solve is not None and "linear_transpose" in _transforms:
        tsolve = transpose_solve

        def transpose_solve_with(mvc: list[Any], bb: Any) -> Any:
            return tsolve(_vecmat(mv, mvc, bb), bb)

        tsv = _Converted(transpose_solve_with, (mv.consts, b), "custom_linear_solve transpose_solve")
        t_shape, _ = _split_aux(tree_unflatten(tsv.out_tree, tsv.closed.out_avals), has_aux,
                                "custom_linear_solve: transpose_solve")
        _check_same("custom_linear_solve: transpose_solve's solution", b, t_shape)
    else:
        tsv = None

    def solution_only(mvc: list[Any], svc: list[Any], tsc: list[Any], bb: Any) -> Any:
        return _split_aux(sv(svc, mvc, bb), has_aux, "solve")[0]

    def lin_fwd(mvc: list[Any], svc: list[Any], tsc: list[Any], r: Any) -> tuple[Any, None]:
        return solution_only(mvc, svc, tsc, r), None

    def lin_bwd(mvc: list[Any], svc: list[Any], tsc: list[Any], _: None, ct: Any) -> tuple[Any]:
        if tsv is None:
            raise TypeError(
                "custom_linear_solve: reverse-mode differentiation needs transpose_solve (or symmetric=True)"
            )
        t = tsv

        def solve_t(vecmat: Any, bb: Any) -> Any:
            return t(tsc, mvc, bb)

        def solve_tt(matvec_: Any, bb: Any) -> Any:
            return sv(svc, mvc, bb)

        out = custom_linear_solve(_vecmat(mv, mvc, ct), ct, solve_t, solve_tt, symmetric=symmetric, has_aux=has_aux)
        return (out[0] if has_aux else out,)

    # The solve as a linear function of its right-hand side, transposed by
    # transpose_solve: the attribute tells plait-autodiff to transpose it by
    # lin_bwd also where it is applied to tangents (in the rule below).
    lin_bwd.transpose_by_bwd = True  # type: ignore[attr-defined]
    lin = custom_vjp(solution_only, nondiff_argnums=(0, 1, 2))
    lin.defvjp(lin_fwd, lin_bwd)

    def solved(mvc: list[Any], svc: list[Any], tsc: list[Any], bb: Any) -> Any:
        return sv(svc, mvc, bb)

    fn = custom_jvp(solved)

    @fn.defjvp
    def _solved_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        mvc, svc, tsc, bb = primals
        dmvc, _, _, db = tangents
        out = fn(mvc, svc, tsc, bb)
        x, _aux = _split_aux(out, has_aux, "solve")
        dax = _inexact_jvp(lambda c: mv(c, x), list(mvc), list(dmvc))
        dx = lin(mvc, svc, tsc, tree_map(lambda u, v: u - v, db, dax))
        return out, ((dx, None) if has_aux else dx)

    out = fn(mv.consts, sv.consts, tsv.consts if tsv is not None else [], b)
    if has_aux:
        return out[0], stop_gradient(out[1])
    return out


def custom_root(f: Callable[[Any], Any], initial_guess: Any, solve: Callable[[Callable[[Any], Any], Any], Any],
                tangent_solve: Callable[[Callable[[Any], Any], Any], Any], has_aux: bool = False) -> Any:
    """Find a root of ``f`` with ``solve(f, initial_guess)`` and differentiate it
    implicitly: at the root ``x``, ``f(x) == 0`` gives ``dx = -J^{-1} df`` with
    ``J`` the Jacobian of ``f`` in ``x`` and ``df`` the derivative of ``f``
    along its closed-over parameters; the linear system is solved by
    ``tangent_solve(g, y)``, which returns ``z`` with ``g(z) == y`` for the
    linear ``g`` (``lambda g, y: y / g(1.0)`` for scalars).  The initial guess
    gets a zero derivative.  With ``has_aux`` ``solve`` returns ``(x, aux)`` and
    so does this function (``aux`` gets no derivative)."""
    if not callable(f) or not callable(solve) or not callable(tangent_solve):
        raise TypeError("custom_root: f, solve and tangent_solve must be functions")
    fc = _Converted(f, (initial_guess,), "custom_root f")
    _check_same("custom_root: f's output", initial_guess, tree_unflatten(fc.out_tree, fc.closed.out_avals))

    def solve_with(fcs: list[Any], x0: Any) -> Any:
        return solve(lambda x: fc(fcs, x), x0)

    sv = _Converted(solve_with, (fc.consts, initial_guess), "custom_root solve")
    x_shape, _ = _split_aux(tree_unflatten(sv.out_tree, sv.closed.out_avals), has_aux, "custom_root: solve")
    _check_same("custom_root: solve's solution", initial_guess, x_shape)

    def rooted(fcs: list[Any], svc: list[Any], x0: Any) -> Any:
        return sv(svc, fcs, x0)

    fn = custom_jvp(rooted)

    @fn.defjvp
    def _rooted_jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> tuple[Any, Any]:
        fcs, svc, x0 = primals
        dfcs = tangents[0]
        out = fn(fcs, svc, x0)
        x, _aux = _split_aux(out, has_aux, "solve")
        df = _inexact_jvp(lambda c: fc(c, x), list(fcs), list(dfcs))

        def jac(v: Any) -> Any:
            return _transform("jvp")(lambda y: fc(fcs, y), (x,), (v,))[1]

        neg = tree_map(lambda t: -t, df)
        dx = custom_linear_solve(jac, neg, lambda g, y: tangent_solve(g, y), lambda g, y: tangent_solve(g, y))
        return out, ((dx, None) if has_aux else dx)

    out = fn(fc.consts, sv.consts, initial_guess)
    if has_aux:
        return out[0], stop_gradient(out[1])
    return out


__all__ = ["custom_linear_solve", "custom_root"]
