"""Structural operations along a ragged axis inside ``vmap`` over piles:
``rev``, ``sort`` (and ``argsort``, ``top_k``), ``pad`` at the end or inside,
``concatenate`` and ``conv_general_dilated``.

The oracle is NumPy on each element's true slice (:func:`pile_checks.check_pile`,
eagerly, staged with traced lengths, and with NaN in the padding), over
length sets with a length of 1 and lengths equal to the padded size.  What
stays unsupported is an error whose message says why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from pile_checks import check_pile

import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, vmap
from plait_core import lax

P = pile_axis
f32, i32 = np.float32, np.int32

#: (lengths, padded size or None for the largest length)
LENGTHS = [([3, 1, 5], None), ([4, 4], None), ([1], None), ([2, 6, 1], 8)]
LENGTH_IDS = ["3-1-5", "equal", "one", "pad_to"]


def make(lengths: Sequence[int], tail: tuple[int, ...] = (2,), dtype: Any = f32, axis: int = 0,
         pad_to: int | None = None, seed: int = 0) -> Pile:  # fmt: skip
    """A pile of random elements (integers in [-3, 3] stored as ``dtype``, so ties happen)."""
    rng = np.random.default_rng(seed)
    elems = []
    for n in lengths:
        shape = (*tail[:axis], n, *tail[axis:])
        e = rng.integers(-3, 4, shape).astype(dtype)
        if np.dtype(dtype).kind == "f":
            e = e + rng.uniform(-0.4, 0.4, shape).astype(dtype) * (rng.random(shape) < 0.5)
        elems.append(e)
    return Pile.from_arrays(elems, ragged_axis=axis, pad_to=pad_to)


def on(fun: Callable[..., Any], *args: Any, in_axes: Any = P) -> Any:
    return vmap(fun, in_axes=in_axes, out_axes=P)(*args)


# ---------------------------------------------------------------------------
# rev


@pytest.mark.parametrize(("lengths", "pad_to"), LENGTHS, ids=LENGTH_IDS)
@pytest.mark.parametrize("dtype", [f32, i32])
@pytest.mark.parametrize(
    ("fun", "oracle", "axis"),
    [
        (lambda x: x[::-1], lambda x: x[::-1], 0),
        (lambda x: pnp.flip(x, 0) * 2, lambda x: np.flip(x, 0) * 2, 0),
        (lambda x: pnp.flip(x), lambda x: np.flip(x), 0),
        (lambda x: x[:, ::-1], lambda x: x[:, ::-1], 1),
        (lambda x: pnp.cumsum(x[::-1], axis=0)[::-1], lambda x: np.cumsum(x[::-1], axis=0)[::-1], 0),
    ],
    ids=["slice", "flip0", "flip-all", "axis1", "reverse-cumsum"],
)
def test_rev(lengths: list[int], pad_to: int | None, dtype: Any, fun: Any, oracle: Any, axis: int) -> None:
    check_pile(fun, lambda x: oracle(x).astype(dtype), [make(lengths, (3,), dtype, axis, pad_to)], P, P)


def test_rev_of_two_ragged_axes() -> None:
    # scores n x n reversed along both axes, then reduced along one of them
    check_pile(lambda x: (x @ x.T)[::-1, ::-1].sum(1) + x[::-1, 0], lambda x: (x @ x.T)[::-1, ::-1].sum(1) + x[::-1, 0],
               [make([3, 1, 4])], P, P)  # fmt: skip


# ---------------------------------------------------------------------------
# sort, argsort, top_k


def _with_specials(p: Pile) -> Pile:
    """Float elements with NaN, infinities and signed zeros among their true entries."""
    data = np.array(p.data)
    lengths = np.asarray(p.lengths)
    for i, n in enumerate(lengths):
        for j, v in zip(range(int(n)), [np.nan, -0.0, np.inf, 0.0, -np.inf, np.nan]):
            if (i + j) % 2 == 0:
                data[i, j, 0] = v
    return Pile(data, p.lengths, p.ragged_axis)


def _stable_sort(x: np.ndarray) -> np.ndarray:
    return np.sort(x, axis=0, kind="stable")


@pytest.mark.parametrize(("lengths", "pad_to"), LENGTHS, ids=LENGTH_IDS)
@pytest.mark.parametrize("dtype", [f32, i32])
def test_sort(lengths: list[int], pad_to: int | None, dtype: Any) -> None:
    p = make(lengths, (2,), dtype, 0, pad_to)
    if dtype == f32:
        p = _with_specials(p)
    # x - 9 makes the padding (-9) smaller than every true entry
    check_pile(lambda x: pnp.sort(x - 9, axis=0), lambda x: _stable_sort(x - 9), [p], P, P)
    check_pile(lambda x: lax.sort(x, 0, is_stable=False), _stable_sort, [p], P, P)
    check_pile(lambda x: pnp.argsort(x, axis=0), lambda x: np.argsort(x, axis=0, kind="stable").astype(i32), [p], P, P)


def _descending_argsort(x: np.ndarray) -> np.ndarray:
    # plait's descending argsort keeps equal entries in their original order
    n = x.shape[0]
    return (n - 1 - np.argsort(x[::-1], axis=0, kind="stable")[::-1]).astype(i32)


@pytest.mark.parametrize(("lengths", "pad_to"), LENGTHS[:2], ids=LENGTH_IDS[:2])
def test_descending_sort_and_argsort(lengths: list[int], pad_to: int | None) -> None:
    p = _with_specials(make(lengths, (2,), f32, 0, pad_to))
    check_pile(lambda x: pnp.sort(x, axis=0, descending=True), lambda x: _stable_sort(x)[::-1], [p], P, P)
    check_pile(lambda x: pnp.argsort(x, axis=0, descending=True), _descending_argsort, [p], P, P)


@pytest.mark.parametrize(("lengths", "pad_to"), LENGTHS, ids=LENGTH_IDS)
@pytest.mark.parametrize("num_keys", [1, 2])
def test_sort_several_operands(lengths: list[int], pad_to: int | None, num_keys: int) -> None:
    # one pile (so the lengths are one value when staged): two integer keys with ties, and float values
    p = make(lengths, (3,), i32, 0, pad_to)

    def fun(x: Any) -> Any:
        return lax.sort((x[:, 0], x[:, 1], x[:, 2].astype(f32) / 4), 0, num_keys=num_keys)

    def oracle(x: np.ndarray) -> tuple[np.ndarray, ...]:
        a, b, v = x[:, 0], x[:, 1], x[:, 2].astype(f32) / 4
        order = np.lexsort((b, a)) if num_keys == 2 else np.argsort(a, kind="stable")
        return a[order], b[order], v[order]

    check_pile(fun, oracle, [p], P, P)


def test_sort_along_a_static_axis() -> None:
    check_pile(lambda x: pnp.sort(x, axis=1), lambda x: np.sort(x, axis=1), [make([3, 1, 4], (5,), f32)], P, P)


def _np_top_k(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, order, -1), order.astype(np.int32)


def test_top_k_along_the_ragged_axis() -> None:
    check_pile(lambda x: lax.top_k(x.T, 2), lambda x: _np_top_k(x.T, 2), [make([3, 5, 2])], P, 0)


def test_top_k_along_a_static_axis_of_a_ragged_value() -> None:
    check_pile(lambda x: lax.top_k(x, 1), lambda x: _np_top_k(x, 1), [make([3, 5])], P, P)


# ---------------------------------------------------------------------------
# pad


def np_pad(x: np.ndarray, value: Any, config: Sequence[tuple[int, int, int]]) -> np.ndarray:
    """``lax.pad`` in NumPy: interior padding, then low/high (negative crops)."""
    out = x
    for ax, (lo, hi, interior) in enumerate(config):
        n = out.shape[ax]
        if interior and n > 1:
            shape = list(out.shape)
            shape[ax] = n + (n - 1) * interior
            grown = np.full(shape, value, x.dtype)
            index: list[Any] = [slice(None)] * x.ndim
            index[ax] = slice(None, None, interior + 1)
            grown[tuple(index)] = out
            out = grown
        widths = [(0, 0)] * x.ndim
        widths[ax] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, widths, constant_values=value)
        index = [slice(None)] * x.ndim
        index[ax] = slice(max(-lo, 0), out.shape[ax] - max(-hi, 0))
        out = out[tuple(index)]
    return out


PAD_CONFIGS = [(0, 2, 0), (1, 2, 0), (0, 0, 1), (2, 1, 2), (-1, 2, 0), (1, -1, 0), (0, -1, 1), (-1, 0, 3)]


@pytest.mark.parametrize(("lengths", "pad_to"), LENGTHS, ids=LENGTH_IDS)
@pytest.mark.parametrize("dtype", [f32, i32])
@pytest.mark.parametrize("config", PAD_CONFIGS, ids=[str(c) for c in PAD_CONFIGS])
def test_pad(lengths: list[int], pad_to: int | None, dtype: Any, config: tuple[int, int, int]) -> None:
    full = (config, (0, 0, 0))
    value = dtype(7)
    check_pile(lambda x: lax.pad(x, value, full), lambda x: np_pad(x, value, full), [make(lengths, (2,), dtype, 0, pad_to)], P, P)


def test_pad_along_axis_1_with_a_padding_value_per_element() -> None:
    p = make([3, 1, 4], (2,), f32, axis=1)
    values = np.array([5.0, -1.0, 2.5], f32)
    config = ((1, 0, 0), (1, 3, 1))
    check_pile(lambda x, v: lax.pad(x, v, config), lambda x, v: np_pad(x, v, config), [p, values], (P, 0), P)


def test_numpy_pad_at_the_end() -> None:
    check_pile(lambda x: pnp.pad(x, ((2, 3), (0, 0)), constant_values=-1.0),
               lambda x: np.pad(x, ((2, 3), (0, 0)), constant_values=-1.0), [make([3, 1, 5])], P, P)  # fmt: skip


def test_pad_refusals() -> None:
    empty = Pile.from_arrays([np.ones((0, 2), f32), np.ones((3, 2), f32)])
    with pytest.raises(ValueError, match=r"vmap over piles: pad along the ragged axis 0: for an element of true size 0 the result has size 0, but the result's ragged size 2\*_pile\d+ - 1 gives -1 \(ragged sizes are polynomials in the lengths, taken to be at least 1\) .*_pile\d+ with lengths \[0 3\]"):
        on(lambda x: lax.pad(x, f32(0), ((0, 0, 1), (0, 0, 0))), empty)
    with pytest.raises(ValueError, match=r"pad along the ragged axis 0: for an element of true size 0 the result is rejected \(a negative size\), but the result's ragged size _pile\d+ - 1 gives -1"):
        on(lambda x: lax.pad(x, f32(0), ((-1, 0, 0), (0, 0, 0))), empty)


# ---------------------------------------------------------------------------
# concatenate

CLS = np.full((1, 2), -9.0, f32)


@pytest.mark.parametrize(("lengths", "pad_to"), LENGTHS, ids=LENGTH_IDS)
@pytest.mark.parametrize("dtype", [f32, i32])
@pytest.mark.parametrize(
    "pieces",
    [
        lambda x, c: [x, c], lambda x, c: [c, x], lambda x, c: [x, x], lambda x, c: [x, c, x, c],
        lambda x, c: [x, x[1:], c],
    ],
    ids=["cls-last", "cls-first", "twice", "mixed", "shifted"],
)
def test_concatenate(lengths: list[int], pad_to: int | None, dtype: Any, pieces: Any) -> None:
    cls = CLS.astype(dtype)
    check_pile(lambda x: pnp.concatenate(pieces(x, cls)) * 2, lambda x: np.concatenate(pieces(x, cls)) * 2,
               [make(lengths, (2,), dtype, 0, pad_to)], P, P)  # fmt: skip


def test_concatenate_with_a_piece_per_element_along_axis_1() -> None:
    p = make([3, 1, 4], (2,), f32, axis=1)
    extra = np.arange(12, dtype=f32).reshape(3, 2, 2)
    check_pile(lambda x, e: pnp.concatenate([x, e, x], axis=1), lambda x, e: np.concatenate([x, e, x], axis=1),
               [p, extra], (P, 0), P)  # fmt: skip


@pytest.mark.parametrize(("a_lengths", "b_lengths"), [([3, 1, 5], [2, 4, 1]), ([1, 1], [6, 6]), ([2], [2])])
def test_concatenate_piles_of_different_lengths(a_lengths: list[int], b_lengths: list[int]) -> None:
    a, b = make(a_lengths, seed=1), make(b_lengths, seed=2)

    # [x, y] and [y, x] have one size (also when staged, with traced lengths)
    def fun(x: Any, y: Any) -> Any:
        z = pnp.concatenate([x, y])
        return z * 2 + pnp.sum(z, axis=0) - z.shape[0] + pnp.concatenate([y, x])[::-1]

    def oracle(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        z = np.concatenate([x, y])
        return (z * 2 + z.sum(0) - z.shape[0] + np.concatenate([y, x])[::-1]).astype(f32)

    check_pile(fun, oracle, [a, b], P, P)


def test_concatenated_piles_combine_with_a_pile_of_the_summed_lengths() -> None:
    # the concatenation's padded size is 3 + 4, so is the third pile's
    a, b = make([3, 1], seed=1), make([2, 4], seed=2)
    c = make([5, 5], seed=3, pad_to=7)
    check_pile(lambda x, y, z: pnp.concatenate([x, y]) + z, lambda x, y, z: np.concatenate([x, y]) + z,
               [a, b, c], P, P, staged=False)  # fmt: skip


# ---------------------------------------------------------------------------
# conv_general_dilated


def _dilate(x: np.ndarray, axis: int, d: int) -> np.ndarray:
    n = x.shape[axis]
    if d == 1 or n == 0:
        return x
    shape = list(x.shape)
    shape[axis] = (n - 1) * d + 1
    out = np.zeros(shape, x.dtype)
    index: list[Any] = [slice(None)] * x.ndim
    index[axis] = slice(None, None, d)
    out[tuple(index)] = x
    return out


def np_conv(lhs: np.ndarray, rhs: np.ndarray, strides: Sequence[int], padding: Sequence[tuple[int, int]],
            lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]) -> np.ndarray:  # fmt: skip
    """XLA's convolution in NumPy, (N, C, spatial...) and (O, I, window...) layouts."""
    wide = np.int64 if lhs.dtype.kind == "i" else np.float64
    x, w = lhs.astype(wide), rhs.astype(wide)
    nsp = x.ndim - 2
    for i in range(nsp):
        x = _dilate(x, 2 + i, lhs_dilation[i])
        w = _dilate(w, 2 + i, rhs_dilation[i])
        lo, hi = padding[i]
        widths = [(0, 0)] * x.ndim
        widths[2 + i] = (max(lo, 0), max(hi, 0))
        x = np.pad(x, widths)
        index: list[Any] = [slice(None)] * x.ndim
        index[2 + i] = slice(max(-lo, 0), x.shape[2 + i] - max(-hi, 0))
        x = x[tuple(index)]
    windows = sliding_window_view(x, w.shape[2:], axis=tuple(range(2, 2 + nsp)))
    windows = windows[(slice(None), slice(None), *(slice(None, None, s) for s in strides))]
    sp, ks = "hwd"[:nsp], "klm"[:nsp]
    out = np.einsum(f"nc{sp}{ks},oc{ks}->no{sp}", windows, w)
    return out.astype(lhs.dtype)


