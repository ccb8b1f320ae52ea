"""Padded rules of the linalg family.

``dot_general`` contracting a padded axis (``scores @ values`` in attention)
first zeroes the padding of *both* operands along it, so it adds nothing to
the sum (zeroing both keeps a non-finite value in one operand's padding from
making ``0 * inf``), but for one whose padding the environment knows to sum
as zero already (:meth:`~plait_core.padded.env.PaddedEnv.sums_as_zero`: the
weights of a softmax over that axis, under piles), which is read as it is:
then only the other one, often the smaller (the values of attention), is
filled; padded batch and free axes pass through, each on its own
(``per_axis``: queries of one pile against keys of another give ``n x m``
scores).

``conv_general_dilated`` zeroes the padding of the lhs along every axis but
its batch, and of the rhs along its input features: the padding a
convolution adds is zeros, so every window that makes a logical output sees
the logical entries and then zeros, exactly what the logical operand's own
window padding gives it (any padding and dilation work; the output's size is
XLA's formula on the logical size).  A padded batch axis maps as it is.
Refused (:meth:`~plait_core.padded.env.PaddedEnv.unsupported`): kernels of
padded spatial size, padded axes split into feature or batch groups, and a
stride along a padded spatial axis whose output length is not a polynomial
in the size.

``fft`` and the matrix factorisations run on the padded data when only their
leading (batch, stacked) axes are padded: each logical row or matrix is
transformed or factorised on its own, and what the padding gives lies in the
padding of the result.  A padded transformed axis or matrix axis is refused:
the padding would enter every frequency, or the factorisation of every
matrix (the Cholesky factor of a padded matrix is not the padded factor of
the logical one), and LAPACK has no masked kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.dims import InconclusiveDimensionOperation
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitive import Primitive
from plait_core.primitives import factorizations as fz
from plait_core.primitives.fft import fft_p
from plait_core.primitives.linalg import conv_general_dilated_p, dilated_size, dot_general_p

__all__: list[str] = []


def zero_of(aval: ShapedArray) -> Any:
    """The zero of ``aval``'s dtype (``False`` for booleans)."""
    return False if aval.dtype.kind == "b" else 0


def _dot_general(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension_numbers: Any, **params: Any
) -> Any:
    (lhs, rhs), (la, ra) = vals, avals
    (lc, rc), _ = dimension_numbers
    padded = [(a, b) for a, b in zip(lc, rc) if env.is_padded(la.shape[a])]
    if padded:
        l_axes, r_axes = [a for a, _ in padded], [b for _, b in padded]
        # An operand whose padding is known to sum as zero is read as it is (the other one is filled, or
        # sums as zero too: in a logical position of the result both pair zeros with finite values).
        if not env.sums_as_zero(lhs, la, l_axes):
            lhs = env.fill(lhs, la, l_axes, zero_of(la))
        if not env.sums_as_zero(rhs, ra, r_axes):
            rhs = env.fill(rhs, ra, r_axes, zero_of(ra))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers, **params)


padded_rules.define(_dot_general, dot_general_p, per_axis=True)


def _check_conv(env: PaddedEnv, avals: Sequence[ShapedArray], params: dict[str, Any]) -> None:
    la, ra = avals
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    fgc, bgc, noun = params["feature_group_count"], params["batch_group_count"], env.noun
    padded = env.is_padded
    prim = conv_general_dilated_p
    for d in rhs_spec[2:]:
        if padded(ra.shape[d]):
            raise env.unsupported(prim, avals, (
                f"has a kernel of {noun} size along its spatial dimension {d}; kernels must have static spatial sizes"
            ))  # fmt: skip
    out_features = padded(ra.shape[rhs_spec[0]])
    if fgc > 1 and (padded(la.shape[lhs_spec[1]]) or out_features):
        raise env.unsupported(prim, avals, (
            f"splits a {noun} feature dimension into feature_group_count={fgc} groups, which is not supported"
        ))  # fmt: skip
    if bgc > 1 and (padded(la.shape[lhs_spec[0]]) or out_features):
        raise env.unsupported(prim, avals, (
            f"splits a {noun} dimension into batch_group_count={bgc} groups, which is not supported"
        ))  # fmt: skip
    for ld, rd, s, ldil, rdil, (lo, hi) in zip(
        lhs_spec[2:], rhs_spec[2:], params["window_strides"], params["lhs_dilation"], params["rhs_dilation"],
        params["padding"],
    ):  # fmt: skip
        n = la.shape[ld]
        if s == 1 or not padded(n):
            continue
        span = dilated_size(n, ldil) + lo + hi - dilated_size(ra.shape[rd], rdil)
        try:
            span // s
        except InconclusiveDimensionOperation:
            raise env.unsupported(prim, avals, (
                f"has stride {s} along the {noun} spatial dimension {ld} of its lhs: the output length "
                f"floor(({span}) / {s}) + 1 is not a polynomial in the length, which a {noun} size must be; along "
                f"a {noun} axis only stride 1 (or a stride that divides that span exactly) is supported"
            )) from None  # fmt: skip


def _conv(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
    (lhs, rhs), (la, ra) = vals, avals
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    lhs = env.fill(lhs, la, [d for d in range(la.ndim) if d != lhs_spec[0]], zero_of(la))
    rhs = env.fill(rhs, ra, (rhs_spec[1],), zero_of(ra))
    return conv_general_dilated_p.bind(lhs, rhs, **params)


padded_rules.define(_conv, conv_general_dilated_p, check=_check_conv)


def _on_leading_axes(prim: Primitive, axes_of: Any, why: str) -> Any:
    """The rule of a primitive that runs on the padded data when none of the
    trailing axes ``axes_of(aval, params)`` of an operand is padded."""

    def check(env: PaddedEnv, avals: Sequence[ShapedArray], params: dict[str, Any]) -> None:
        for a in avals:
            if any(env.is_padded(d) for d in axes_of(a, params)):
                raise env.unsupported(prim, avals, why.format(noun=env.noun))

    def rule(env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        return prim.bind(*vals, **params)

    rule.__name__ = f"{prim.name}_padded_rule"
    padded_rules.define(rule, prim, per_axis=True, check=check)


_on_leading_axes(
    fft_p, lambda a, params: a.shape[a.ndim - len(params["fft_lengths"]) :],
    "transforms a {noun} axis, which is not supported: the Fourier transform of an axis depends on its length "
    "and would mix the padding into every frequency; only leading (batch) axes may be {noun}",
)  # fmt: skip
for _p in (fz.cholesky_p, fz.triangular_solve_p, fz.lu_p, fz.qr_p, fz.eigh_p, fz.svd_p, fz.eig_p):
    _on_leading_axes(
        _p, lambda a, params: a.shape[-2:],
        "cannot factorise matrices with a {noun} row or column axis: the padding would enter the factorisation "
        "of every matrix (only the leading, stacked axes of a factorisation may be {noun})",
    )  # fmt: skip
