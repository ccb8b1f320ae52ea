"""dot_general, dot, batch_matmul and conv_general_dilated against NumPy
(einsum) and a direct loop convolution, eagerly and staged."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
import pytest

import plait_core as pc
from plait_core import dims, dtypes, lax
from plait_core.primitives import linalg as lp

f32, i32, bf16, f16 = np.float32, np.int32, ml_dtypes.bfloat16, np.float16
rng = np.random.default_rng(1)


def rand(shape: Sequence[int], dtype: Any) -> np.ndarray:
    d = np.dtype(dtype)
    if d == np.bool_:
        return rng.random(shape) < 0.5
    if dtypes.is_int(d):
        return rng.integers(-4, 5, size=shape).astype(d)
    if dtypes.is_complex(d):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(d)
    return rng.standard_normal(shape).astype(d)


def check(f: Callable[..., Any], want: np.ndarray, *args: Any, tol: float = 0.0) -> pc.ClosedJaxpr:
    """``f(*args)`` eagerly and through its type-checked jaxpr equals ``want``."""
    eager = f(*args)
    closed: pc.ClosedJaxpr = pc.make_jaxpr(f)(*args)
    pc.check_jaxpr(closed)
    (staged,) = pc.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    assert closed.out_avals[0].shape == want.shape and closed.out_avals[0].dtype == want.dtype
    for got in (np.asarray(eager), np.asarray(staged)):
        assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
        if tol:
            np.testing.assert_allclose(got.astype(np.complex128), want.astype(np.complex128), rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(got, want)
    return closed


def tol_for(dtype: Any) -> float:
    return {np.dtype(bf16): 5e-2, np.dtype(f16): 5e-3, np.dtype(f32): 1e-4, np.dtype(np.complex64): 1e-4}.get(
        np.dtype(dtype), 0.0
    )


# ---------------------------------------------------------------------------
# dot_general


def einsum_oracle(lhs: np.ndarray, rhs: np.ndarray, dnums: Any, out_dtype: Any) -> np.ndarray:
    """dot_general written as an einsum over letters (integers in int64, then wrapped)."""
    (lc, rc), (lb, rb) = dnums
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    lhs_l = [next(letters) for _ in range(lhs.ndim)]
    rhs_l = [next(letters) for _ in range(rhs.ndim)]
    for a, b in itertools.chain(zip(lc, rc), zip(lb, rb)):
        rhs_l[b] = lhs_l[a]
    out = [lhs_l[d] for d in lb]
    out += [lhs_l[d] for d in range(lhs.ndim) if d not in lc and d not in lb]
    out += [rhs_l[d] for d in range(rhs.ndim) if d not in rc and d not in rb]
    kind = np.int64 if (dtypes.is_int(lhs.dtype) or lhs.dtype == np.bool_) else np.complex128
    r = np.einsum(f"{''.join(lhs_l)},{''.join(rhs_l)}->{''.join(out)}", lhs.astype(kind), rhs.astype(kind))
    if np.dtype(out_dtype) == np.bool_:
        nonzero: np.ndarray = r != 0
        return nonzero
    if not dtypes.is_complex(np.dtype(out_dtype)):
        r = r.real if kind == np.complex128 else r
    result: np.ndarray = np.asarray(r).astype(out_dtype)
    return result


DOT_CASES = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),  # matmul
    ((4,), (4,), (((0,), (0,)), ((), ()))),  # inner product
    ((3,), (5,), (((), ()), ((), ()))),  # outer product
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),  # batched
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),  # batch dims not leading
    ((2, 3, 4, 5), (5, 4, 6), (((2, 3), (1, 0)), ((), ()))),  # two contracting dims
    ((0, 3), (3, 2), (((1,), (0,)), ((), ()))),  # empty free dim
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),  # empty contraction: zeros
]


@pytest.mark.parametrize("dtype", [f32, i32, bf16, f16, np.bool_, np.complex64, np.int8, np.uint8])
@pytest.mark.parametrize("lshape,rshape,dnums", DOT_CASES)
def test_dot_general_matches_einsum(lshape: Any, rshape: Any, dnums: Any, dtype: Any) -> None:
    lhs, rhs = rand(lshape, dtype), rand(rshape, dtype)
    want = einsum_oracle(lhs, rhs, dnums, dtype)
    closed = check(lambda a, b: lax.dot_general(a, b, dnums), want, lhs, rhs, tol=tol_for(dtype))
    assert closed.eqns[0].params["dimension_numbers"] == dnums


@pytest.mark.parametrize(
    "dtype,preferred",
    [(np.int8, i32), (np.bool_, i32), (i32, f32), (bf16, f32), (f16, f32), (f32, bf16), (np.uint8, np.int16)],
)
def test_dot_general_preferred_element_type(dtype: Any, preferred: Any) -> None:
    dnums = (((1,), (0,)), ((), ()))
    lhs, rhs = rand((3, 6), dtype), rand((6, 2), dtype)
    if dtype == np.int8:
        lhs, rhs = np.full((3, 6), 100, np.int8), np.full((6, 2), 100, np.int8)  # overflows int8, not int32
    want = einsum_oracle(lhs, rhs, dnums, preferred)
    closed = check(lambda a, b: lax.dot_general(a, b, dnums, preferred_element_type=preferred), want, lhs, rhs, tol=tol_for(preferred))
    assert closed.eqns[0].params["preferred_element_type"] == np.dtype(preferred)


def test_integer_dot_wraps_around_in_the_integer_type() -> None:
    lhs = np.full((1, 2), 2**16, i32)
    rhs = np.full((2, 1), 2**15, i32)
    want = einsum_oracle(lhs, rhs, (((1,), (0,)), ((), ())), i32)
    assert want[0, 0] == 0  # 2 * 2**31 wraps to 0
    check(lambda a, b: lax.dot(a, b), want, lhs, rhs)


@pytest.mark.parametrize("lshape,rshape", [((4,), (4,)), ((3, 4), (4,)), ((4,), (4, 2)), ((3, 4), (4, 2))])
def test_dot_ranks(lshape: Any, rshape: Any) -> None:
    lhs, rhs = rand(lshape, f32), rand(rshape, f32)
    check(lambda a, b: lax.dot(a, b, precision="highest"), np.dot(lhs, rhs).astype(f32), lhs, rhs, tol=1e-5)


def test_batch_matmul_and_weak_scalars() -> None:
    lhs, rhs = rand((2, 3, 4, 5), f32), rand((2, 3, 5, 2), f32)
    check(lambda a, b: lax.batch_matmul(a, b), np.matmul(lhs, rhs), lhs, rhs, tol=1e-5)
    x = rand((3,), f32)
    closed = check(lambda a: lax.dot_general(2.0, a, (((), ()), ((), ()))), (2 * x).astype(f32), x)
    assert not closed.out_avals[0].weak_type
    weak = pc.make_jaxpr(lambda: lax.dot_general(2.0, 3.0, (((), ()), ((), ()))))()
    assert weak.out_avals[0].weak_type


def test_dot_general_negative_dims_and_symbolic_free_dims() -> None:
    lhs, rhs = rand((3, 4), f32), rand((5, 4), f32)
    check(lambda a, b: lax.dot_general(a, b, (((-1,), (-1,)), ((), ()))), lhs @ rhs.T, lhs, rhs, tol=1e-5)
    n = dims.SymbolicDim.var("n")
    out = pc.eval_shape(lambda a, b: lax.dot(a, b), pc.ShapeDtypeStruct((n, 3), f32), pc.ShapeDtypeStruct((3, 4), f32))
    assert out.shape == (n, 4)
    out = pc.eval_shape(
        lambda a, b: lax.batch_matmul(a, b), pc.ShapeDtypeStruct((n, 2, 3), f32), pc.ShapeDtypeStruct((n, 3, 4), f32)
    )
    assert out.shape == (n, 2, 4)


def test_dot_general_errors() -> None:
    x, y = np.zeros((3, 4), f32), np.zeros((4, 5), f32)
    mm = (((1,), (0,)), ((), ()))
    with pytest.raises(TypeError, match=r"dot_general requires operands of the same dtype, got lhs float32 \(f32\[3,4\]\) and rhs int32 \(i32\[4,5\]\)"):
        lax.dot_general(x, y.astype(i32), mm)
    with pytest.raises(TypeError, match=r"dot_general requires operands of the same dtype, got lhs float32"):
        pc.make_jaxpr(lambda a, b: lax.dot(a, b))(x, y.astype(i32))
    with pytest.raises(TypeError, match=r"dot_general: contracting dimension 1 of lhs \(size 4\) and 0 of rhs \(size 3\) differ"):
        lax.dot_general(x, np.zeros((3, 5), f32), mm)
    with pytest.raises(TypeError, match=r"dot_general: batch dimension 0 of lhs \(size 2\) and 0 of rhs \(size 3\) differ"):
        lax.dot_general(np.zeros((2, 4), f32), np.zeros((3, 4), f32), (((1,), (1,)), ((0,), (0,))))
    with pytest.raises(ValueError, match=r"lax.dot_general: lhs contracting dimension 2 is out of range for an operand of shape \(3, 4\)"):
        lax.dot_general(x, y, (((2,), (0,)), ((), ())))
    with pytest.raises(TypeError, match=r"dot_general: rhs dimension 7 is out of range for an rhs of shape \(4, 5\)"):
        lp.dot_general_p.bind(x, y, dimension_numbers=(((1,), (7,)), ((), ())), precision=None, preferred_element_type=None)
    with pytest.raises(TypeError, match=r"dot_general: lhs dimensions \(1, 1\) repeat a dimension"):
        lax.dot_general(x, y, (((1,), (0,)), ((1,), (1,))))
    with pytest.raises(TypeError, match=r"dot_general: lhs and rhs must have as many contracting dimensions"):
        lax.dot_general(x, y, (((1, 0), (0,)), ((), ())))
    with pytest.raises(TypeError, match=r"lax.dot_general: dimension_numbers must be \(\(lhs_contracting, rhs_contracting\)"):
        lax.dot_general(x, y, ((1,), (0,)))
    with pytest.raises(ValueError, match=r"lax.dot: operands must have rank 1 or 2, got shapes \(2, 3, 4\) and \(4,\)"):
        lax.dot(np.zeros((2, 3, 4), f32), np.zeros(4, f32))
    with pytest.raises(ValueError, match=r"lax.batch_matmul: operands must have the same rank, at least 2, got shapes \(2, 3, 4\) and \(4, 5\)"):
        lax.batch_matmul(np.zeros((2, 3, 4), f32), y)
    with pytest.raises(TypeError, match=r"dot_general: preferred_element_type int32 is incompatible with operands of dtype float32"):
        lax.dot(x, y, preferred_element_type=i32)
    with pytest.raises(TypeError, match=r"dot_general: preferred_element_type int8 is narrower than the operands' dtype int32"):
        lax.dot(x.astype(i32), y.astype(i32), preferred_element_type=np.int8)
    with pytest.raises(ValueError, match=r"lax.dot: unknown precision 'ultra'"):
        lax.dot(x, y, precision="ultra")
    with pytest.raises(TypeError, match=r"argument lhs of lax.dot_general: expected an array.*list"):
        lax.dot_general([[1.0]], y, mm)


# ---------------------------------------------------------------------------
# conv_general_dilated against a direct loop


def conv_loop(
    lhs: np.ndarray,
    rhs: np.ndarray,
    strides: Sequence[int],
    padding: Sequence[tuple[int, int]],
    lhs_dil: Sequence[int],
    rhs_dil: Sequence[int],
    groups: int,
    bgroups: int,
) -> np.ndarray:
    """XLA convolution of (N, C, *S) with (O, I, *K), one output element at a time
    (in float64 / int64)."""
    n = lhs.shape[0]
    o, i = rhs.shape[:2]
    spatial, window = lhs.shape[2:], rhs.shape[2:]
    nsp = len(spatial)
    kind = np.int64 if (dtypes.is_int(lhs.dtype) or lhs.dtype == np.bool_) else np.float64
    x, w = lhs.astype(kind), rhs.astype(kind)
    out_sp = []
    for s, k, ld, rd, (lo, hi), st in zip(spatial, window, lhs_dil, rhs_dil, padding, strides):
        padded = (s - 1) * ld + 1 + lo + hi if s else lo + hi
        kd = (k - 1) * rd + 1 if k else 0
        out_sp.append(max(0, (padded - kd) // st + 1) if padded >= kd else 0)
    out = np.zeros((n // bgroups, o, *out_sp), kind)
    for nb, of in itertools.product(range(n // bgroups), range(o)):
        g = of // (o // groups)  # feature group of this output feature
        b = of // (o // bgroups)  # batch group of this output feature
        batch = b * (n // bgroups) + nb
        for pos in itertools.product(*[range(d) for d in out_sp]):
            total = kind(0)
            for ci, tap in itertools.product(range(i), itertools.product(*[range(k) for k in window])):
                src = []
                for dim in range(nsp):
                    q = pos[dim] * strides[dim] + tap[dim] * rhs_dil[dim] - padding[dim][0]
                    if q < 0 or q % lhs_dil[dim] or q // lhs_dil[dim] >= spatial[dim]:
                        break
                    src.append(q // lhs_dil[dim])
                else:
                    total += x[(batch, g * i + ci, *src)] * w[(of, ci, *tap)]
            out[(nb, of, *pos)] = total
    return out


CONV_CASES = [
    # (lhs shape NC..., rhs shape OI..., strides, padding, lhs_dil, rhs_dil, groups, batch groups)
    ((2, 3, 9), (4, 3, 3), (1,), ((0, 0),), (1,), (1,), 1, 1),
    ((2, 3, 9), (4, 3, 3), (2,), ((1, 2),), (1,), (1,), 1, 1),
    ((1, 2, 8), (3, 2, 2), (3,), ((2, -1),), (1,), (2,), 1, 1),
    ((2, 2, 5), (2, 2, 3), (1,), ((2, 2),), (2,), (1,), 1, 1),
    ((1, 4, 7), (6, 2, 3), (1,), ((1, 1),), (1,), (1,), 2, 1),
    ((4, 3, 6), (4, 3, 2), (2,), ((0, 1),), (1,), (1,), 1, 2),
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 1),
    ((1, 2, 7, 6), (3, 2, 3, 3), (2, 1), ((1, 1), (2, 0)), (1, 1), (1, 2), 1, 1),
    ((2, 2, 4, 3), (2, 2, 2, 2), (1, 2), ((1, 2), (0, 1)), (2, 3), (1, 1), 1, 1),
    ((1, 6, 5, 5), (6, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (2, 1), 3, 1),
    ((6, 2, 5, 4), (6, 2, 2, 3), (2, 1), ((0, 0), (1, -1)), (1, 1), (1, 1), 1, 3),
    ((2, 2, 3, 3), (2, 2, 5, 5), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 1),  # window larger: empty
]


@pytest.mark.parametrize("dtype", [f32, i32, bf16])
@pytest.mark.parametrize("case", CONV_CASES)
def test_conv_general_dilated_matches_loop(case: Any, dtype: Any) -> None:
    lshape, rshape, strides, padding, ldil, rdil, groups, bgroups = case
    lhs, rhs = rand(lshape, dtype), rand(rshape, dtype)
    want = conv_loop(lhs, rhs, strides, padding, ldil, rdil, groups, bgroups).astype(dtype)

    def f(a: Any, b: Any) -> Any:
        return lax.conv_general_dilated(
            a, b, strides, padding, ldil, rdil, feature_group_count=groups, batch_group_count=bgroups
        )

    check(f, want, lhs, rhs, tol=tol_for(dtype))


@pytest.mark.parametrize(
    "specs",
    [("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC"), ("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("CHWN", "WHIO", "HNWC")],
)
def test_conv_dimension_number_strings(specs: tuple[str, str, str]) -> None:
    lhs_spec, rhs_spec, out_spec = specs
    nsp = len(lhs_spec) - 2
    # The convolution's spatial dims are ordered as in the kernel spec.
    sp = "".join(ch for ch in rhs_spec if ch not in "OI")
    lhs_c, rhs_c = rand((2, 4, 7, 6)[: nsp + 2], f32), rand((6, 2, 3, 2)[: nsp + 2], f32)
    strides, padding, rdil = (2, 1)[:nsp], ((1, 0), (0, 2))[:nsp], (1, 2)[:nsp]
    want_c = conv_loop(lhs_c, rhs_c, strides, padding, (1,) * nsp, rdil, 2, 1).astype(f32)
    lhs = np.transpose(lhs_c, [("NC" + sp).index(ch) for ch in lhs_spec])
    rhs = np.transpose(rhs_c, [("OI" + sp).index(ch) for ch in rhs_spec])
    want = np.transpose(want_c, [("NC" + sp).index(ch) for ch in out_spec])
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, specs)
    assert dn == lax.ConvDimensionNumbers(
        tuple(lhs_spec.index(ch) for ch in "NC" + sp),
        tuple(rhs_spec.index(ch) for ch in "OI" + sp),
        tuple(out_spec.index(ch) for ch in "NC" + sp),
    )

    def f(a: Any, b: Any) -> Any:
        return lax.conv_general_dilated(a, b, strides, padding, None, rdil, specs, feature_group_count=2)

    closed = check(f, want, lhs, rhs, tol=1e-4)
    assert closed.eqns[0].params["dimension_numbers"] == dn


def _same_pads(size: int, window: int, stride: int, lower: bool) -> tuple[int, int]:
    out = -(-size // stride)
    total = max((out - 1) * stride + window - size, 0)
    small, large = total // 2, total - total // 2
    return (large, small) if lower else (small, large)


@pytest.mark.parametrize("padding", ["VALID", "SAME", "SAME_LOWER", "same"])
@pytest.mark.parametrize("strides", [(1, 1), (2, 3)])
def test_conv_string_padding_and_conv_wrapper(padding: str, strides: tuple[int, int]) -> None:
    lhs, rhs = rand((2, 3, 7, 8), f32), rand((4, 3, 3, 4), f32)
    rdil = (1, 2)
    window = [(k - 1) * d + 1 for k, d in zip(rhs.shape[2:], rdil)]
    if padding.upper() == "VALID":
        pads = [(0, 0), (0, 0)]
    else:
        pads = [_same_pads(s, w, st, padding.upper() == "SAME_LOWER") for s, w, st in zip(lhs.shape[2:], window, strides)]
    want = conv_loop(lhs, rhs, strides, pads, (1, 1), rdil, 1, 1).astype(f32)
    if padding.upper() in ("SAME", "SAME_LOWER"):
        assert want.shape[2:] == tuple(-(-s // st) for s, st in zip(lhs.shape[2:], strides))
    check(lambda a, b: lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=rdil), want, lhs, rhs, tol=1e-4)
    plain = conv_loop(lhs, rhs, strides, [_same_pads(s, k, st, False) for s, k, st in zip(lhs.shape[2:], rhs.shape[2:], strides)], (1, 1), (1, 1), 1, 1)
    check(lambda a, b: lax.conv(a, b, strides, "SAME"), plain.astype(f32), lhs, rhs, tol=1e-4)


def test_conv_preferred_element_type_and_symbolic_batch() -> None:
    lhs, rhs = rand((2, 3, 6), np.int8), rand((2, 3, 2), np.int8)
    want = conv_loop(lhs, rhs, (1,), ((0, 0),), (1,), (1,), 1, 1).astype(i32)
    check(lambda a, b: lax.conv_general_dilated(a, b, (1,), "VALID", preferred_element_type=i32), want, lhs, rhs)
    n = dims.SymbolicDim.var("n")
    out = pc.eval_shape(
        lambda a, b: lax.conv_general_dilated(a, b, (1,), ((1, 1),)),
        pc.ShapeDtypeStruct((n, 2, 7), f32),
        pc.ShapeDtypeStruct((3, 2, 3), f32),
    )
    assert out.shape == (n, 3, 7)


def test_conv_errors() -> None:
    x, k = np.zeros((2, 4, 9), f32), np.zeros((6, 2, 3), f32)
    name = "conv_general_dilated"
    with pytest.raises(ValueError, match=rf"{name}: the lhs feature dimension \(4\) must equal the rhs input feature dimension \(2\) times feature_group_count \(1\)"):
        lax.conv_general_dilated(x, k, (1,), "VALID")
    with pytest.raises(ValueError, match=rf"{name}: the rhs output feature dimension \(6\) must be a multiple of 4"):
        lax.conv_general_dilated(np.zeros((2, 8, 9), f32), k, (1,), "VALID", feature_group_count=4)
    with pytest.raises(ValueError, match=rf"{name}: the lhs batch dimension \(2\) must be a multiple of 3"):
        lax.conv_general_dilated(np.zeros((2, 2, 9), f32), k, (1,), "VALID", batch_group_count=3)
    with pytest.raises(ValueError, match=rf"{name}: feature_group_count \(2\) and batch_group_count \(2\) cannot both exceed 1"):
        lax.conv_general_dilated(x, k, (1,), "VALID", feature_group_count=2, batch_group_count=2)
    with pytest.raises(ValueError, match=rf"{name}: lhs and rhs must have the same rank, at least 2, got shapes \(2, 4, 9\) and \(6, 2\)"):
        lp.conv_general_dilated_p.bind(
            x, np.zeros((6, 2), f32), window_strides=(1,), padding=((0, 0),), lhs_dilation=(1,), rhs_dilation=(1,),
            dimension_numbers=lp.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2)),
            feature_group_count=1, batch_group_count=1, precision=None, preferred_element_type=None,
        )
    with pytest.raises(ValueError, match=rf"lax.{name}: window_strides must have one entry per spatial dimension \(1\), got \(1, 1\)"):
        lax.conv_general_dilated(x, k, (1, 1), "VALID", feature_group_count=2)
    with pytest.raises(ValueError, match=rf"{name}: every entry of window_strides must be at least 1, got \(0,\)"):
        pc.make_jaxpr(lambda a, b: lax.conv_general_dilated(a, b, (0,), "VALID", feature_group_count=2))(x, k)
    with pytest.raises(ValueError, match=rf"lax.{name}: string padding 'SAME' cannot be combined with lhs_dilation \(2,\)"):
        lax.conv_general_dilated(x, k, (1,), "SAME", lhs_dilation=(2,), feature_group_count=2)
    with pytest.raises(ValueError, match=r"lax: unknown padding 'FULL'"):
        lax.conv_general_dilated(x, k, (1,), "FULL", feature_group_count=2)
    with pytest.raises(ValueError, match=rf"lax.{name}: padding must be a string or one \(low, high\) pair per spatial dimension"):
        lax.conv_general_dilated(x, k, (1,), [(0, 0), (0, 0)], feature_group_count=2)
    with pytest.raises(TypeError, match=rf"{name} requires operands of the same dtype, got lhs float32 .* and rhs int32"):
        lax.conv_general_dilated(x, k.astype(i32), (1,), "VALID", feature_group_count=2)
    with pytest.raises(ValueError, match=r"lax.conv_dimension_numbers: 'NCX' must name N and C exactly once|different spatial"):
        lax.conv_general_dilated(x, k, (1,), "VALID", dimension_numbers=("NCX", "OIH", "NCH"))
    with pytest.raises(ValueError, match=r"lax.conv_dimension_numbers: 'NNH' must name N and C exactly once"):
        lax.conv_general_dilated(x, k, (1,), "VALID", dimension_numbers=("NNH", "OIH", "NCH"))
    with pytest.raises(ValueError, match=r"lax.conv_dimension_numbers: the spec 'NCHW' has 4 letters but the operands have rank 3"):
        lax.conv_general_dilated(x, k, (1,), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    with pytest.raises(ValueError, match=rf"{name}: dimension_numbers.lhs_spec must be a permutation of range\(3\)"):
        lax.conv_general_dilated(x, k, (1,), ((0, 0),), dimension_numbers=((0, 1, 1), (0, 1, 2), (0, 1, 2)))
    with pytest.raises(TypeError, match=rf"argument rhs of lax.{name}: expected an array"):
        lax.conv_general_dilated(x, "k", (1,), "VALID")
