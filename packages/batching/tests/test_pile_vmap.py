"""vmap over piles against NumPy on every element's true slice, eagerly and staged."""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest
from pile_checks import check_pile, ragged_pile

import plait_core as pc
import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, ragged_dim, vmap
from plait_core import lax, nn

LENGTHS = [5, 1, 3, 4]
P = pile_axis


def rng() -> np.random.Generator:
    return np.random.default_rng(0)


# ---------------------------------------------------------------------------
# Elementwise, broadcasting


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])
def test_float_elementwise(dtype: Any) -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,), dtype)
    tol = {"rtol": 1e-2, "atol": 1e-2} if dtype != np.float32 else {}
    check_pile(lambda x: pnp.sin(x) * 2 + pnp.exp(x) - x,
               lambda x: (np.sin(x) * 2 + np.exp(x) - x).astype(dtype), [p], P, P, **tol)  # fmt: skip


def test_int_and_bool_elementwise() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,), np.int32, lo=-5, hi=5)
    check_pile(lambda x: x * 3 - x // 2 + pnp.abs(x), lambda x: x * 3 - x // 2 + np.abs(x), [p], P, P)
    b, _ = ragged_pile(rng(), LENGTHS, (2,), np.bool_)
    check_pile(lambda x: ~x | (x ^ True), lambda x: ~x | (x ^ True), [b], P, P)
    check_pile(lambda x: x > 0, lambda x: x > 0, [p], P, P)


def test_broadcasting_against_static_shapes() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,))
    w = np.array([1.0, -2.0, 0.5], np.float32)
    row = np.array([[3.0, 4.0, 5.0]], np.float32)
    check_pile(lambda x, w: x * w + row - 1.5, lambda x, w: x * w + row - 1.5, [p, w], (P, None), P)
    v = rng().uniform(-1, 1, (len(LENGTHS), 3)).astype(np.float32)
    check_pile(lambda x, v: x + v, lambda x, v: x + v, [p, v], (P, 0), P)
    s = np.arange(len(LENGTHS), dtype=np.float32)
    check_pile(lambda x, s: x * s, lambda x, s: x * s, [p, s], (P, 0), P)


def test_two_piles_with_equal_lengths_combine() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,))
    q, _ = ragged_pile(np.random.default_rng(1), LENGTHS, (2,))
    # staged, the lengths are traced and cannot be compared (see test_pile_errors)
    check_pile(lambda x, y: x * y - y, lambda x, y: x * y - y, [p, q], P, P, staged=False)
    # the same lengths padded to different sizes
    wide = Pile.from_arrays(q.unpack(), pad_to=9)
    check_pile(lambda x, y: x + y, lambda x, y: x + y, [p, wide], P, P, staged=False)
    check_pile(lambda x, y: x + y, lambda x, y: x + y, [wide, p], P, P, staged=False)


def test_two_piles_sharing_one_lengths_value_combine_when_staged() -> None:
    p = ragged_pile(rng(), LENGTHS, (2,))[0].with_storage("padded")  # (the test passes its data as leaves)
    q, _ = ragged_pile(np.random.default_rng(1), LENGTHS, (2,))

    def fun(p: Pile, qdata: Any) -> Any:
        return vmap(lambda x, y: x * y, in_axes=P, out_axes=P)(p, Pile(qdata, p.lengths))

    closed = pc.make_jaxpr(fun)(p, q.data)
    pc.check_jaxpr(closed)
    data, lengths = pc.eval_jaxpr(closed.jaxpr, closed.consts, p.data, p.lengths, q.data)
    for i, (a, b) in enumerate(zip(p.unpack(), q.unpack())):
        np.testing.assert_allclose(np.asarray(Pile(data, lengths)[i]), np.asarray(a) * np.asarray(b), rtol=1e-6)


def test_where_and_clamp() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,))
    check_pile(lambda x: pnp.where(x > 0, x, -x * 2), lambda x: np.where(x > 0, x, -x * 2), [p], P, P)
    check_pile(lambda x: lax.clamp(-0.5, x, 0.5), lambda x: np.clip(x, -0.5, 0.5), [p], P, P)


