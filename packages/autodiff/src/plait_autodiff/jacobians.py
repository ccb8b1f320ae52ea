"""Jacobians and Hessians: ``jacfwd`` (one JVP per input element), ``jacrev``
(one VJP per output element) and ``hessian`` (``jacfwd(jacrev)``).

Each linearizes the function once and replays the linear program for every
basis vector.  (With plait-batching installed, ``vmap`` of the linear
program would do it in one go; this package depends on core alone.)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from plait_autodiff.api import linearize_flat
from plait_autodiff.api_util import FlatFun, check_callable, check_input_dtypes, normalize_argnums, split_args
from plait_autodiff.jaxpr_util import eval_jaxpr
from plait_autodiff.tangents import Zero, instantiate, to_tangent_type
from plait_autodiff.transpose import UndefinedPrimal, backward_pass
from plait_core import dtypes, get_aval, ops
from plait_core.abstract import ShapedArray
from plait_core.dims import dim_as_int
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_unflatten
from plait_core.wrapping import wraps

__all__ = ["hessian", "jacfwd", "jacrev"]



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
    check_callable(fun, "jacfwd")

    @wraps(fun)
    def jac_fun(*args: Any, **kwargs: Any) -> Any:
        nums = normalize_argnums("jacfwd", argnums, len(args))
        f, dyn = split_args(fun, args, kwargs, nums)
        leaves, in_tree = tree_flatten(dyn)
        _jac_checks("jacfwd", leaves, holomorphic, "input")
        flat = FlatFun(f, in_tree, has_aux, "jacfwd")
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
            return jac, flat.rebuild_aux(outs[n:])
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
    check_callable(fun, "jacrev")

    @wraps(fun)
    def jac_fun(*args: Any, **kwargs: Any) -> Any:
        nums = normalize_argnums("jacrev", argnums, len(args))
        f, dyn = split_args(fun, args, kwargs, nums)
        leaves, in_tree = tree_flatten(dyn)
        check_input_dtypes("jacrev", leaves, holomorphic, allow_int)
        flat = FlatFun(f, in_tree, has_aux, "jacrev")
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
            return jac, flat.rebuild_aux(outs[n:])
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
    check_callable(fun, "hessian")
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)


