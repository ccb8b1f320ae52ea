"""Library functions marked ``staged_when_eager`` (issue 26): called eagerly
with staging on they bind one ``closed_call`` per call, staged once per
signature (arrays by abstract value, other leaves by type and value), with the
values of running them operation by operation; inside transformations, while
staging is off or an option guards eager execution, they run as written; a
signature whose staging needs concrete values runs operation by operation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import config, eager_staging
from plait_core import numpy as pnp
from plait_core.config import no_tracing
from plait_core.eager_staging import is_staged_when_eager, staged_when_eager
from plait_core.scipy import linalg as sla
from plait_core.trace import numpy_backend


@pytest.fixture
def calls() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Staging on, NumPy's backend spied on: (primitive name, params) of each
    eager bind from outside a call (the NumPy backend evaluates a call's body
    by binding its equations eagerly: those are not recorded)."""
    seen: list[tuple[str, dict[str, Any]]] = []
    depth = [0]

    def spy(prim: Any, args: Sequence[Any], params: dict[str, Any]) -> Any:
        if not depth[0]:
            seen.append((prim.name, params))
        depth[0] += 1
        try:
            return numpy_backend(prim, args, params)
        finally:
            depth[0] -= 1

    prev_backend = pc.set_eager_backend(spy)
    prev = eager_staging.set_eager_staging(True)
    try:
        yield seen
    finally:
        eager_staging.set_eager_staging(prev)
        pc.set_eager_backend(prev_backend)


def _op_by_op(f: Any, *args: Any, **kwargs: Any) -> Any:
    prev = eager_staging.set_eager_staging(False)
    try:
        return f(*args, **kwargs)
    finally:
        eager_staging.set_eager_staging(prev)


_RNG = np.random.default_rng(0)
A = (_RNG.normal(size=(4, 4)) + 4 * np.eye(4)).astype(np.float32)
B = _RNG.normal(size=(4,)).astype(np.float32)
M = _RNG.normal(size=(6, 3)).astype(np.float32)


def test_the_library_functions_are_marked() -> None:
    for f in (pnp.linalg.solve, pnp.linalg.lstsq, pnp.linalg.norm, pnp.linalg.inv, pnp.mean, pnp.var, sla.solve):
        assert is_staged_when_eager(f), f
    assert not is_staged_when_eager(pnp.sin)
    assert pnp.linalg.solve.__name__ == "solve" and "a x = b" in (pnp.linalg.solve.__doc__ or "")