# ---------------------------------------------------------------------------
# Reductions and cumulative operations


REDUCTION_CASES = [(n, d) for n in ["sum", "prod", "max", "min", "mean", "var"] for d in [np.float32, np.int32]
                   if (n, d) != ("var", np.int32)]  # var of integers is a float: the float32 case covers it


@pytest.mark.parametrize(("name", "dtype"), REDUCTION_CASES)
def test_reductions_over_the_ragged_axis(name: str, dtype: Any) -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,), dtype, lo=-3, hi=3)
    fun, ref = getattr(pnp, name), getattr(np, name)

    def oracle(x: np.ndarray) -> np.ndarray:
        out = ref(x, axis=0)
        return out.astype(np.float32) if name in ("mean", "var") else out.astype(dtype)

    check_pile(lambda x: fun(x, axis=0), oracle, [p], P, 0, rtol=1e-5, atol=1e-5)
    check_pile(lambda x: fun(x), lambda x: oracle(x.reshape(-1, 1))[0] if name in ("mean", "var")
               else ref(x).astype(dtype), [p], P, 0, rtol=1e-5, atol=1e-5)  # fmt: skip


def test_reductions_over_a_static_axis_keep_the_pile() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,))
    check_pile(lambda x: pnp.max(x, axis=1), lambda x: np.max(x, axis=1), [p], P, P)
    check_pile(lambda x: pnp.sum(x, axis=1, keepdims=True), lambda x: np.sum(x, axis=1, keepdims=True), [p], P, P)


def test_logical_and_arg_reductions() -> None:
    b, _ = ragged_pile(rng(), LENGTHS, (2,), np.bool_)
    check_pile(lambda x: pnp.all(x, axis=0), lambda x: np.all(x, axis=0), [b], P)
    check_pile(lambda x: pnp.any(x, axis=0), lambda x: np.any(x, axis=0), [b], P)
    p, _ = ragged_pile(rng(), LENGTHS, (2,), lo=-10, hi=-1)  # all negative: the padding (0) would win
    check_pile(lambda x: pnp.argmax(x, axis=0), lambda x: np.argmax(x, axis=0).astype(np.int32), [p], P)
    q, _ = ragged_pile(rng(), LENGTHS, (2,), lo=1, hi=10)
    check_pile(lambda x: pnp.argmin(x, axis=0), lambda x: np.argmin(x, axis=0).astype(np.int32), [q], P)


@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative(reverse: bool) -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,), lo=0.5, hi=1.5)

    def along(f: Any, x: np.ndarray, axis: int) -> np.ndarray:
        y = np.flip(x, axis) if reverse else x
        out = f(y, axis=axis)
        return (np.flip(out, axis) if reverse else out).astype(np.float32)

    for lf, nf in ((lax.cumsum, np.cumsum), (lax.cumprod, np.cumprod), (lax.cummax, np.maximum.accumulate),
                   (lax.cummin, np.minimum.accumulate)):  # fmt: skip
        check_pile(lambda x, lf=lf: lf(x, axis=0, reverse=reverse),
                   lambda x, nf=nf: along(nf, x, 0), [p], P, P, rtol=1e-5)  # fmt: skip
        check_pile(lambda x, lf=lf: lf(x, axis=1, reverse=reverse),
                   lambda x, nf=nf: along(nf, x, 1), [p], P, P, rtol=1e-5)  # fmt: skip


def test_sort_along_a_static_axis() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (4,))
    check_pile(lambda x: pnp.sort(x, axis=1), lambda x: np.sort(x, axis=1), [p], P, P)


# ---------------------------------------------------------------------------
# Contractions


def test_matmul_keeping_the_ragged_axis() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,))
    w = rng().uniform(-1, 1, (3, 4)).astype(np.float32)
    check_pile(lambda x, w: x @ w, lambda x, w: x @ w, [p, w], (P, None), P)
    ws = rng().uniform(-1, 1, (len(LENGTHS), 3, 4)).astype(np.float32)
    check_pile(lambda x, w: x @ w, lambda x, w: x @ w, [p, ws], (P, 0), P)
    check_pile(lambda x, w: w.T @ x.T, lambda x, w: w.T @ x.T, [p, w], (P, None), P)


