"""Lowering of the matrix factorisations to jaxlib's LAPACK kernels.

Every factorisation is one ``stablehlo.custom_call`` of a typed-FFI target
that jaxlib registers for the CPU (``lapack_spotrf_ffi``, ...; see
:func:`plait_dispatch._jaxlib.lapack_target`), the same kernels JAX calls:
``potrf`` (cholesky), ``trsm`` (triangular_solve), ``getrf`` (lu), ``geqrf``
then ``orgqr``/``ungqr`` (qr), ``syevd``/``heevd`` (eigh), ``gesdd`` (svd)
and ``geev`` (eig).  Cholesky and triangular solves use LAPACK too rather
than ``stablehlo.cholesky`` / ``stablehlo.triangular_solve``, as JAX does on
the CPU: XLA's CPU backend expands those two into loops of small operations,
several times slower than the kernels.  Matrices reach the kernels column-major (the operand and
result layouts say so, and XLA transposes as needed); the leading dims are a
batch the kernels loop over.  Attributes are LAPACK's one-letter options
(``uplo = 'L'``...) as ``ui8``.  A kernel's ``info`` output marks failures:
those matrices become NaN, as in JAX (a Cholesky factor of a matrix that is
not positive definite, an eigendecomposition that did not converge).

Zero-sized matrices never reach LAPACK: their results do not depend on any
data, so they are constants (core's reference implementation computes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import ShapedArray, dtypes, trace_to_jaxpr
from plait_core.lax.factorizations import lu_pivots_to_permutation
from plait_core.primitive import Primitive
from plait_core.primitives import factorizations as fz
from plait_dispatch import _jaxlib
from plait_dispatch.lowering import ops
from plait_dispatch.lowering.context import RuleContext, lower_closed_jaxpr, lowering_rules
from plait_dispatch.lowering.module import Value, concrete_shape

DType = np.dtype[Any]


def _layout(rank: int, matrix: bool) -> str:
    """Column-major matrices (then the batch dims, minor to major), or row-major."""
    order = [rank - 2, rank - 1, *range(rank - 3, -1, -1)] if matrix else list(range(rank - 1, -1, -1))
    if not order:
        return "dense<> : tensor<0xindex>"
    return f"dense<[{', '.join(map(str, order))}]> : tensor<{rank}xindex>"


def _char(c: str) -> str:
    return f"{ord(c)} : ui8"


def lapack_call(
    ctx: RuleContext,
    routine: str,
    dtype: DType,
    operands: Sequence[Value],
    results: Sequence[ShapedArray],
    alias: tuple[int, int] | None = (0, 0),
    **options: str,
) -> list[Value]:
    """One call of the LAPACK kernel ``routine`` for ``dtype``; operands and
    results of the largest rank are matrices (column-major), the others
    vectors or the per-matrix ``info``.  ``options`` are one-letter flags.
    ``alias`` (result, operand) lets the kernel overwrite that operand's
    buffer with the result (LAPACK works in place), saving a copy."""
    rank = max(len(v.shape) for v in operands)
    config = ", ".join(f"{k} = {_char(v)}" for k, v in sorted(options.items()))
    attrs = {
        "call_target_name": f'"{_jaxlib.lapack_target(routine, dtype)}"',
        "api_version": "4 : i32",
        "backend_config": "{" + config + "}",
        "operand_layouts": "[" + ", ".join(_layout(len(v.shape), len(v.shape) == rank) for v in operands) + "]",
        "result_layouts": "[" + ", ".join(_layout(len(concrete_shape(r)), len(r.shape) == rank) for r in results) + "]",
    }
    if alias is not None:
        out, operand = alias
        tuple_index = f"[{out}]" if len(results) > 1 else "[]"
        attrs["output_operand_aliases"] = (
            f"[#stablehlo.output_operand_alias<output_tuple_indices = {tuple_index}, "
            f"operand_index = {operand}, operand_tuple_indices = []>]"
        )
    return ctx.op("stablehlo.custom_call", operands, results, attrs)


def _info_aval(batch: Sequence[int]) -> ShapedArray:
    return ops.aval(batch, np.int32)


def _nan_unless(ctx: RuleContext, ok: Value, x: Value) -> Value:
    """``x`` where the per-matrix flag ``ok`` (batch shape) holds, NaN elsewhere."""
    nb = len(ok.shape)
    pred = ops.broadcast_in_dim(ctx, ok, x.shape, list(range(nb)))
    return ops.select(ctx, pred, x, ops.full(ctx, np.nan, x.dtype, x.shape))


def _info_ok(ctx: RuleContext, info: Value, direction: str = "EQ") -> Value:
    return ops.compare(ctx, info, ops.full(ctx, 0, np.int32, info.shape), direction)


def _triangle(ctx: RuleContext, x: Value, *, lower: bool, k: int = 0) -> Value:
    """Zero the entries of ``x`` outside its lower (or upper) triangle, diagonal ``k`` included."""
    shape = x.shape
    rank = len(shape)
    rows = ops.iota(ctx, np.int32, shape, rank - 2)
    cols = ops.iota(ctx, np.int32, shape, rank - 1)
    shifted = ops.binary(ctx, "stablehlo.add", rows, ops.full(ctx, k, np.int32, shape))
    keep = ops.compare(ctx, shifted, cols, "GE" if lower else "LE")
    return ops.select(ctx, keep, x, ops.full(ctx, 0, x.dtype, shape))


def _conj(ctx: RuleContext, x: Value) -> Value:
    if not dtypes.is_complex(x.dtype):
        return x
    real = fz.real_dtype(x.dtype)
    re = ctx.op1("stablehlo.real", [x], ops.like(x, dtype=real))
    im = ctx.op1("stablehlo.imag", [x], ops.like(x, dtype=real))
    return ctx.op1("stablehlo.complex", [re, ops.unary(ctx, "stablehlo.negate", im)], ops.like(x))


def _empty_rule(prim: Primitive, rule: Any) -> Any:
    """``rule``, except that zero-sized operands give the (data-independent)
    results of core's implementation as constants."""

    def lower(ctx: RuleContext, *args: Value, **params: Any) -> list[Value]:
        if all(0 not in concrete_shape(a)[-2:] for a in ctx.avals_in):
            out: list[Value] = rule(ctx, *args, **params)
            return out
        values = prim.impl(*(np.zeros(concrete_shape(a), a.dtype) for a in ctx.avals_in), **params)
        values = values if prim.multiple_results else [values]
        return [ctx.block.constant(v, ops.aval(np.shape(v), aval.dtype)) for v, aval in zip(values, ctx.avals_out)]

    lowering_rules[prim] = lower
    return lower