@pytest.mark.parametrize(
    "name, f, args, kwargs",
    [
        ("solve", pnp.linalg.solve, (A, B), {}),
        ("lstsq", pnp.linalg.lstsq, (M, M[:, 0]), {}),
        ("norm", pnp.linalg.norm, (M,), {"axis": 1, "keepdims": True}),
        ("inv", pnp.linalg.inv, (A,), {}),
        ("slogdet", pnp.linalg.slogdet, (A,), {}),
        ("mean", pnp.mean, (M,), {"axis": 0}),
        ("std", pnp.std, (M,), {"ddof": 1}),
        ("cho_solve", sla.cho_solve, ((np.linalg.cholesky(A @ A.T), True), B), {}),
    ],
)
def test_one_call_per_eager_use_with_the_values_of_op_by_op(
    calls: list[tuple[str, dict[str, Any]]], name: str, f: Any, args: Any, kwargs: Any
) -> None:
    want = _op_by_op(f, *args, **kwargs)
    calls.clear()
    got = f(*args, **kwargs)
    assert [n for n, _ in calls] == ["closed_call"], calls
    assert calls[0][1]["name"] == f.__name__
    w_leaves, w_tree = pc.tree_util.tree_flatten(want)
    g_leaves, g_tree = pc.tree_util.tree_flatten(got)
    assert g_tree == w_tree
    for g, w in zip(g_leaves, w_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_staged_once_per_signature(calls: list[tuple[str, dict[str, Any]]]) -> None:
    def body() -> list[Any]:
        return [p["call_jaxpr"] for n, p in calls if n == "closed_call"]

    pnp.linalg.norm(M, axis=1)
    pnp.linalg.norm(M + 1, axis=1)  # same types: the same program
    pnp.linalg.norm(M, axis=0)  # another static value
    pnp.linalg.norm(M.astype(np.float16), axis=1)  # another type
    pnp.linalg.norm(np.float32(2.0))  # a NumPy scalar is an operand
    pnp.linalg.norm(np.float32(3.0))
    first, same, axis0, f16, s2, s3 = body()
    assert same is first and s3 is s2
    assert len({id(first), id(axis0), id(f16), id(s2)}) == 4


def test_float_statics_keep_signed_zeros_and_nans_apart(calls: list[tuple[str, dict[str, Any]]]) -> None:
    @staged_when_eager
    def scaled(x: Any, c: float) -> Any:
        return pnp.multiply(pnp.sin(x), c) + c

    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(np.signbit(np.asarray(scaled(x, -0.0))), [True] * 3)
    np.testing.assert_array_equal(np.signbit(np.asarray(scaled(x, 0.0))), [False] * 3)
    assert np.isnan(np.asarray(scaled(x, float("nan")))).all()
    assert np.isnan(np.asarray(scaled(x, float("nan")))).all()
    bodies = [p["call_jaxpr"] for n, p in calls if n == "closed_call"]
    assert len({id(b) for b in bodies}) == 3  # -0.0, 0.0, nan (found again)


def test_transformations_see_the_function_as_written(calls: list[tuple[str, dict[str, Any]]]) -> None:
    staged_on = str(pc.make_jaxpr(lambda a, b: pnp.linalg.solve(a, b))(A, B))
    staged_off = str(_op_by_op(lambda: pc.make_jaxpr(lambda a, b: pnp.linalg.solve(a, b))(A, B)))
    assert staged_on == staged_off and "closed_call" not in staged_on and "lu" in staged_on
    assert calls == []


def test_off_while_disabled_or_guarded(calls: list[tuple[str, dict[str, Any]]]) -> None:
    _op_by_op(pnp.linalg.norm, M)
    assert "closed_call" not in [n for n, _ in calls] and calls
    calls.clear()
    with pc.disable_jit():
        pnp.linalg.norm(M)
    assert "closed_call" not in [n for n, _ in calls] and calls
    calls.clear()
    with no_tracing():
        pnp.linalg.norm(M)
    assert "closed_call" not in [n for n, _ in calls] and calls
    calls.clear()
    prev = config.numpy_rank_promotion
    config.update("jax_numpy_rank_promotion", "warn")
    try:
        pnp.linalg.norm(M)
    finally:
        config.update("jax_numpy_rank_promotion", prev)
    assert "closed_call" not in [n for n, _ in calls] and calls


def test_a_signature_needing_concrete_values_runs_op_by_op(calls: list[tuple[str, dict[str, Any]]]) -> None:
    @staged_when_eager
    def branchy(x: Any) -> Any:
        return pnp.sin(x) if float(pnp.sum(x)) > 0 else pnp.cos(x)

    x = np.ones(3, np.float32)
    for _ in range(2):
        calls.clear()
        np.testing.assert_allclose(np.asarray(branchy(x)), np.sin(x), rtol=1e-6)
        assert [n for n, _ in calls] == ["reduce_sum", "sin"]
    # NumPy's least-squares residuals need the rank's value: op by op.
    calls.clear()
    _sol, resid, rank, _ = pnp.linalg.lstsq(M, M[:, 0], numpy_resid=True)
    names = [n for n, _ in calls]
    assert "closed_call" not in names and "svd" in names and int(rank) == 3 and resid.shape == (1,)


def test_a_single_operation_runs_as_itself(calls: list[tuple[str, dict[str, Any]]]) -> None:
    out = pnp.matmul(A, A)  # one dot_general: no call around it
    assert [n for n, _ in calls] == ["dot_general"]
    np.testing.assert_allclose(np.asarray(out), A @ A, rtol=1e-5)
    calls.clear()
    pnp.matmul(A, A)
    assert [n for n, _ in calls] == ["dot_general"]
    calls.clear()
    vec = pnp.matmul(A, B)  # a matrix times a vector: expand, dot, squeeze in one call
    assert [n for n, _ in calls] == ["closed_call"]
    np.testing.assert_allclose(np.asarray(vec), A @ B, rtol=1e-5)
    calls.clear()
    pnp.linalg.slogdet(A)  # one custom_jvp_call equation, whose body is many operations: a call
    assert [n for n, _ in calls] == ["closed_call"]


def test_the_functions_own_errors_propagate(calls: list[tuple[str, dict[str, Any]]]) -> None:
    with pytest.raises(ValueError, match=r"linalg.solve: a must have shape \(\.\.\., n, n\), got"):
        pnp.linalg.solve(M, B)
    with pytest.raises(ValueError, match=r"linalg.solve: a must have shape \(\.\.\., n, n\), got"):
        pnp.linalg.solve(M, B)  # not cached as a success
    with pytest.raises(TypeError, match=r"linalg\.matrix_power: exponent must be an integer"):
        pnp.linalg.matrix_power(A, 1.5)
    assert "closed_call" not in [n for n, _ in calls]


def test_unhashable_statics_and_foreign_leaves_run_op_by_op(calls: list[tuple[str, dict[str, Any]]]) -> None:
    @staged_when_eager
    def pick(x: Any, table: Any) -> Any:
        return pnp.multiply(x, float(len(table)))

    out = pick(np.ones(2, np.float32), {1, 2, 3})  # a set: a leaf that is not hashable
    np.testing.assert_array_equal(np.asarray(out), [3.0, 3.0])
    assert [n for n, _ in calls] == ["mul"]
    with pytest.raises(TypeError, match=r"plait does not support the dtype <U1"):
        pnp.mean(np.array(["a", "b"]))
