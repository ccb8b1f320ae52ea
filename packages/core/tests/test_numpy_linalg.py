"""plait_core.numpy products and einsum against NumPy, eager and staged."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_numpy_util import BF16, F32, I32, check, check_staged, sample, tol

import plait_core
import plait_core.numpy as pnp
from plait_core import dtypes


@pytest.mark.parametrize("shapes", [((), (3,)), ((3,), (3,)), ((2, 3), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)),
                                    ((2, 5, 3), (4, 3, 6)), ((2, 3), ())], ids=str)
@pytest.mark.parametrize("dtypes_", [(F32, F32), (I32, I32), (I32, F32), (BF16, BF16), (np.dtype(bool),) * 2],
                         ids=str)
def test_dot(shapes: Any, dtypes_: Any) -> None:
    a = sample(shapes[0], dtypes_[0], seed=1)
    b = sample(shapes[1], dtypes_[1], seed=2)
    want = dtypes.result_type(a, b)
    expected = np.dot(a.astype(np.float64), b.astype(np.float64))
    if want == np.bool_:
        expected = expected != 0
    check(pnp.dot, a, b, expected=expected, dtype=want, **tol(BF16 if BF16 in dtypes_ else F32))


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                                    ((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4)), ((2, 1, 2, 3), (5, 3, 4)),
                                    ((4, 3), (2, 1, 3, 2))], ids=str)
@pytest.mark.parametrize("dtype", [F32, I32, BF16], ids=str)
def test_matmul(shapes: Any, dtype: Any) -> None:
    a = sample(shapes[0], dtype, seed=3)
    b = sample(shapes[1], dtype, seed=4)
    expected = np.matmul(a.astype(np.float64), b.astype(np.float64))
    check(pnp.matmul, a, b, expected=expected, dtype=dtype, **tol(dtype))
    check_staged(lambda x, y: x @ y, a, b, expected=expected, dtype=dtype, **tol(dtype))


def test_matmul_errors_and_options() -> None:
    with pytest.raises(ValueError, match=r"matmul: input operands must have at least 1 dimension, got shapes \(\) "
                                         r"and \(3,\)"):
        pnp.matmul(np.float32(1), np.ones(3))
    with pytest.raises(TypeError, match=r"matmul: shapes \(2, 3\) and \(4, 5\) are not aligned: 3 \(dim 1\) != 4 "
                                         r"\(dim 0\)"):
        pnp.matmul(np.ones((2, 3)), np.ones((4, 5)))
    with pytest.raises(ValueError, match=r"matmul: shapes \(2,\), \(3,\) cannot be broadcast together"):
        pnp.matmul(np.ones((2, 2, 3)), np.ones((3, 3, 4)))
    a = sample((2, 3), np.dtype(np.int8), seed=5)
    check(lambda x: pnp.matmul(x, x.T, preferred_element_type=np.int32), a, expected=a.astype(np.int32) @ a.T,
          dtype=I32)
    f = sample((2, 3), F32, seed=6)
    check(lambda x: pnp.dot(x, x.T, precision="highest"), f, expected=f @ f.T)


@pytest.mark.parametrize("axes,shapes", [
    (0, ((3, 4), (2,))), (1, ((3, 4), (4, 2))), (2, ((3, 4, 2), (4, 2, 5))), (((1,), (0,)), ((3, 4), (4, 5))),
    (((0, 2), (1, 0)), ((3, 4, 2), (2, 3, 5))), (([-1], [0]), ((3, 4), (4,))), ((2, 1), ((3, 4, 6), (5, 6))),
], ids=str)
def test_tensordot(axes: Any, shapes: Any) -> None:
    a = sample(shapes[0], F32, seed=7)
    b = sample(shapes[1], F32, seed=8)
    check(lambda x, y: pnp.tensordot(x, y, axes), a, b, expected=np.tensordot(a, b, axes), rtol=1e-5, atol=1e-5)


def test_tensordot_errors() -> None:
    with pytest.raises(ValueError, match="tensordot: axes=3 is invalid for operands of rank 2 and 2"):
        pnp.tensordot(np.ones((2, 2)), np.ones((2, 2)), 3)
    with pytest.raises(ValueError, match=r"tensordot: the axes \(\(0, 1\), \(0,\)\) name different numbers of axes"):
        pnp.tensordot(np.ones((2, 2)), np.ones((2, 2)), ((0, 1), (0,)))


@pytest.mark.parametrize("shapes", [((), (3,)), ((3,), (3,)), ((2, 3), (4, 3)), ((2, 2, 3), (3,))], ids=str)
def test_inner_outer_vdot(shapes: Any) -> None:
    a = sample(shapes[0], F32, seed=9)
    b = sample(shapes[1], F32, seed=10)
    check(pnp.inner, a, b, expected=np.inner(a, b), rtol=1e-5, atol=1e-5)
    check(pnp.outer, a, b, expected=np.outer(a, b))
    if a.size == b.size:
        check(pnp.vdot, a, b, expected=np.vdot(a, b), rtol=1e-5, atol=1e-5)
    check(pnp.vdot, b, b, expected=np.vdot(b, b), rtol=1e-5, atol=1e-5)


def test_vecdot() -> None:
    a = sample((2, 1, 3), F32, seed=11)
    b = sample((4, 3), F32, seed=12)
    check(pnp.vecdot, a, b, expected=np.sum(a * b, -1), rtol=1e-5, atol=1e-5)
    c = sample((3, 2), F32, seed=13)
    check(lambda x, y: pnp.vecdot(x, y, axis=0), c, c, expected=np.sum(c * c, 0), rtol=1e-5)


# ---------------------------------------------------------------------------
# einsum


EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)]),
    ("ij->ji", [(2, 3)]),
    ("ij->", [(2, 3)]),
    ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]),
    ("iij->j", [(3, 3, 2)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]),
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (5, 3, 4)]),
    ("...ij,jk", [(6, 5, 2, 3), (3, 4)]),
    ("i...,j", [(2, 3, 4), (5,)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ab,cd,bc->ad", [(2, 3), (4, 5), (3, 4)]),
    ("ab,ab,ab->a", [(2, 3), (2, 3), (2, 3)]),
    ("ba,ca", [(2, 3), (4, 3)]),
    ("Ab,bA", [(2, 3), (3, 2)]),
    ("i,i->i", [(1,), (3,)]),
    ("...i,...i->...", [(1, 3), (4, 3)]),
    ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("ij,ij,jk->ik", [(2, 3), (2, 3), (3, 4)]),
    (" i j , j k -> i k ", [(2, 3), (3, 4)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
@pytest.mark.parametrize("dtype", [F32, I32], ids=str)
def test_einsum(spec: str, shapes: Any, dtype: Any) -> None:
    ops = [sample(s, dtype, seed=i) for i, s in enumerate(shapes)]
    expected = np.einsum(spec, *ops)
    check(lambda *xs: pnp.einsum(spec, *xs), *ops, expected=expected, dtype=dtype, rtol=1e-5, atol=1e-5)


def test_einsum_lowers_to_dot_general() -> None:
    closed = plait_core.make_jaxpr(lambda a, b: pnp.einsum("ij,jk->ik", a, b))(np.ones((2, 3)), np.ones((3, 4)))
    assert str(closed).count("dot_general") == 1


def test_einsum_interleaved_promotion_and_bool() -> None:
    a, b = sample((2, 3), F32, seed=1), sample((3, 4), I32, seed=2)
    check(lambda x, y: pnp.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b, expected=np.einsum(a, [0, 1], b, [1, 2], [0, 2]),
          dtype=F32, rtol=1e-5, atol=1e-5)
    check(lambda x, y: pnp.einsum(x, [Ellipsis, 1], y, [1, 2]), a, b, expected=np.einsum(a, [Ellipsis, 1], b, [1, 2]),
          rtol=1e-5, atol=1e-5)
    p, q = sample((2, 3), bool, seed=3), sample((3, 4), bool, seed=4)
    check(lambda x, y: pnp.einsum("ij,jk->ik", x, y), p, q, expected=np.einsum("ij,jk->ik", p, q), dtype=bool)
    c = sample((2, 3), np.dtype(np.int8), seed=5)
    check(lambda x: pnp.einsum("ij,kj->ik", x, x, preferred_element_type=np.int32), c,
          expected=np.einsum("ij,kj->ik", c.astype(np.int32), c.astype(np.int32)), dtype=I32)
    path, text = pnp.einsum_path("ij,jk,kl", a, a.T, a)
    assert path == ["einsum_path", (0, 1), (0, 1)] and "left-to-right" in text


def test_einsum_errors() -> None:
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="einsum: 2 terms in the subscripts 'ij,jk' but 1 operands"):
        pnp.einsum("ij,jk", a)
    with pytest.raises(ValueError, match="einsum: the term 'ijk' has 3 labels but its operand has 2 dimensions"):
        pnp.einsum("ijk", a)
    with pytest.raises(ValueError, match="einsum: the output label 'k' does not appear in any input"):
        pnp.einsum("ij->k", a)
    with pytest.raises(ValueError, match="einsum: the output label 'i' appears more than once"):
        pnp.einsum("ij->ii", a)
    with pytest.raises(ValueError, match="einsum: the size of label 'j' in operand 1 \\(2\\) does not match"):
        pnp.einsum("ij,jk", a, np.ones((2, 2)))
    with pytest.raises(ValueError, match="einsum: invalid subscript '1' in 'i1'"):
        pnp.einsum("i1", a)
    # an output without '...' sums the broadcast dimensions out, as JAX (NumPy refuses it)
    b = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(np.asarray(pnp.einsum("...j->j", b)), b.sum((0, 1)))
    c = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    np.testing.assert_array_equal(np.asarray(pnp.einsum("...bc,...c->b", b, c)),
                                  np.einsum("abc,ac->b", b, c))
    with pytest.raises(ValueError, match="einsum: the repeated label 'i' has different sizes 2 and 3"):
        pnp.einsum("ii", a)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_einsum_random_specs(data: Any) -> None:
    letters = "abcd"
    sizes = {ch: data.draw(st.integers(1, 3)) for ch in letters}
    n_ops = data.draw(st.integers(1, 3))
    terms = ["".join(data.draw(st.lists(st.sampled_from(letters), min_size=0, max_size=3))) for _ in range(n_ops)]
    used = sorted(set("".join(terms)))
    out = "".join(data.draw(st.permutations(used))[:data.draw(st.integers(0, len(used)))])
    spec = ",".join(terms) + "->" + out
    ops = [sample(tuple(sizes[ch] for ch in t), F32, seed=i) for i, t in enumerate(terms)]
    check(lambda *xs: pnp.einsum(spec, *xs), *ops, expected=np.einsum(spec, *ops), rtol=1e-4, atol=1e-4)