# ---------------------------------------------------------------------------
# cholesky, triangular_solve


def _cholesky(ctx: RuleContext, a: Value) -> list[Value]:
    batch = a.shape[:-2]
    factor, info = lapack_call(ctx, "potrf", a.dtype, [a], [ops.like(a), _info_aval(batch)], uplo="L")
    factor = _nan_unless(ctx, _info_ok(ctx, info), factor)
    return [_triangle(ctx, factor, lower=True)]


def _triangular_solve(
    ctx: RuleContext,
    a: Value,
    b: Value,
    *,
    left_side: bool,
    lower: bool,
    transpose_a: bool,
    conjugate_a: bool,
    unit_diagonal: bool,
) -> list[Value]:
    if conjugate_a and not transpose_a:
        a, conjugate_a = _conj(ctx, a), False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    (x,) = lapack_call(
        ctx,
        "trsm",
        a.dtype,
        [a, b],
        [ops.like(b)],
        alias=(0, 1),
        side="L" if left_side else "R",
        uplo="L" if lower else "U",
        trans_x=trans,
        diag="U" if unit_diagonal else "N",
    )
    return [x]


_empty_rule(fz.cholesky_p, _cholesky)
_empty_rule(fz.triangular_solve_p, _triangular_solve)


# ---------------------------------------------------------------------------
# lu


def _lu(ctx: RuleContext, a: Value) -> list[Value]:
    *batch, m, n = a.shape
    k = min(m, n)
    factors, pivots, info = lapack_call(
        ctx, "getrf", a.dtype, [a], [ops.like(a), ops.aval((*batch, k), np.int32), _info_aval(batch)]
    )
    pivots = ops.binary(ctx, "stablehlo.subtract", pivots, ops.full(ctx, 1, np.int32, pivots.shape))
    factors = _nan_unless(ctx, _info_ok(ctx, info, "GE"), factors)
    perm_jaxpr = trace_to_jaxpr(lambda p: [lu_pivots_to_permutation(p, m)], [pivots.aval])
    (perm,) = lower_closed_jaxpr(ctx, perm_jaxpr, [pivots])
    return [factors, pivots, perm]


