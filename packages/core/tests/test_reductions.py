"""Reductions, argmin/argmax, scans, sort, top_k and the AD helper primitives,
against NumPy (or a plain Python oracle), eagerly and staged."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
from plait_core import dims, dtypes, lax
from plait_core.primitives import ad_helpers as ad
from plait_core.primitives import reductions as rp

f32, i32, bf16, f16, u8 = np.float32, np.int32, ml_dtypes.bfloat16, np.float16, np.uint8
rng = np.random.default_rng(0)


def rand(shape: Sequence[int], dtype: Any) -> np.ndarray:
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_int(d):
        lo = 0 if dtypes.is_unsigned_int(d) else -5
        return rng.integers(lo, 6, size=shape).astype(d)
    if dtypes.is_complex(d):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d)
    return rng.standard_normal(shape).astype(d)


def run_both(f: Callable[..., Any], *args: Any) -> tuple[list[Any], list[Any], pc.ClosedJaxpr]:
    """Eager results, results of the staged jaxpr (type-checked), and the jaxpr."""
    eager = f(*args)
    closed = pc.make_jaxpr(f)(*args)
    pc.check_jaxpr(closed)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return (list(eager) if isinstance(eager, (tuple, list)) else [eager]), staged, closed


def assert_same(got: Any, want: np.ndarray, tol: float = 0.0) -> None:
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if tol:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)
    elif want.dtype in (np.dtype(bf16), np.dtype(f16)):
        np.testing.assert_array_equal(got.astype(f32), want.astype(f32))
    else:
        np.testing.assert_array_equal(got, want)


def check(f: Callable[..., Any], want: Any, *args: Any, tol: float = 0.0) -> pc.ClosedJaxpr:
    """``f(*args)`` eagerly and staged both equal ``want`` (one array or a list)."""
    wants = list(want) if isinstance(want, (list, tuple)) else [want]
    eager, staged, closed = run_both(f, *args)
    assert len(eager) == len(staged) == len(wants)
    for e, s, w, aval in zip(eager, staged, wants, closed.out_avals):
        assert_same(e, w, tol)
        assert_same(s, w, tol)
        assert aval.shape == w.shape and aval.dtype == w.dtype
    return closed


def tol_for(dtype: Any) -> float:
    d = np.dtype(dtype)
    return {np.dtype(bf16): 3e-2, np.dtype(f16): 3e-3, np.dtype(f32): 1e-5}.get(d, 0.0)


# ---------------------------------------------------------------------------
# reduce_* over axes

SHAPES_AXES = [
    ((3, 4, 5), (0,)),
    ((3, 4, 5), (1, 2)),
    ((3, 4, 5), (2, 0)),
    ((3, 4, 5), ()),
    ((3, 4, 5), (0, 1, 2)),
    ((3, 4, 5), (-1,)),
    ((2, 0, 3), (1,)),
    ((), ()),
]


def _np_reduce(name: str, x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    axes = tuple(a % x.ndim for a in axes) if x.ndim else axes
    out_shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    wide = x.astype(f32) if x.dtype in (np.dtype(bf16), np.dtype(f16)) else x
    if name == "reduce_sum":
        r = np.sum(wide, axis=axes, dtype=wide.dtype)
    elif name == "reduce_prod":
        r = np.prod(wide, axis=axes, dtype=wide.dtype)
    elif name in ("reduce_max", "reduce_min"):
        if any(x.shape[a] == 0 for a in axes):
            if x.dtype == np.bool_:
                ident: Any = name == "reduce_min"
            elif dtypes.is_int(x.dtype):
                info = np.iinfo(x.dtype)
                ident = info.min if name == "reduce_max" else info.max
            else:
                ident = -np.inf if name == "reduce_max" else np.inf
            r = np.full(out_shape, ident)
        else:
            r = (np.max if name == "reduce_max" else np.min)(wide, axis=axes)
    elif name == "reduce_and":
        r = np.all(x, axis=axes) if x.dtype == np.bool_ else np.bitwise_and.reduce(x, axis=axes, initial=int(np.iinfo(x.dtype).max) if x.dtype == u8 else -1)
    else:
        r = np.any(x, axis=axes) if x.dtype == np.bool_ else np.bitwise_or.reduce(x, axis=axes)
    return np.asarray(r).astype(x.dtype).reshape(out_shape)


REDUCERS = {
    "reduce_sum": [f32, i32, bf16, f16, u8, np.complex64],
    "reduce_prod": [f32, i32, bf16],
    "reduce_max": [f32, i32, bf16, np.bool_, u8],
    "reduce_min": [f32, i32, bf16, np.bool_, u8],
    "reduce_and": [np.bool_, i32, u8],
    "reduce_or": [np.bool_, i32, u8],
}


@pytest.mark.parametrize("shape,axes", SHAPES_AXES)
@pytest.mark.parametrize(
    "name,dtype", [(n, d) for n, ds in REDUCERS.items() for d in ds], ids=lambda v: getattr(v, "__name__", str(v))
)
def test_reductions_match_numpy(name: str, dtype: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> None:
    x = rand(shape, dtype)
    fn = getattr(lax, name)
    check(lambda a: fn(a, axes), _np_reduce(name, x, axes), x, tol=tol_for(dtype))


def test_integer_sum_and_prod_wrap_around() -> None:
    x = np.array([2**31 - 1, 1], i32)
    check(lambda a: lax.reduce_sum(a, (0,)), np.array(-(2**31), i32), x)
    y = np.array([2**16, 2**16], i32)
    check(lambda a: lax.reduce_prod(a, (0,)), np.array(0, i32), y)


@pytest.mark.parametrize("name,np_fn", [("reduce_max", np.max), ("reduce_min", np.min)])
def test_max_min_propagate_nan(name: str, np_fn: Any) -> None:
    x = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, -1.0]], f32)
    want = np_fn(x, axis=1)
    assert np.isnan(want[0])
    check(lambda a: getattr(lax, name)(a, (1,)), want, x)


def test_reduction_keeps_weak_type_and_accepts_symbolic_batch_dims() -> None:
    closed = pc.make_jaxpr(lambda a: lax.reduce_sum(a, ()))(2.0)
    assert closed.out_avals[0].weak_type
    n = dims.SymbolicDim.var("n")
    shapes = pc.eval_shape(lambda a: lax.reduce_max(a, (1,)), pc.ShapeDtypeStruct((n, 3), f32))
    assert shapes.shape == (n,) and shapes.dtype == f32
    shapes = pc.eval_shape(lambda a: lax.reduce_sum(a, (0,)), pc.ShapeDtypeStruct((n, 3), f32))
    assert shapes.shape == (3,)


@pytest.mark.parametrize(
    "name,dtype,match",
    [
        ("reduce_sum", np.bool_, "reduce_sum: the operand must have a numeric .* dtype, got bool"),
        ("reduce_prod", np.bool_, "reduce_prod: the operand must have a numeric"),
        ("reduce_max", np.complex64, "reduce_max: the operand must have a bool, integer or floating dtype, got complex64"),
        ("reduce_and", f32, "reduce_and: the operand must have a bool or integer dtype, got float32"),
        ("reduce_or", bf16, "reduce_or: the operand must have a bool or integer dtype, got bfloat16"),
    ],
)
def test_reduction_rejects_dtype(name: str, dtype: Any, match: str) -> None:
    x = np.zeros((2, 3), dtype)
    with pytest.raises(TypeError, match=match):
        getattr(lax, name)(x, (0,))
    with pytest.raises(TypeError, match=match):
        pc.make_jaxpr(lambda a: getattr(lax, name)(a, (0,)))(x)


def test_reduction_axis_errors() -> None:
    x = np.zeros((2, 3), f32)
    with pytest.raises(ValueError, match=r"lax.reduce_sum: axis 2 is out of range for an operand of shape \(2, 3\)"):
        lax.reduce_sum(x, (2,))
    with pytest.raises(ValueError, match=r"lax.reduce_max: axis -3 is out of range .* shape \(2, 3\)"):
        pc.make_jaxpr(lambda a: lax.reduce_max(a, (-3,)))(x)
    with pytest.raises(ValueError, match=r"reduce_sum: axis 1 appears twice in axes \(1, 1\)"):
        lax.reduce_sum(x, (1, -1))
    # The primitive itself wants canonical axes, eagerly and staged.
    with pytest.raises(ValueError, match=r"reduce_prod: axis -1 is out of range .*shape \(2, 3\) \(rank 2\)"):
        rp.reduce_prod_p.bind(x, axes=(-1,))
    with pytest.raises(ValueError, match=r"reduce_prod: axis 5 is out of range"):
        pc.make_jaxpr(lambda a: rp.reduce_prod_p.bind(a, axes=(5,)))(x)
    with pytest.raises(TypeError, match=r"reduce_sum: the parameter axes must be a tuple of ints, got list"):
        rp.reduce_sum_p.bind(x, axes=[0])
    with pytest.raises(TypeError, match=r"lax.reduce_sum: axis must be an int, got 'a'"):
        lax.reduce_sum(x, ("a",))  # type: ignore[arg-type]


def test_reduction_rejects_non_arrays() -> None:
    with pytest.raises(TypeError, match=r"argument operand of lax.reduce_sum: expected an array.*list"):
        lax.reduce_sum([1.0, 2.0], (0,))
    with pytest.raises(TypeError, match=r"argument operand of lax.argmax: expected an array.*str"):
        lax.argmax("abc", 0, i32)


# ---------------------------------------------------------------------------
# lax.reduce


@pytest.mark.parametrize(
    "comp,name,dtype",
    [
        ("add", "reduce_sum", f32),
        ("add", "reduce_sum", i32),
        ("mul", "reduce_prod", f32),
        ("max", "reduce_max", f32),
        ("min", "reduce_min", i32),
        ("bitwise_and", "reduce_and", np.bool_),
        ("bitwise_or", "reduce_or", i32),
    ],
)
def test_lax_reduce_recognises_monoids(comp: str, name: str, dtype: Any) -> None:
    x = rand((3, 4), dtype)
    identity = {
        "add": 0,
        "mul": 1,
        "max": -np.inf if dtype == f32 else np.iinfo(i32).min,
        "min": np.inf if dtype == f32 else np.iinfo(i32).max,
        "bitwise_and": True,
        "bitwise_or": 0,
    }[comp]
    init_value = np.asarray(identity, dtype)
    closed = check(lambda a: lax.reduce(a, init_value, getattr(lax, comp), (1,)), _np_reduce(name, x, (1,)), x)
    assert [e.primitive.name for e in closed.eqns] == [name]


def test_lax_reduce_with_non_identity_init_combines_it_once() -> None:
    x = rand((3, 4), f32)
    want = (x.sum(axis=0) + f32(10)).astype(f32)
    check(lambda a: lax.reduce(a, np.float32(10), lax.add, (0,)), want, x, tol=1e-6)
    want_max = np.maximum(x.max(axis=1), f32(0.5))
    check(lambda a: lax.reduce(a, 0.5, lax.max, (1,)), want_max, x)
    out = lax.reduce((x,), (0.0,), lax.add, (0, 1))
    assert isinstance(out, tuple) and len(out) == 1
    np.testing.assert_allclose(out[0], x.sum(), rtol=1e-5)


def test_lax_reduce_limitations_and_errors() -> None:
    x = rand((3, 4), f32)
    with pytest.raises(NotImplementedError, match=r"not supported: lax.reduce with an arbitrary Python computation"):
        lax.reduce(x, 0.0, lambda a, b: lax.add(a, b), (0,))
    with pytest.raises(NotImplementedError, match=r"not supported: lax.reduce with an arbitrary Python computation \(2 operands\)"):
        lax.reduce((x, x), (0.0, 0.0), lax.add, (0,))
    with pytest.raises(TypeError, match=r"lax.reduce: the init value's dtype int32 differs from the operand's dtype float32"):
        lax.reduce(x, np.int32(0), lax.add, (0,))
    with pytest.raises(ValueError, match=r"lax.reduce: init_values must be scalars, got an init value of shape \(3,\)"):
        lax.reduce(x, np.zeros(3, f32), lax.add, (0,))
    with pytest.raises(TypeError, match=r"lax.reduce: operands have the structure"):
        lax.reduce((x, x), 0.0, lax.add, (0,))


# ---------------------------------------------------------------------------
# argmax / argmin


@pytest.mark.parametrize("dtype", [f32, i32, np.bool_, bf16, f16, u8])
@pytest.mark.parametrize("shape,axis", [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -2)])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin_match_numpy(name: str, dtype: Any, shape: tuple[int, ...], axis: int) -> None:
    x = rand(shape, dtype)
    if dtype == i32:
        x = x // 3  # many ties: the first occurrence wins
    want = getattr(np, name)(x.astype(f32) if dtype in (bf16, f16) else x, axis=axis).astype(i32)
    check(lambda a: getattr(lax, name)(a, axis, i32), want, x)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_pick_the_first_nan(name: str) -> None:
    x = np.array([[1.0, np.nan, 5.0, np.nan], [2.0, -1.0, 7.0, 7.0]], f32)
    want = getattr(np, name)(x, axis=1).astype(np.int8)
    assert want[0] == 1
    check(lambda a: getattr(lax, name)(a, 1, np.int8), want, x)


def test_argmax_errors() -> None:
    x = np.zeros((2, 0), f32)
    with pytest.raises(ValueError, match=r"argmax: the reduced axis 1 of an operand of shape \(2, 0\) is empty"):
        lax.argmax(x, 1, i32)
    with pytest.raises(TypeError, match=r"lax.argmin: index_dtype must be an integer dtype, got float32"):
        lax.argmin(np.zeros(3, f32), 0, f32)
    with pytest.raises(TypeError, match=r"argmax: index_dtype must be an integer dtype"):
        rp.argmax_p.bind(np.zeros(3, f32), axes=(0,), index_dtype=np.dtype(f32))
    with pytest.raises(ValueError, match=r"argmin: axes must name exactly one axis, got \(0, 1\)"):
        rp.argmin_p.bind(np.zeros((2, 2), f32), axes=(0, 1), index_dtype=np.dtype(i32))
    with pytest.raises(ValueError, match=r"lax.argmax: axis 3 is out of range for an operand of shape \(2, 2\)"):
        lax.argmax(np.zeros((2, 2), f32), 3, i32)
    with pytest.raises(TypeError, match=r"argmax: the operand must have a bool, integer or floating dtype, got complex64"):
        lax.argmax(np.zeros(2, np.complex64), 0, i32)


# ---------------------------------------------------------------------------
# Scans


def _np_scan(name: str, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    wide = x.astype(f32) if x.dtype in (np.dtype(bf16), np.dtype(f16)) else x
    fn: Callable[[np.ndarray], np.ndarray] = {
        "cumsum": lambda v: np.cumsum(v, axis=axis, dtype=v.dtype),
        "cumprod": lambda v: np.cumprod(v, axis=axis, dtype=v.dtype),
        "cummax": lambda v: np.maximum.accumulate(v, axis=axis),
        "cummin": lambda v: np.minimum.accumulate(v, axis=axis),
    }[name]
    r = np.flip(fn(np.flip(wide, axis)), axis) if reverse else fn(wide)
    return r.astype(x.dtype)


SCANS = {
    "cumsum": [f32, i32, bf16, f16],
    "cumprod": [f32, i32, bf16],
    "cummax": [f32, i32, np.bool_, bf16],
    "cummin": [f32, i32, np.bool_, u8],
}


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", [((6,), 0), ((3, 5), 1), ((3, 5), -2), ((2, 3, 4), 1), ((0, 3), 0)])
@pytest.mark.parametrize(
    "name,dtype", [(n, d) for n, ds in SCANS.items() for d in ds], ids=lambda v: getattr(v, "__name__", str(v))
)
def test_scans_match_numpy(name: str, dtype: Any, shape: tuple[int, ...], axis: int, reverse: bool) -> None:
    x = rand(shape, dtype)
    fn = getattr(lax, name)
    check(lambda a: fn(a, axis, reverse), _np_scan(name, x, axis, reverse), x, tol=tol_for(dtype))


def test_cummax_propagates_nan_and_cumsum_keeps_default_axis() -> None:
    x = np.array([1.0, np.nan, 3.0, 0.0], f32)
    check(lambda a: lax.cummax(a), np.maximum.accumulate(x), x)
    y = rand((3, 2), f32)
    check(lambda a: lax.cumsum(a), np.cumsum(y, axis=0), y, tol=1e-6)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dtype,tol", [(f32, 1e-5), (bf16, 3e-2)])
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 9), 1), ((5, 2), 0), ((1,), 0)])
def test_cumlogsumexp_matches_numpy(shape: tuple[int, ...], axis: int, dtype: Any, tol: float, reverse: bool) -> None:
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    xf = x.astype(np.float64)
    want = np.flip(np.logaddexp.accumulate(np.flip(xf, axis), axis), axis) if reverse else np.logaddexp.accumulate(xf, axis)
    check(lambda a: lax.cumlogsumexp(a, axis, reverse), want.astype(dtype), x, tol=tol)


def test_cumlogsumexp_is_stable_with_infinities_and_large_gaps() -> None:
    x = np.array([-np.inf, -1000.0, 0.0, -np.inf, 50.0, np.inf], f32)
    want = np.logaddexp.accumulate(x.astype(np.float64)).astype(f32)
    assert np.isfinite(want[1])
    check(lambda a: lax.cumlogsumexp(a), want, x, tol=1e-6)
    with pytest.raises(TypeError, match=r"lax.cumlogsumexp: the operand must have a floating dtype, got int32"):
        lax.cumlogsumexp(np.zeros(3, i32))


def test_scan_errors() -> None:
    with pytest.raises(ValueError, match=r"lax.cumsum: axis 2 is out of range for an operand of shape \(3, 4\)"):
        lax.cumsum(np.zeros((3, 4), f32), 2)
    with pytest.raises(TypeError, match=r"cumsum: the operand must have a numeric .* dtype, got bool"):
        lax.cumsum(np.zeros(3, np.bool_))
    with pytest.raises(TypeError, match=r"cummin: the operand must have a bool, integer or floating dtype, got complex64"):
        pc.make_jaxpr(lambda a: lax.cummin(a))(np.zeros(3, np.complex64))
    with pytest.raises(TypeError, match=r"cumprod: the parameter reverse must be a bool, got 1"):
        rp.cumprod_p.bind(np.zeros(3, f32), axis=0, reverse=1)
    with pytest.raises(ValueError, match=r"cummax: axis 1 is out of range .*shape \(3,\)"):
        rp.cummax_p.bind(np.zeros(3, f32), axis=1, reverse=False)


# ---------------------------------------------------------------------------
# sort, sort_key_val, top_k


def _order_key(v: Any) -> tuple[int, Any]:
    if isinstance(v, (float, np.floating)) or type(v).__name__ == "bfloat16":
        f = float(v)
        return (1, 0.0) if math.isnan(f) else (0, f)
    return (0, v.item() if hasattr(v, "item") else v)


def sort_oracle(ops: Sequence[np.ndarray], dimension: int, num_keys: int) -> list[np.ndarray]:
    """Stable lexicographic sort of every 1-D lane, in plain Python."""
    moved = [np.moveaxis(o, dimension, -1) for o in ops]
    outs = [np.empty_like(m) for m in moved]
    for idx in itertools.product(*[range(s) for s in moved[0].shape[:-1]]):
        n = moved[0].shape[-1]
        order = sorted(range(n), key=lambda i: tuple(_order_key(moved[j][idx + (i,)]) for j in range(num_keys)))
        for m, o in zip(moved, outs):
            o[idx] = m[idx][order]
    return [np.moveaxis(o, -1, dimension) for o in outs]


def with_nans(shape: Sequence[int], dtype: Any) -> np.ndarray:
    x = rng.integers(-3, 4, size=shape).astype(dtype)  # ties
    flat = x.reshape(-1)
    flat[:: max(1, flat.size // 3)] = np.nan
    flat[1::5] = -0.0
    return x


@pytest.mark.parametrize("dtype", [f32, bf16, f16])
@pytest.mark.parametrize("shape,dimension", [((9,), -1), ((4, 6), 1), ((4, 6), 0), ((2, 3, 5), 1)])
def test_sort_one_float_operand_puts_nan_last(dtype: Any, shape: tuple[int, ...], dimension: int) -> None:
    x = with_nans(shape, dtype)
    (want,) = sort_oracle([x], dimension, 1)
    out = check(lambda a: lax.sort(a, dimension), want, x)
    assert [e.primitive.name for e in out.eqns] == ["sort"]


@pytest.mark.parametrize("dtype", [i32, np.bool_, u8])
def test_sort_integer_and_bool(dtype: Any) -> None:
    x = rand((3, 7), dtype)
    check(lambda a: lax.sort(a), np.sort(x, axis=-1, kind="stable"), x)


@pytest.mark.parametrize("num_keys", [1, 2, 3])
@pytest.mark.parametrize("dimension", [0, 1])
def test_sort_several_operands_lexicographically(num_keys: int, dimension: int) -> None:
    a = with_nans((5, 6), f32)
    b = rng.integers(0, 2, size=(5, 6)).astype(i32)
    c = with_nans((5, 6), f32)
    d = rand((5, 6), np.bool_)
    want = sort_oracle([a, b, c, d], dimension, num_keys)
    out = check(lambda *ops: lax.sort(ops, dimension, True, num_keys), want, a, b, c, d)
    assert out.eqns[0].params["num_keys"] == num_keys
    lists = lax.sort([a, b], dimension=dimension)
    assert isinstance(lists, tuple) and len(lists) == 2


def test_sort_key_val_and_top_k() -> None:
    keys = with_nans((3, 8), f32)
    vals = rand((3, 8), i32)
    want = sort_oracle([keys, vals], 1, 1)
    check(lambda k, v: lax.sort_key_val(k, v), want, keys, vals)

    x = rng.integers(0, 4, size=(2, 3, 7)).astype(f32)
    x[0, 0, 3] = np.nan
    k = 4
    want_v, want_i = np.empty((2, 3, k), f32), np.empty((2, 3, k), i32)
    for idx in itertools.product(range(2), range(3)):
        lane = x[idx]
        order = sorted(range(7), key=lambda i: (0 if np.isnan(lane[i]) else 1, -np.nan_to_num(lane[i]), i))[:k]
        want_v[idx], want_i[idx] = lane[order], order
    check(lambda a: lax.top_k(a, k), [want_v, want_i], x)


def test_sort_errors() -> None:
    x = np.zeros((2, 3), f32)
    with pytest.raises(ValueError, match=r"sort: all operands must have the same shape, operand 0 has shape \(2, 3\) but operand 1 has shape \(3,\)"):
        lax.sort((x, np.zeros(3, f32)))
    with pytest.raises(ValueError, match=r"lax.sort: dimension 2 is out of range for an operand of shape \(2, 3\)"):
        lax.sort(x, 2)
    with pytest.raises(ValueError, match=r"sort: num_keys must be between 1 and the number of operands \(2\), got 3"):
        lax.sort((x, x), num_keys=3)
    with pytest.raises(ValueError, match=r"sort: num_keys must be between 1"):
        pc.make_jaxpr(lambda a: rp.sort_p.bind(a, dimension=0, is_stable=True, num_keys=0))(x)
    with pytest.raises(ValueError, match=r"lax.sort: needs at least one operand"):
        lax.sort(())
    with pytest.raises(ValueError, match=r"lax.top_k: k=4 must be between 0 and the last dimension \(3\)"):
        lax.top_k(x, 4)
    with pytest.raises(ValueError, match=r"lax.top_k: the operand must have at least one dimension"):
        lax.top_k(np.float32(1), 1)
    with pytest.raises(TypeError, match=r"argument operand\[1\] of lax.sort: expected an array"):
        lax.sort((x, "b"))


# ---------------------------------------------------------------------------
# AD helpers


def test_stop_gradient_maps_over_pytrees_and_skips_integers() -> None:
    tree: dict[str, Any] = {"w": rand((2, 3), f32), "n": rand((2,), i32), "b": [rand((4,), bf16)]}

    def f(t: Any) -> Any:
        return lax.stop_gradient(t)

    out: Any = f(tree)
    np.testing.assert_array_equal(out["w"], tree["w"])
    np.testing.assert_array_equal(out["n"], tree["n"])
    np.testing.assert_array_equal(np.asarray(out["b"][0]), tree["b"][0])
    closed = pc.make_jaxpr(f)(tree)
    pc.check_jaxpr(closed)
    assert [e.primitive.name for e in closed.eqns] == ["stop_gradient", "stop_gradient"]
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, *pc.tree_util.tree_leaves(tree))
    for got, want in zip(staged, pc.tree_util.tree_leaves(tree)):
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(TypeError, match=r"argument x of lax.stop_gradient: expected an array"):
        lax.stop_gradient({"a": "text"})


@pytest.mark.parametrize("dtype", [f32, i32, bf16, np.bool_])
def test_add_any_and_zeros_like(dtype: Any) -> None:
    x, y = rand((2, 3), dtype), rand((2, 3), dtype)
    want = (x | y) if dtype == np.bool_ else (x + y).astype(dtype)
    check(lambda a, b: ad.add_any_p.bind(a, b), want, x, y)
    check(lambda a: ad.zeros_like_p.bind(a), np.zeros((2, 3), dtype), x)


def test_add_any_of_float0_and_its_errors() -> None:
    z = np.zeros((3,), dtypes.float0)
    out = ad.add_any_p.bind(z, z)
    assert out.dtype == dtypes.float0 and out.shape == (3,)
    with pytest.raises(TypeError, match=r"add_any: both operands must have the same dtype, got float32 \(f32\[3\]\) and int32 \(i32\[3\]\)"):
        ad.add_any_p.bind(np.zeros(3, f32), np.zeros(3, i32))
    with pytest.raises(ValueError, match=r"add_any: both operands must have the same shape, got \(3,\) and \(2,\)"):
        pc.make_jaxpr(lambda a, b: ad.add_any_p.bind(a, b))(np.zeros(3, f32), np.zeros(2, f32))