def test_contracting_the_ragged_axis() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,))
    check_pile(lambda x: x.T @ x, lambda x: x.T @ x, [p], P, 0, rtol=1e-5)
    check_pile(lambda x: pnp.einsum("ni,nj->ij", x, x), lambda x: np.einsum("ni,nj->ij", x, x), [p], P, rtol=1e-5)
    q, _ = ragged_pile(np.random.default_rng(3), LENGTHS, (2,))
    check_pile(lambda x, y: pnp.einsum("ni,nj->ij", x, y), lambda x, y: np.einsum("ni,nj->ij", x, y), [p, q], P,
               rtol=1e-5, staged=False)  # fmt: skip
    # a vector dot product over the ragged axis
    check_pile(lambda x: pnp.dot(x[:, 0], x[:, 1]), lambda x: np.dot(x[:, 0], x[:, 1]), [p], P, rtol=1e-5)


def test_square_ragged_values() -> None:
    """An n x n value (attention scores): reduce either axis, contract with another ragged value."""
    p, _ = ragged_pile(rng(), LENGTHS, (3,))

    def fun(x: Any) -> Any:
        s = x @ x.T
        return s.sum(1), nn.softmax(s, axis=-1) @ x, s.max()

    def oracle(x: np.ndarray) -> tuple[np.ndarray, ...]:
        s = x @ x.T
        e = np.exp(s - s.max(-1, keepdims=True))
        return s.sum(1), (e / e.sum(-1, keepdims=True)) @ x, s.max()

    check_pile(fun, oracle, [p], P, (P, P, 0), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# Structure


def test_transpose_moves_the_ragged_axis() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,))
    out = check_pile(lambda x: x.T, lambda x: x.T, [p], P, P)
    assert out.ragged_axis == 1
    check_pile(lambda x: pnp.expand_dims(x, 0)[0], lambda x: x, [p], P, P)


@pytest.mark.parametrize(
    "index",
    [np.s_[1:], np.s_[:-1], np.s_[0], np.s_[:, 1], np.s_[1:, ::2], np.s_[0:1]],
    ids=["tail", "init", "first", "column", "tail-strided-static", "head"],
)
def test_slicing(index: Any) -> None:
    p, _ = ragged_pile(rng(), [5, 2, 3, 4], (3,))
    ragged_out = not isinstance(index, int) and index not in (np.s_[0:1],)
    check_pile(lambda x: x[index], lambda x: x[index], [p], P, P if ragged_out else 0)


def test_pad_concatenate_reshape() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (6,))
    check_pile(lambda x: pnp.pad(x, ((2, 0), (1, 1))), lambda x: np.pad(x, ((2, 0), (1, 1))), [p], P, P)
    check_pile(lambda x: pnp.concatenate([x, 2 * x], axis=1), lambda x: np.concatenate([x, 2 * x], 1), [p], P, P)
    check_pile(lambda x: x.reshape(x.shape[0], 2, 3).transpose(0, 2, 1).reshape(x.shape[0], 6),
               lambda x: x.reshape(-1, 2, 3).transpose(0, 2, 1).reshape(-1, 6), [p], P, P)  # fmt: skip
    check_pile(lambda x: x[:, None, :] * pnp.ones((1, 2, 1)), lambda x: x[:, None, :] * np.ones((1, 2, 1), np.float32),
               [p], P, P)  # fmt: skip


def test_reshapes_that_merge_or_split_the_ragged_axis() -> None:
    """Core's reshape rule: a prefix layout reshapes the padded data, any other
    gathers each entry from its logical place (piles used to refuse both)."""
    p, _ = ragged_pile(rng(), LENGTHS, (6,))
    check_pile(lambda x: x.reshape(-1), lambda x: x.reshape(-1), [p], P, P)
    check_pile(lambda x: x.T.reshape(-1), lambda x: x.T.reshape(-1), [p], P, P)
    check_pile(lambda x: x.reshape(-1).reshape(3, 2 * x.shape[0]).T,
               lambda x: x.reshape(-1).reshape(3, -1).T, [p], P, P)  # fmt: skip


