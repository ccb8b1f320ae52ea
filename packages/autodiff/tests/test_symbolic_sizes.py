"""Derivatives of programs whose array sizes are symbolic (``n``).

``mask`` and ``vmap`` over piles differentiate programs whose shapes hold
symbolic dimensions; here they are staged with core alone
(``make_jaxpr`` of ``grad``/``jvp`` on a ``ShapeDtypeStruct`` of shape
``(n,)``) and the staged program is then run at concrete sizes by
substituting them (:func:`run_at`, with ``dim_as_value`` giving each size
its value).  The oracle is the same derivative taken at the concrete shape
(itself checked against finite differences in ``test_rules_numerical``) and,
for the rules written for symbolic sizes, NumPy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_autodiff as ad
import plait_core as pc
import plait_core.numpy as pnp
from plait_autodiff.rules.windows import indexed, window_margins
from plait_autodiff.tangents import zeros_of
from plait_core import dtypes, lax
from plait_core.abstract import ShapedArray
from plait_core.dims import InconclusiveDimensionOperation, SymbolicDim, symbolic_dims
from plait_core.jaxpr import Literal, literal_value
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)

(n,) = symbolic_dims("n")
F32 = np.float32
RNG = np.random.default_rng(0)


def _at(value: Any, sizes: dict[str, int]) -> Any:
    if isinstance(value, SymbolicDim):
        return value.evaluate(sizes)
    if type(value) is tuple:  # (named tuples hold no sizes)
        return tuple(_at(v, sizes) for v in value)
    return value


def run_at(closed: pc.ClosedJaxpr, sizes: dict[str, int], *args: Any) -> list[Any]:
    """Evaluate a staged program with every size of ``sizes`` made concrete
    (in the parameters of its equations; nested programs must not mention them)."""
    env: dict[Any, Any] = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))

    def read(v: Any) -> Any:
        return literal_value(v) if type(v) is Literal else env[v]

    for eqn in closed.jaxpr.eqns:
        params = {k: _at(v, sizes) for k, v in eqn.params.items()}
        out = eqn.primitive.bind(*[read(v) for v in eqn.invars], **params)
        env.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    return [np.asarray(read(v)) for v in closed.jaxpr.outvars]


def vec(size: Any = n) -> pc.ShapeDtypeStruct:
    return pc.ShapeDtypeStruct((size,), F32)


# Functions of one vector; every one takes its sizes from the input's shape.
PROGRAMS: dict[str, Callable[[Any], Any]] = {
    "last": lambda x: x[-1] * 2.0,
    "all_but_last": lambda x: (x[:-1] ** 2).sum(),
    "all_but_first": lambda x: (x[1:] ** 3).sum(),
    "differences": lambda x: ((x[1:] - x[:-1]) ** 2).sum(),
    "first_times_last": lambda x: x[0] * x[-1],
    "concatenate": lambda x: (pnp.concatenate([x, x[:1], x[-1:]]) ** 2).sum(),
    "pad": lambda x: (pnp.pad(x, (1, 2)) * pnp.arange(x.shape[0] + 3)).sum(),
    "reverse": lambda x: (x[::-1] * pnp.arange(x.shape[0])).sum(),
    "cumsum": lambda x: (pnp.cumsum(x) ** 2).sum(),
    "cumprod": lambda x: (pnp.cumprod(x) ** 2).sum(),
    "cummax": lambda x: (lax.cummax(x, axis=0) * pnp.arange(x.shape[0])).sum(),
    "cummin_reverse": lambda x: (lax.cummin(x, axis=0, reverse=True) ** 2).sum(),
    "cumprod_reverse": lambda x: (lax.cumprod(x, axis=0, reverse=True) ** 2).sum(),
    "prod_and_max": lambda x: pnp.prod(x) + pnp.max(x) * pnp.min(x),
    "sort": lambda x: (pnp.sort(x) * pnp.arange(x.shape[0])).sum(),
    "variance": lambda x: pnp.var(x),
    "dynamic_window": lambda x: (lax.dynamic_slice_in_dim(x, 1, x.shape[0] - 1) ** 2).sum(),
    "dynamic_update": lambda x: (lax.dynamic_update_slice_in_dim(x, x[1:] * 3.0, 1, 0) ** 2).sum(),
    "take": lambda x: (x[pnp.array([0, 2, 0])] ** 2).sum() + x[-1],
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_grad_and_jvp_staged_at_a_symbolic_size(name: str) -> None:
    f = PROGRAMS[name]
    grad_jaxpr = pc.make_jaxpr(ad.grad(f))(vec())
    jvp_jaxpr = pc.make_jaxpr(lambda x, t: ad.jvp(f, (x,), (t,))[1])(vec(), vec())
    assert grad_jaxpr.out_avals[0].shape == (n,)
    for size in (3, 5):
        x = RNG.uniform(0.5, 2.0, size).astype(F32)
        t = RNG.standard_normal(size).astype(F32)
        expected = np.asarray(ad.grad(f)(x))
        (got,) = run_at(grad_jaxpr, {"n": size}, x)
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
        (tangent,) = run_at(jvp_jaxpr, {"n": size}, x, t)
        np.testing.assert_allclose(tangent, np.dot(expected, t), rtol=1e-4, atol=1e-5)


def test_transpose_of_a_slice_at_a_symbolic_start_writes_into_zeros() -> None:
    # x[n:n+2] of x of size n + 2: the start is symbolic, so the cotangent is placed at its value.
    def f(x: Any) -> Any:
        size = x.shape[0]
        return (lax.slice(x, (size - 2,), (size,)) * np.array([3.0, 5.0], F32)).sum()

    closed = pc.make_jaxpr(ad.grad(f))(vec(n + 2))
    assert "dynamic_update_slice" in str(closed)
    x = np.arange(6, dtype=F32)
    (got,) = run_at(closed, {"n": 4}, x)
    np.testing.assert_array_equal(got, [0, 0, 0, 0, 3, 5])


def test_cumulative_derivatives_at_a_symbolic_size_are_a_scan() -> None:
    # The doubling scan needs the number of steps; a symbolic length loops instead.
    closed = pc.make_jaxpr(ad.grad(lambda x: pnp.cumprod(x).sum()))(vec())
    assert "scan" in str(closed)
    x = np.array([2.0, 3.0, 0.5, 4.0], F32)
    (got,) = run_at(closed, {"n": 4}, x)
    # d/dx_j of sum_i prod_{k<=i} x_k = sum_{i>=j} prod_{k<=i, k!=j} x_k
    expected = [sum(np.prod(np.delete(x[: i + 1], j)) for i in range(j, 4)) for j in range(4)]
    np.testing.assert_allclose(got, expected, rtol=1e-6)


# ---------------------------------------------------------------------------
# conv_general_dilated over a symbolic spatial size


def _conv(x: Any, w: Any, padding: Any, rhs_dilation: Any = None) -> Any:
    y = lax.conv_general_dilated(x, w, (1,), padding, rhs_dilation=rhs_dilation)
    return (pnp.tanh(y) ** 2).sum()


@pytest.mark.parametrize(
    "padding, rhs_dilation", [("VALID", None), ("SAME", None), (((2, 1),), None), ("VALID", (2,))]
)
def test_conv_grads_at_a_symbolic_spatial_size(padding: Any, rhs_dilation: Any) -> None:
    def f(x: Any, w: Any) -> Any:
        return _conv(x, w, padding, rhs_dilation)

    w = RNG.standard_normal((2, 3, 3)).astype(F32)
    spec = pc.ShapeDtypeStruct((2, 3, n), F32)
    closed = pc.make_jaxpr(ad.grad(f, argnums=(0, 1)))(spec, pc.ShapeDtypeStruct(w.shape, F32))
    for size in (6, 8):
        x = RNG.standard_normal((2, 3, size)).astype(F32)
        gx, gw = run_at(closed, {"n": size}, x, w)
        ex, ew = ad.grad(f, argnums=(0, 1))(x, w)
        np.testing.assert_allclose(gx, np.asarray(ex), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(gw, np.asarray(ew), rtol=1e-4, atol=1e-5)


def test_grouped_conv_kernel_grad_at_a_symbolic_size_is_refused() -> None:
    def f(x: Any, w: Any) -> Any:
        return lax.conv_general_dilated(x, w, (1,), "VALID", feature_group_count=2).sum()

    with pytest.raises(NotImplementedError, match=r"feature_group_count=2 .* symbolic spatial sizes"):
        pc.make_jaxpr(ad.grad(f, argnums=1))(pc.ShapeDtypeStruct((1, 4, n), F32), pc.ShapeDtypeStruct((2, 2, 3), F32))


# ---------------------------------------------------------------------------
# Windows core cannot prove in range (windows.py)


def test_window_margins() -> None:
    assert window_margins(n, 0, n, "slice") == (0, 0)
    assert window_margins(n, n - 1, n, "slice") == (0, 0)
    assert window_margins(n, 0, 2, "slice") == (0, 1)  # 2 <= n + 1 for every n >= 1
    assert window_margins(n, n - 2, n, "slice") == (1, 0)  # 0 <= n - 2 + 1
    assert window_margins(5, 0, 2, "slice") == (0, 0)
    (m,) = symbolic_dims("m")
    with pytest.raises(InconclusiveDimensionOperation, match=r"derivative of slice: the window \[0, m\) .* size n"):
        window_margins(n, 0, m, "slice")


_GATHER = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,))
_SCATTER = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))


@pytest.mark.parametrize("mode", [GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP])
def test_indexed_gather_grows_the_operand_but_treats_starts_at_the_true_size(mode: GatherScatterMode) -> None:
    params = dict(dimension_numbers=_GATHER, slice_sizes=(2,), indices_are_sorted=False, unique_indices=False,
                  mode=mode, fill_value=0)  # fmt: skip

    def windows(x: Any, idx: Any) -> Any:
        return indexed(st.gather_p, x, idx, None, (2,), (0,), **params)

    idx = np.array([[-1], [0], [2], [3], [4]], np.int32)
    closed = pc.make_jaxpr(windows)(vec(), pc.ShapeDtypeStruct(idx.shape, np.int32))
    assert "pad" in str(closed)  # the window of 2 along n needed a margin
    x = np.array([1.0, 2.0, 3.0, 4.0], F32)
    (got,) = run_at(closed, {"n": 4}, x, idx)
    np.testing.assert_array_equal(got, st.gather_p.bind(x, idx, **params))


@pytest.mark.parametrize("mode", [GatherScatterMode.CLIP, GatherScatterMode.FILL_OR_DROP])
def test_indexed_scatter_add_grows_the_operand_and_cuts_it_back(mode: GatherScatterMode) -> None:
    params = dict(dimension_numbers=_SCATTER, indices_are_sorted=False, unique_indices=False, mode=mode)

    def scatter(x: Any, idx: Any, upd: Any) -> Any:
        return indexed(st.scatter_add_p, x, idx, upd, (2,), (0,), **params)

    idx = np.array([[-1], [0], [2], [3]], np.int32)
    upd = np.arange(1.0, 9.0, dtype=F32).reshape(4, 2)
    closed = pc.make_jaxpr(scatter)(vec(), pc.ShapeDtypeStruct(idx.shape, np.int32), pc.ShapeDtypeStruct(upd.shape, F32))
    assert closed.out_avals[0].shape == (n,)
    x = np.zeros(4, F32)
    (got,) = run_at(closed, {"n": 4}, x, idx, upd)
    np.testing.assert_array_equal(got, st.scatter_add_p.bind(x, idx, upd, **params))


def test_float0_zeros_of_a_symbolic_shape() -> None:
    closed = pc.make_jaxpr(lambda: zeros_of(ShapedArray((n, 2), dtypes.float0)))()
    assert closed.out_avals[0].shape == (n, 2)
    (got,) = run_at(closed, {"n": 3})
    assert got.shape == (3, 2) and got.dtype == dtypes.float0
