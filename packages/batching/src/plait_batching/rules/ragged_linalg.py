"""Ragged rules of the linalg family (``dot_general``'s is core's padded rule,
:mod:`plait_core.padded.linalg`, run by :mod:`.ragged_padded`).

``conv_general_dilated`` over a ragged spatial axis of its lhs (1-D or 2-D
convolutions over sequences of different lengths) sets the lhs padding to
zero and convolves the padded data: every window that makes a true output
sees the element's entries and then zeros, exactly what the element's own
(zero) high padding gives it, so any padding, ``lhs_dilation`` and
``rhs_dilation`` work.  The output's ragged size is XLA's formula on the
length (``n - k + 1`` for ``VALID``, ``n`` for ``SAME``).  A ragged lhs
batch axis maps as it is; a ragged feature axis is contracted like
``dot_general``'s (both operands zeroed).  Refused with a reason: a stride
along a ragged axis whose output length ``floor(... / stride) + 1`` is not a
polynomial in the length, kernels with ragged spatial sizes, ragged axes
split into feature or batch groups, and concrete lengths for which the
polynomial output size is wrong (an element shorter than the window).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import (
    Operand,
    RaggedEnv,
    check_true_sizes,
    env_of,
    fill_padding,
    operands,
    padded_rule,
    refuse,
)
from plait_batching.registries import ragged_rules
from plait_batching.trace import BatchTrace
from plait_core import Primitive
from plait_core.dims import Dim, InconclusiveDimensionOperation
from plait_core.primitives.linalg import conv_general_dilated_p, dilated_size

# ---------------------------------------------------------------------------
# conv_general_dilated


def _spatial(params: dict[str, Any]) -> list[tuple[int, int, int, int, int, int, int]]:
    """Per spatial axis: (lhs dim, rhs dim, stride, lhs dilation, rhs dilation, low, high)."""
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    return [
        (ld, rd, s, ldil, rdil, lo, hi)
        for ld, rd, s, ldil, rdil, (lo, hi) in zip(
            lhs_spec[2:], rhs_spec[2:], params["window_strides"], params["lhs_dilation"], params["rhs_dilation"],
            params["padding"],
        )
    ]  # fmt: skip


def _out_size(n: Dim, k: Dim, s: int, ldil: int, rdil: int, lo: int, hi: int) -> Dim:
    """The output size along a spatial axis (XLA's formula), symbolic or not."""
    return (dilated_size(n, ldil) + lo + hi - dilated_size(k, rdil)) // s + 1


def _true_out_size(k: int, s: int, ldil: int, rdil: int, lo: int, hi: int) -> Any:
    """What the convolution gives an element whose axis has true size ``n``."""

    def size(n: int) -> int:
        padded, window = int(dilated_size(n, ldil)) + lo + hi, int(dilated_size(k, rdil))
        return (padded - window) // s + 1 if padded >= window else 0

    return size


def _check_conv_layout(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    """Refuse ragged layouts the zero-filled padded convolution cannot handle
    (before the shape rule, whose error for a stride would say less)."""
    lhs, rhs = ops
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    ragged = env.is_ragged
    for d in rhs_spec[2:]:
        if ragged(rhs.aval.shape[d]):
            raise refuse(prim, ops, env, f"has a kernel of ragged size along its spatial dimension {d}; kernels must have static spatial sizes")
    out_features = ragged(rhs.aval.shape[rhs_spec[0]])
    if fgc > 1 and (ragged(lhs.aval.shape[lhs_spec[1]]) or out_features):
        raise refuse(prim, ops, env, f"splits a ragged feature dimension into feature_group_count={fgc} groups, which is not supported")
    if bgc > 1 and (ragged(lhs.aval.shape[lhs_spec[0]]) or out_features):
        raise refuse(prim, ops, env, f"splits a ragged dimension into batch_group_count={bgc} groups, which is not supported")
    for ld, rd, s, ldil, rdil, lo, hi in _spatial(params):
        n = lhs.aval.shape[ld]
        if not ragged(n) or s == 1:
            continue
        try:
            _out_size(n, rhs.aval.shape[rd], s, ldil, rdil, lo, hi)
        except InconclusiveDimensionOperation:
            span = dilated_size(n, ldil) + lo + hi - dilated_size(rhs.aval.shape[rd], rdil)
            raise refuse(
                prim, ops, env,
                f"has stride {s} along the ragged spatial dimension {ld} of its lhs: the output length "
                f"floor(({span}) / {s}) + 1 is not a polynomial in the length, which a ragged size must be; along "
                "a ragged axis only stride 1 (or a stride that divides that span exactly) is supported",
            ) from None


def _check_conv_sizes(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    lhs, rhs = ops
    for ld, rd, s, ldil, rdil, lo, hi in _spatial(params):
        n = lhs.aval.shape[ld]
        if not env.is_ragged(n):
            continue
        k = rhs.aval.shape[rd]
        out = _out_size(n, k, s, ldil, rdil, lo, hi)
        check_true_sizes(env, prim, ops, n, out, _true_out_size(int(k), s, ldil, rdil, lo, hi),
                         f"the ragged spatial dimension {ld} of its lhs")  # fmt: skip
        padded = env.padded(n)
        if int(env.padded(out)) < 0:
            raise refuse(
                prim, ops, env,
                f"has a window of size {int(dilated_size(k, rdil))} along the ragged spatial dimension {ld} of its "
                f"lhs, longer than the padded size {padded} there (with padding ({lo}, {hi}))",
            )  # fmt: skip


def _zero_lhs_padding(env: RaggedEnv, ops: Sequence[Operand], params: dict[str, Any]) -> list[Any]:
    """Zeros in the lhs padding of every ragged axis but its batch, and in the
    rhs padding of its (contracted) input features."""
    lhs, rhs = ops
    lhs_spec, rhs_spec, _ = params["dimension_numbers"]
    axes = [d for d in range(lhs.aval.ndim) if d != lhs_spec[0]]
    return [fill_padding(env, lhs, axes, 0), fill_padding(env, rhs, (rhs_spec[1],), 0)]


_conv_padded = padded_rule(_check_conv_sizes, _zero_lhs_padding)


def _conv(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    _check_conv_layout(env_of(trace), prim, operands(trace, prim, args), params)
    return _conv_padded(trace, prim, args, params)


ragged_rules[conv_general_dilated_p] = _conv