def test_ragged_axis_one() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,), axis=1)
    assert p.ragged_axis == 1
    check_pile(lambda x: x.sum(1), lambda x: x.sum(1), [p], P)
    check_pile(lambda x: pnp.cumsum(x * 2, axis=1), lambda x: np.cumsum(x * 2, axis=1), [p], P, P)
    check_pile(lambda x: x @ x.T, lambda x: x @ x.T, [p], P, rtol=1e-5)


def test_softmax_and_logsumexp_along_the_ragged_axis() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,), lo=-30, hi=30)

    def np_softmax(x: np.ndarray, axis: int) -> np.ndarray:
        e = np.exp(x - x.max(axis, keepdims=True))
        return e / e.sum(axis, keepdims=True)

    check_pile(lambda x: nn.softmax(x, axis=0), lambda x: np_softmax(x, 0), [p], P, P)
    check_pile(lambda x: nn.logsumexp(x, axis=0),
               lambda x: (np.log(np.exp(x - x.max(0)).sum(0)) + x.max(0)).astype(np.float32), [p], P)  # fmt: skip


def test_the_ragged_size_as_a_value() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,))
    check_pile(lambda x: lax.dimension_as_value(x.shape[0]), lambda x: np.int32(x.shape[0]), [p], P)
    check_pile(lambda x: x.sum(0) / lax.dimension_as_value(x.shape[0] + 1),
               lambda x: (x.sum(0) / (x.shape[0] + 1)).astype(np.float32), [p], P)  # fmt: skip
    check_pile(lambda x: pnp.arange(x.shape[0]) * 2, lambda x: np.arange(x.shape[0], dtype=np.int32) * 2, [p], P, P)


# ---------------------------------------------------------------------------
# Sizes from batched integers, and piles of equal lengths


def test_sizes_from_batched_integers() -> None:
    n = np.array([3, 1, 4, 2], np.int32)
    check_pile(lambda n: pnp.arange(ragged_dim(n)), lambda n: np.arange(n, dtype=np.int32), [n], 0, P, staged=False)
    out = check_pile(lambda n: pnp.ones((7, ragged_dim(n))) * n, lambda n: np.full((7, n), n, np.float32), [n], 0, P,
                     staged=False)  # fmt: skip
    assert out.ragged_axis == 1
    # equal sizes are one ragged size: values made from them combine with a pile of those lengths
    p, _ = ragged_pile(rng(), list(n), (2,))
    check_pile(lambda x, n: x + pnp.arange(ragged_dim(n))[:, None], lambda x, n: x + np.arange(n, dtype=np.float32)[:, None], [p, n],
               (P, 0), P, staged=False)  # fmt: skip
    check_pile(lambda n: pnp.sum(pnp.arange(ragged_dim(n) + 1)), lambda n: np.int32(n * (n + 1) // 2), [n], 0,
               staged=False)  # fmt: skip


def test_arange_of_a_batched_integer() -> None:
    n = np.array([3, 1, 4], np.int32)
    check_pile(lambda n: pnp.arange(n), lambda n: np.arange(n, dtype=np.int32), [n], 0, P, staged=False)
    check_pile(lambda n: pnp.zeros((2, n)) + 1, lambda n: np.ones((2, n), np.float32), [n], 0, P, staged=False)


def test_pile_of_equal_lengths_from_a_static_result() -> None:
    x = rng().uniform(-1, 1, (3, 4, 2)).astype(np.float32)
    out = check_pile(lambda x: x * 2, lambda x: x * 2, [x], 0, P)
    np.testing.assert_array_equal(np.asarray(out.lengths), [4, 4, 4])
    # unbatched results are repeated
    check_pile(lambda x: pnp.ones(3), lambda x: np.ones(3, np.float32), [x], 0, P)


def test_pytree_outputs_and_mixed_out_axes() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,))
    check_pile(lambda x: {"a": x * 2, "b": (x.sum(), x[:, 0])},
               lambda x: {"a": x * 2, "b": (x.sum(), x[:, 0])}, [p], P, {"a": P, "b": (0, P)})  # fmt: skip
    check_pile(lambda x: (x, x + 1), lambda x: (x, x + 1), [p], P, P)