_empty_rule(fz.lu_p, _lu)


# ---------------------------------------------------------------------------
# qr


def _qr(ctx: RuleContext, a: Value, *, full_matrices: bool) -> list[Value]:
    *batch, m, n = a.shape
    k = min(m, n)
    kq = m if full_matrices else k
    raw, taus = lapack_call(ctx, "geqrf", a.dtype, [a], [ops.like(a), ops.aval((*batch, k), a.dtype)])
    if kq <= n:
        basis = ops.slice_axis(ctx, raw, len(batch) + 1, 0, kq)
    else:
        pad = ops.full(ctx, 0, a.dtype, (*batch, m, kq - n))
        basis = ops.concatenate(ctx, [raw, pad], len(batch) + 1)
    routine = "ungqr" if dtypes.is_complex(a.dtype) else "orgqr"
    (q,) = lapack_call(ctx, routine, a.dtype, [basis, taus], [basis.aval])
    r = _triangle(ctx, raw, lower=False)
    if kq < m:
        r = ops.slice_axis(ctx, r, len(batch), 0, kq)
    return [q, r]


_empty_rule(fz.qr_p, _qr)


# ---------------------------------------------------------------------------
# eigh, svd, eig


def _eigh(ctx: RuleContext, a: Value, *, lower: bool, sort_eigenvalues: bool) -> list[Value]:
    batch = a.shape[:-2]
    routine = "heevd" if dtypes.is_complex(a.dtype) else "syevd"
    w_aval = ops.aval(a.shape[:-1], fz.real_dtype(a.dtype))
    v, w, info = lapack_call(
        ctx, routine, a.dtype, [a], [ops.like(a), w_aval, _info_aval(batch)], mode="V", uplo="L" if lower else "U"
    )
    ok = _info_ok(ctx, info)
    return [_nan_unless(ctx, ok, v), _nan_unless(ctx, ok, w)]


def _svd(ctx: RuleContext, a: Value, *, full_matrices: bool, compute_uv: bool) -> list[Value]:
    *batch, m, n = a.shape
    k = min(m, n)
    ku, kv = (m, n) if full_matrices else (k, k)
    mode = ("A" if full_matrices else "S") if compute_uv else "N"
    results = [
        ops.like(a),
        ops.aval((*batch, k), fz.real_dtype(a.dtype)),
        ops.aval((*batch, m, ku), a.dtype),
        ops.aval((*batch, kv, n), a.dtype),
        _info_aval(batch),
    ]
    _, s, u, vh, info = lapack_call(ctx, "gesdd", a.dtype, [a], results, mode=mode)
    ok = _info_ok(ctx, info)
    out = [_nan_unless(ctx, ok, s)]
    if compute_uv:
        out += [_nan_unless(ctx, ok, u), _nan_unless(ctx, ok, vh)]
    return out


def _eig(
    ctx: RuleContext, a: Value, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool
) -> list[Value]:
    batch = a.shape[:-2]
    c = fz.complex_dtype(a.dtype)
    vectors = [ops.like(a, dtype=c)] * 2
    real = not dtypes.is_complex(a.dtype)
    values = [ops.aval(a.shape[:-1], a.dtype)] * (2 if real else 1)
    outs = lapack_call(
        ctx,
        "geev",
        a.dtype,
        [a],
        [*values, *vectors, _info_aval(batch)],
        alias=None,
        compute_left="V" if compute_left_eigenvectors else "N",
        compute_right="V" if compute_right_eigenvectors else "N",
    )
    *w_parts, vl, vr, info = outs
    w = ctx.op1("stablehlo.complex", w_parts, ops.aval(a.shape[:-1], c)) if real else w_parts[0]
    ok = _info_ok(ctx, info)
    result = [_nan_unless(ctx, ok, w)]
    if compute_left_eigenvectors:
        result.append(_nan_unless(ctx, ok, vl))
    if compute_right_eigenvectors:
        result.append(_nan_unless(ctx, ok, vr))
    return result


_empty_rule(fz.eigh_p, _eigh)
_empty_rule(fz.svd_p, _svd)
_empty_rule(fz.eig_p, _eig)

__all__ = ["lapack_call"]
