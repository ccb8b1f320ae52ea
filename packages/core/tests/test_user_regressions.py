"""Regressions found by porting JAX programs to plait (core's part).

Values at symbolic sizes need an interpreter that binds the sizes (mask, vmap
over piles), so the symbolic cases here check the staged programs;
/work/main/tests/test_user_regressions.py checks their values."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_core as pc
import plait_core.numpy as pnp
from plait_core import lax
from plait_core.dims import SymbolicDim

N = SymbolicDim.var("n")


# ---------------------------------------------------------------------------
# nonzero(size=...) on a traced value: its indices are int32, not weakly typed
# (a weak result would take the dtype of a narrower integer it is added to).


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: pnp.nonzero(x > 2, size=4)[0],
        lambda x: pnp.nonzero(x > 2, size=4, fill_value=-1)[0],
        lambda x: pnp.where(x > 2, size=2)[0],
        lambda x: pnp.argwhere(x > 2, size=4),
        lambda x: pnp.flatnonzero(x > 2, size=3, fill_value=7),
    ],
)
def test_traced_nonzero_with_size_is_strongly_typed(fn: Callable[[Any], Any]) -> None:
    x = np.arange(6.0, dtype=np.float32)
    closed = pc.make_jaxpr(fn)(x)
    (aval,) = closed.out_avals
    assert aval.dtype == np.int32
    assert not aval.weak_type
    # The eager result agrees with the staged one and with NumPy.
    eager = fn(x)
    assert not pc.get_aval(eager).weak_type
    (staged,) = pc.eval_jaxpr(closed.jaxpr, closed.consts, x)
    np.testing.assert_array_equal(np.asarray(staged), np.asarray(eager))
    # int8 + the indices stays int32, as with NumPy's (strong) int32 indices.
    assert pnp.add(np.ones(1, np.int8), eager).dtype == np.int32


def test_traced_nonzero_fill_values_match_numpy() -> None:
    x = np.array([0.0, 3.0, 0.0, 5.0], np.float32)
    got = pc.make_jaxpr(lambda v: pnp.nonzero(v, size=4, fill_value=-1)[0])(x)
    (out,) = pc.eval_jaxpr(got.jaxpr, got.consts, x)
    want = np.full(4, -1, np.int32)
    nz = np.nonzero(x)[0]
    want[: len(nz)] = nz
    np.testing.assert_array_equal(np.asarray(out), want)


# ---------------------------------------------------------------------------
# A symbolic dimension combined with a float, or divided, is a value (as JAX's
# symbolic dimensions are), not a TypeError.


@pytest.mark.parametrize(
    "op, reflected, other",
    [
        (operator.mul, False, 0.5),
        (operator.mul, True, 0.5),
        (operator.add, False, 0.5),
        (operator.sub, True, 1.5),
        (operator.truediv, False, 2),
        (operator.truediv, True, 1),
        (operator.truediv, False, 2.0),
        (operator.truediv, False, N),
    ],
)
def test_symbolic_dim_arithmetic_with_non_dimensions_gives_a_value(op: Any, reflected: bool, other: Any) -> None:
    def fn(x: Any) -> Any:
        n = x.shape[0]
        return op(other, n) if reflected else op(n, other)

    closed = pc.make_jaxpr(fn)(pc.ShapeDtypeStruct((N,), np.float32))
    (aval,) = closed.out_avals
    assert aval.shape == ()
    assert aval.dtype == np.float32
    assert "dim_as_value" in [e.primitive.name for e in closed.eqns]


def test_symbolic_dim_integer_arithmetic_stays_a_dimension() -> None:
    assert isinstance(N * 2, SymbolicDim)
    assert isinstance(N + 1, SymbolicDim)
    assert (2 * N) // 2 == N


def test_constant_dimension_division_is_a_python_value() -> None:
    # Concrete shapes are ints: "/" is Python's, no dimension is involved.
    assert pc.make_jaxpr(lambda x: x.shape[0] / 2)(np.ones(3, np.float32)).eqns == []


def test_symbolic_dim_with_unsupported_operand_names_the_types() -> None:
    with pytest.raises(TypeError, match=r"unsupported operand type.*SymbolicDim.*NoneType"):
        N * None  # type: ignore[operator]


# ---------------------------------------------------------------------------
# A symbolic dimension as a start index of dynamic_slice / dynamic_update_slice.


def test_dynamic_slice_start_may_be_a_symbolic_dimension() -> None:
    spec = pc.ShapeDtypeStruct((N + 2,), np.float32)
    closed = pc.make_jaxpr(lambda x: lax.dynamic_slice(x, (x.shape[0] - 2,), (2,)))(spec)
    assert closed.out_avals[0].shape == (2,)
    assert "dim_as_value" in [e.primitive.name for e in closed.eqns]
    closed = pc.make_jaxpr(lambda x: lax.dynamic_update_slice(x, pnp.ones(2), (x.shape[0] - 2,)))(spec)
    assert closed.out_avals[0].shape == (N + 2,)


# ---------------------------------------------------------------------------
# numpy.linalg: the factorisations exist now (issue 14); other names are plain AttributeErrors.


def test_other_missing_linalg_names_are_plain_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'no_such_function'"):
        pnp.linalg.no_such_function  # noqa: B018
    np.testing.assert_allclose(np.asarray(pnp.linalg.norm(np.array([3.0, 4.0], np.float32))), 5.0)


# ---------------------------------------------------------------------------
# nn activations rewritten with selects (for JAX's derivatives at the kinks,
# checked in plait-autodiff's tests): values, NaN propagation, dtypes.

ACTIVATION_ORACLES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.minimum(np.maximum(x, 0), 6),
    "elu": lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0))),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "hard_sigmoid": lambda x: np.minimum(np.maximum(x + 3, 0), 6) / 6,
}


@pytest.mark.parametrize("name", list(ACTIVATION_ORACLES))
def test_activations_values_and_nan(name: str) -> None:
    x = np.array([-100.0, -6.0, -1.0, 0.0, 0.5, 6.0, 7.0, 100.0, np.nan, -np.inf, np.inf], np.float32)
    got = np.asarray(getattr(pc.nn, name)(x))
    with np.errstate(invalid="ignore"):
        want = ACTIVATION_ORACLES[name](x.astype(np.float64))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)  # NaN in the same places


def test_relu_of_integers_keeps_the_dtype() -> None:
    x = np.array([-3, 0, 9], np.int8)
    got = pc.nn.relu(x)
    assert np.asarray(got).dtype == np.int8
    np.testing.assert_array_equal(np.asarray(got), ACTIVATION_ORACLES["relu"](x))
    # relu6 is min(max(x, 0), 6.) in JAX: integers give a (weak) float32.
    got6 = pc.nn.relu6(x)
    assert np.asarray(got6).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got6), ACTIVATION_ORACLES["relu6"](x).astype(np.float32))