# ---------------------------------------------------------------------------
# Calls, control flow, indexing, nesting


def test_calls_are_inlined() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,))

    @pc.custom_jvp
    def f(x: Any) -> Any:
        return pnp.sin(x) * x.sum(0)

    f.defjvp(lambda primals, tangents: (f(primals[0]), tangents[0]))
    check_pile(f, lambda x: np.sin(x) * x.sum(0), [p], P, P)
    check_pile(pc.checkpoint(lambda x: pnp.cos(x).max(0)), lambda x: np.cos(x).max(0), [p], P)


def test_cond_selects_between_branches() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (2,))
    flags = np.array([True, False, True, False])
    check_pile(lambda x, c: lax.cond(c, lambda y: y.sum(0), lambda y: y.max(0), x),
               lambda x, c: x.sum(0) if c else x.max(0), [p, flags], (P, 0))  # fmt: skip
    check_pile(lambda x: lax.cond(True, lambda y: y * 2, lambda y: y, x), lambda x: x * 2, [p], P, P)


def test_gather_with_ragged_indices_and_full_windows() -> None:
    table = rng().uniform(-1, 1, (10, 3)).astype(np.float32)
    tokens, _ = ragged_pile(rng(), LENGTHS, (), np.int32, lo=0, hi=9)
    check_pile(lambda t: pnp.take(table, t, axis=0), lambda t: table[t], [tokens], P, P)
    p, _ = ragged_pile(rng(), LENGTHS, (4,))
    idx = np.array([3, 0], np.int32)
    check_pile(lambda x: x[:, idx], lambda x: x[:, idx], [p], P, P)
    check_pile(lambda x: lax.dynamic_slice(x, (0, 1), (x.shape[0], 2)), lambda x: x[:, 1:3], [p], P, P)


def test_vmap_over_a_static_axis_inside() -> None:
    p, _ = ragged_pile(rng(), LENGTHS, (3,))
    inner = vmap(lambda col: col * pnp.sum(col), in_axes=1, out_axes=1)
    check_pile(inner, lambda x: x * x.sum(0), [p], P, P)


def test_pile_inside_an_outer_vmap() -> None:
    p, elems = ragged_pile(rng(), LENGTHS, (3,))
    ws = rng().uniform(-1, 1, (2, 3)).astype(np.float32)

    def per_w(w: Any) -> Any:
        return vmap(lambda x: (x * w).sum(0), in_axes=P)(p)

    got = np.asarray(vmap(per_w)(ws))
    expected = np.stack([np.stack([(e * w).sum(0) for e in elems]) for w in ws])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_staged_pile_has_traced_lengths() -> None:
    p = ragged_pile(rng(), LENGTHS, (2,))[0].with_storage("padded")
    closed = pc.make_jaxpr(vmap(lambda x: x.sum(0), in_axes=P))(p)
    assert [str(a.str_short()) for a in closed.in_avals] == ["f32[4,5,2]", "i32[4]"]


def test_non_finite_padding_made_inside_does_not_leak() -> None:
    """The padding is zero on entry; 1/x makes it infinite, and no reduction,
    contraction or output sees it."""
    p, _ = ragged_pile(rng(), LENGTHS, (3,), lo=0.5, hi=2)
    check_pile(lambda x: (1 / x).sum(0), lambda x: (1 / x).sum(0), [p], P, rtol=1e-5)
    check_pile(lambda x: (1 / x).T @ (1 / x), lambda x: (1 / x).T @ (1 / x), [p], P, rtol=1e-5)
    check_pile(lambda x: nn.softmax(1 / x - 1, axis=0) * pnp.log(x), lambda x: np_softmax0(1 / x - 1) * np.log(x), [p],
               P, P, rtol=1e-5)  # fmt: skip
    check_pile(lambda x: pnp.min(1 / x, axis=0), lambda x: (1 / x).min(0), [p], P, rtol=1e-5)


def np_softmax0(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(0))
    return (e / e.sum(0)).astype(np.float32)
