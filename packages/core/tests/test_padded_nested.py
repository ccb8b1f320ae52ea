"""Core's padded rules of sub-programs, windows, conv and factorisations on
their own: a NumPy environment supplies ``padded_jaxpr`` with a small
interpreter that runs core's padded rules equation by equation (the hook is
all a rule of a sub-program needs), and the logical part of every result
equals the primitive applied to the logical slices, whatever the padding
holds."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from plait_core import lax
from plait_core.abstract import ShapedArray
from plait_core.dims import Dim, SymbolicDim
from plait_core.jaxpr import ClosedJaxpr, Literal
from plait_core.padded import PaddedEnv, padded_rules
from plait_core.primitives import calls, control_flow, factorizations, linalg, reduce_window
from plait_core.primitives.control_flow import convert_constvars
from plait_core.staging import trace_to_jaxpr

N = SymbolicDim.var("n")
F32, I32 = np.dtype(np.float32), np.dtype(np.int32)


class InterpretingEnv(PaddedEnv):
    """One named size ``n`` (padded 6); its logical value is any scalar (a
    concrete int, or a staged input inside a sub-program)."""

    def __init__(self, n: Any) -> None:
        self.n = n

    def is_padded(self, d: Dim) -> bool:
        return isinstance(d, SymbolicDim) and not d.is_constant

    def padded_dim(self, d: Dim) -> int:
        return int(d.evaluate({"n": 6})) if isinstance(d, SymbolicDim) else int(d)

    def value(self, d: Dim, dtype: Any = None) -> Any:
        assert not self.is_padded(d) or d == N, "this env knows the size n only"
        value = self.n if self.is_padded(d) else np.asarray(int(d), I32)
        return value if dtype is None else np.asarray(value, dtype) if isinstance(value, int) else value

    def padded_jaxpr(self, closed: ClosedJaxpr, like: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, list[Any]]:
        def fun(n: Any, *xs: Any) -> list[Any]:
            return run_padded(InterpretingEnv(n), closed, xs)

        staged = trace_to_jaxpr(fun, [ShapedArray((), I32), *(ShapedArray(self.padded_shape(a.shape), a.dtype) for a in closed.in_avals)])
        body, consts = convert_constvars(staged)
        return body, [*consts, np.asarray(self.n, I32)]


def run_padded(env: PaddedEnv, closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    """The logical jaxpr ``closed`` on padded data: core's padded rule of every equation."""
    values: dict[Any, Any] = dict(zip(closed.jaxpr.constvars, closed.consts))
    values.update(zip(closed.jaxpr.invars, args))

    def read(v: Any) -> Any:
        return v.val if isinstance(v, Literal) else values[v]

    for eqn in closed.jaxpr.eqns:
        out = padded_rules[eqn.primitive](env, [read(v) for v in eqn.invars], [v.aval for v in eqn.invars], **eqn.params)
        values.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    return [read(v) for v in closed.jaxpr.outvars]


ENV = InterpretingEnv(4)
XS = np.array([1.5, -2.0, 0.5, 3.0, np.inf, np.nan], np.float32)  # logical part: 4 entries


def _jaxpr(fun: Any, *avals: ShapedArray) -> ClosedJaxpr:
    return trace_to_jaxpr(fun, list(avals))


@pytest.mark.parametrize("reverse", [False, True])
def test_scan_over_a_padded_length_stops_the_carry_at_the_logical_length(reverse: bool) -> None:
    body = _jaxpr(lambda c, x: [c * x + 1.0, c], ShapedArray((), F32), ShapedArray((), F32))
    final, ys = padded_rules[control_flow.scan_p](
        ENV, [np.float32(2.0), XS], [ShapedArray((), F32), ShapedArray((N,), F32)], jaxpr=body, num_consts=0,
        num_carry=1, length=N, reverse=reverse, unroll=1, linear=(False, False),
    )  # fmt: skip
    c, want = np.float32(2.0), []
    for x in XS[:4][::-1] if reverse else XS[:4]:
        want.append(c)
        c = c * x + 1.0
    np.testing.assert_allclose(final, c, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ys)[:4], want[::-1] if reverse else want, rtol=1e-6)


def test_while_reads_the_logical_part() -> None:
    vec = ShapedArray((N,), F32)
    cond = _jaxpr(lambda x: [lax.reduce_sum(x, (0,)) < 100.0], vec)
    body = _jaxpr(lambda x: [x * 2.0], vec)
    x = np.array([1.0, 2.0, 3.0, 4.0, 1e9, -1e9], np.float32)
    (out,) = padded_rules[control_flow.while_p](
        ENV, [x], [vec], cond_jaxpr=cond, body_jaxpr=body, cond_nconsts=0, body_nconsts=0
    )
    np.testing.assert_array_equal(np.asarray(out)[:4], x[:4] * 16)  # 10 -> 20 -> 40 -> 80 -> 160


@pytest.mark.parametrize("index", [0, 1])
def test_cond_and_call_run_their_branches_on_padded_data(index: int) -> None:
    vec = ShapedArray((N,), F32)
    branches = (_jaxpr(lambda x: [lax.reduce_sum(x, (0,))], vec), _jaxpr(lambda x: [lax.reduce_max(x, (0,))], vec))
    (out,) = padded_rules[control_flow.cond_p](ENV, [np.int32(index), XS], [ShapedArray((), I32), vec], branches=branches)
    np.testing.assert_allclose(out, XS[:4].sum() if index == 0 else XS[:4].max(), rtol=1e-6)
    (called,) = padded_rules[calls.closed_call_p](ENV, [XS], [vec], call_jaxpr=branches[index], name="f", jit_info=None)
    np.testing.assert_allclose(called, out, rtol=1e-6)


def test_conv_zeroes_the_padding_of_its_lhs() -> None:
    dn = linalg.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
    lhs, rhs = XS.reshape(1, 1, 6), np.array([[[1.0, -1.0, 2.0]]], np.float32)
    params = dict(window_strides=(1,), padding=((1, 1),), lhs_dilation=(1,), rhs_dilation=(1,), dimension_numbers=dn,
                  feature_group_count=1, batch_group_count=1, precision=None, preferred_element_type=None)  # fmt: skip
    out = padded_rules[linalg.conv_general_dilated_p](
        ENV, [lhs, rhs], [ShapedArray((1, 1, N), F32), ShapedArray((1, 1, 3), F32)], **params
    )
    want = np.correlate(np.pad(XS[:4], 1), rhs.ravel(), "valid")
    np.testing.assert_allclose(np.asarray(out).ravel()[:4], want, rtol=1e-6)


def test_refusals_name_the_primitive_and_the_padded_axis() -> None:
    window = dict(window_dimensions=(2,), window_strides=(1,), padding=((0, 0),), base_dilation=(1,), window_dilation=(1,))
    with pytest.raises(NotImplementedError, match=r"reduce_window_sum has a window of 2 \(stride 1, padding \(0, 0\)\) "
                                                  r"along the padded axis 0 of size n; .* \(operands f32\[n\]\)"):  # fmt: skip
        padded_rules[reduce_window.reduce_window_sum_p](ENV, [XS], [ShapedArray((N,), F32)], **window)
    square = ShapedArray((N, N), F32)
    with pytest.raises(NotImplementedError, match=r"cholesky cannot factorise matrices with a padded row or column axis"):
        padded_rules[factorizations.cholesky_p](ENV, [np.eye(6, dtype=np.float32)], [square])
    assert padded_rules.check_of(factorizations.cholesky_p) is not None
    assert padded_rules.is_nested(control_flow.scan_p) and not padded_rules.is_nested(linalg.dot_general_p)