CONVS = [  # (kernel size, strides, padding, lhs dilation, rhs dilation)
    (3, (1,), "VALID", (1,), (1,)),
    (3, (1,), "SAME", (1,), (1,)),
    (2, (1,), ((2, 1),), (1,), (1,)),
    (2, (1,), ((1, 1),), (1,), (2,)),
    (3, (1,), ((2, 2),), (2,), (1,)),
    (3, (2,), ((1, 1),), (2,), (1,)),  # a stride that divides the span exactly
    (1, (1,), ((-1, 0),), (1,), (1,)),
]


def _pairs(padding: Any, k: int, rdil: int) -> tuple[tuple[int, int], ...]:
    if padding == "VALID":
        return ((0, 0),)
    if padding == "SAME":
        total = (k - 1) * rdil
        return ((total // 2, total - total // 2),)
    return tuple(padding)


@pytest.mark.parametrize(("lengths", "pad_to"), [([3, 4, 6], None), ([5, 5], None), ([3], 7)], ids=["3-4-6", "equal", "pad_to"])
@pytest.mark.parametrize("conv", CONVS, ids=[f"k{c[0]}-s{c[1][0]}-{c[2]}-ld{c[3][0]}-rd{c[4][0]}" for c in CONVS])
def test_conv_1d(lengths: list[int], pad_to: int | None, conv: Any) -> None:
    k, strides, padding, ldil, rdil = conv
    w = np.random.default_rng(5).integers(-2, 3, (4, 2, k)).astype(f32)

    # x + 1 makes the padding nonzero: the rule must not read it
    def fun(x: Any) -> Any:  # x: (n, channels)
        out = lax.conv_general_dilated((x + 1).T[None], w, strides, padding, lhs_dilation=ldil, rhs_dilation=rdil)
        return out[0].T

    def oracle(x: np.ndarray) -> np.ndarray:
        return np_conv((x + 1).T[None], w, strides, _pairs(padding, k, rdil[0]), ldil, rdil)[0].T

    check_pile(fun, oracle, [make(lengths, (2,), f32, 0, pad_to)], P, P)


def test_conv_1d_int32() -> None:
    w = np.random.default_rng(6).integers(-2, 3, (3, 2, 2)).astype(i32)
    check_pile(lambda x: lax.conv_general_dilated((x - 3).T[None], w, (1,), "VALID")[0].T,
               lambda x: np_conv((x - 3).T[None], w, (1,), ((0, 0),), (1,), (1,))[0].T, [make([2, 5, 3], (2,), i32)], P, P)  # fmt: skip


@pytest.mark.parametrize("padding", ["VALID", "SAME"])
def test_conv_2d_over_a_ragged_height(padding: str) -> None:
    p = make([3, 5, 4], (4, 2), f32)  # elements (height, width 4, channels 2)
    w = np.random.default_rng(7).uniform(-1, 1, (3, 2, 2, 3)).astype(f32)  # HWIO
    dn = ("NHWC", "HWIO", "NHWC")

    def oracle(x: np.ndarray) -> np.ndarray:
        pads = ((0, 0), (0, 0)) if padding == "VALID" else ((1, 1), (0, 1))
        out = np_conv(np.exp(x).transpose(2, 0, 1)[None], w.transpose(3, 2, 0, 1), (1, 1), pads, (1, 1), (1, 1))
        return out[0].transpose(1, 2, 0)

    check_pile(lambda x: lax.conv_general_dilated(pnp.exp(x)[None], w, (1, 1), padding, dimension_numbers=dn)[0], oracle, [p], P, P,
               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_conv_with_a_ragged_batch_and_a_ragged_contracted_feature() -> None:
    p = make([3, 1, 4], (5,), f32)
    w = np.random.default_rng(8).uniform(-1, 1, (2, 1, 2)).astype(f32)
    # the ragged axis as the convolution's batch: (n, 1, 5) -> (n, 2, 4)
    check_pile(lambda x: lax.conv_general_dilated(x[:, None], w, (1,), "VALID"),
               lambda x: np_conv(x[:, None], w, (1,), ((0, 0),), (1,), (1,)), [p], P, P)  # fmt: skip
    # the ragged axis as the (contracted) feature: lhs (1, n, 5), rhs (1, n, 2) made from the element; with
    # true entries away from 0, 1 / x is infinite in the padding only, which must not reach a result
    q = Pile.from_arrays([e + 10 for e in p.unpack()])

    def feature(x: Any) -> Any:
        return lax.conv_general_dilated(x[None], 1 / x[None, :, :2], (1,), "VALID")[0, 0][None]

    def feature_oracle(x: np.ndarray) -> np.ndarray:
        return np_conv(x[None], 1 / x[None, :, :2], (1,), ((0, 0),), (1,), (1,))[0, 0][None]

    check_pile(feature, feature_oracle, [q], P, 0)


W3 = np.ones((2, 2, 3), f32)


@pytest.mark.parametrize(
    ("fun", "message"),
    [
        (lambda x: lax.conv_general_dilated(x.T[None], W3, (2,), "VALID"),
         r"conv_general_dilated has stride 2 along the ragged spatial dimension 2 of its lhs: the output length floor\(\(_pile\d+ - 3\) / 2\) \+ 1 is not a polynomial in the length, which a ragged size must be; along a ragged axis only stride 1 \(or a stride that divides that span exactly\) is supported"),
        (lambda x: lax.conv_general_dilated(x.T[None], np.ones((2, 2, 6), f32), (1,), "VALID"),
         r"conv_general_dilated along the ragged spatial dimension 2 of its lhs: for an element of true size 3 the result has size 0, but the result's ragged size _pile\d+ - 5 gives -2"),
        (lambda x: lax.conv_general_dilated(np.ones((1, 2, 7), f32), x.T[None], (1,), "VALID"),
         r"conv_general_dilated has a kernel of ragged size along its spatial dimension 2; kernels must have static spatial sizes"),
        (lambda x: lax.conv_general_dilated(x[None], np.ones((2, 1, 1), f32), (1,), "VALID", feature_group_count=2),
         r"conv_general_dilated splits a ragged feature dimension into feature_group_count=2 groups, which is not supported"),
        (lambda x: lax.conv_general_dilated(x[:, None], np.ones((2, 1, 1), f32), (1,), "VALID", batch_group_count=2),
         r"conv_general_dilated splits a ragged dimension into batch_group_count=2 groups, which is not supported"),
    ],
    ids=["stride", "shorter-than-window", "ragged-kernel", "feature-groups", "batch-groups"],
)
def test_conv_refusals(fun: Callable[..., Any], message: str) -> None:
    with pytest.raises(ValueError, match=r"vmap over piles: " + message + r".*_pile\d+ with lengths \[3 5\]"):
        vmap(fun, in_axes=P, out_axes=0)(make([3, 5]))


def test_conv_window_longer_than_the_padded_size_under_tracing() -> None:
    import plait_core as pc

    with pytest.raises(ValueError, match=r"conv_general_dilated has a window of size 3 along the ragged spatial dimension 2 of its lhs, longer than the padded size 1 there \(with padding \(0, 0\)\).*_pile\d+ with traced lengths"):
        pc.make_jaxpr(vmap(lambda x: lax.conv_general_dilated(x.T[None], W3, (1,), "VALID")[0].T, in_axes=P, out_axes=P))(make([1, 1]))


# ---------------------------------------------------------------------------
# Nesting: inside an outer vmap, around an inner one, inside calls


def test_structural_ops_on_a_pile_inside_an_outer_vmap() -> None:
    p = make([3, 1, 5], (2,), f32)
    ws = np.array([[1.0, -2.0], [0.5, 3.0]], f32)
    k = np.ones((1, 2, 2), f32)

    def per_w(w: Any) -> Any:
        def fun(x: Any) -> Any:
            y = pnp.concatenate([x * w, x[::-1]])
            y = lax.pad(pnp.sort(y, axis=0), f32(1), ((0, 2, 1), (0, 0, 0)))
            return lax.conv_general_dilated(y.T[None], k, (1,), "VALID")[0, 0]

        return vmap(fun, in_axes=P, out_axes=P)(p).data

    def oracle(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        y = np_pad(np.sort(np.concatenate([x * w, x[::-1]]), axis=0), f32(1), ((0, 2, 1), (0, 0, 0)))
        return np_conv(y.T[None], k, (1,), ((0, 0),), (1,), (1,))[0, 0]

    got = np.asarray(vmap(per_w)(ws))
    for j, w in enumerate(ws):
        for i, x in enumerate(p.unpack()):
            expected = oracle(np.asarray(x), w)
            np.testing.assert_allclose(got[j, i, : len(expected)], expected, rtol=1e-5, atol=1e-5)
            assert not got[j, i, len(expected) :].any()


def test_an_inner_vmap_over_a_static_axis() -> None:
    inner = vmap(lambda col: pnp.sort(col[::-1]) + pnp.concatenate([col, col[:1]])[1:], in_axes=1, out_axes=1)
    check_pile(inner, lambda x: np.sort(x[::-1], axis=0) + np.concatenate([x, x[:1]])[1:], [make([3, 1, 4], (3,))], P, P)


def test_inside_calls() -> None:
    import plait_core as pc

    a, b = make([3, 1, 4], seed=1), make([2, 2, 1], seed=2)
    check_pile(pc.checkpoint(lambda x: pnp.concatenate([x, x[::-1]])), lambda x: np.concatenate([x, x[::-1]]), [a], P, P)
    check_pile(pc.checkpoint(lambda x, y: pnp.concatenate([x, y])), lambda x, y: np.concatenate([x, y]), [a, b], P, P)


def test_a_shrinking_size_is_empty_for_short_elements() -> None:
    # x[1:] has the ragged size n - 1: an empty element stays empty (as a
    # NumPy slice), it does not get the length -1.
    pile = Pile.from_arrays([np.zeros(0, f32), np.arange(3, dtype=f32), np.ones(1, f32)])
    out = vmap(lambda x: x[1:], in_axes=P, out_axes=P)(pile)
    np.testing.assert_array_equal(np.asarray(out.lengths), [0, 2, 0])
    np.testing.assert_array_equal(np.asarray(out[1]), [1.0, 2.0])
    # As a value, a size is its polynomial (x.shape[0] - 3 may be negative, as
    # with concrete shapes); for elements of length >= 1 that is the true size.
    nonempty = Pile.from_arrays([np.arange(3, dtype=f32), np.ones(1, f32)])
    sizes = vmap(lambda x: pnp.asarray(x[1:].shape[0]), in_axes=P)(nonempty)
    np.testing.assert_array_equal(np.asarray(sizes), [2, 0])
    offsets = vmap(lambda x: pnp.asarray(x.shape[0] - 3), in_axes=P)(pile)
    np.testing.assert_array_equal(np.asarray(offsets), [-3, 0, -2])
    sums = vmap(lambda x: x[1:].sum(), in_axes=P)(pile)
    np.testing.assert_array_equal(np.asarray(sums), [0.0, 3.0, 0.0])


def test_a_size_that_shrinks_below_the_padded_size_is_empty() -> None:
    # n - 3 over lengths (2, 1): padded to 2, the size would be -1; every element is
    # empty there (it was a negative shape, refused deep inside NumPy or XLA).
    pile = Pile.from_arrays([np.ones(2, f32), np.ones(1, f32)])
    counts = vmap(lambda x: pnp.sum(pnp.arange(x.shape[0] - 3) + 1.0), in_axes=P)(pile)
    np.testing.assert_array_equal(np.asarray(counts), [0.0, 0.0])
    longer = Pile.from_arrays([np.ones(5, f32), np.ones(1, f32), np.ones(4, f32)])
    counts = vmap(lambda x: pnp.sum(pnp.arange(x.shape[0] - 3) + 1.0), in_axes=P)(longer)
    np.testing.assert_array_equal(np.asarray(counts), [3.0, 0.0, 1.0])
