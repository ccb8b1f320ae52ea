"""Piles stored packed under ``jit`` and ``grad``: the values (the sum of the
lengths in rows, not ``batch x max length``) and the lengths are the leaves,
so ``jit`` traces the lengths and keeps the capacity and the max length
static; ``grad`` returns a packed pile of gradients; ``jit(vmap(...))`` gives
the padded pile's results."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait.numpy as pnp
from plait import Pile, grad, jit, make_jaxpr, nn, pile_axis, pile_layout, vmap

D, F = 8, 16
RNG = np.random.default_rng(7)
W1 = (RNG.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
W2 = (RNG.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)


def elements(lengths: list[int], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, D)).astype(np.float32) for n in lengths]


def layer(x: Any, w1: Any) -> Any:
    """Dense layers (on packed rows) around attention (on padded blocks)."""
    h = nn.gelu(x @ w1) @ W2
    y = x + nn.softmax(h @ x.T / np.sqrt(D), axis=-1) @ h
    return (y - pnp.mean(y, -1, keepdims=True)) / pnp.sqrt(pnp.var(y, -1, keepdims=True) + 1e-5)


def mapped(pile: Pile, w1: Any) -> Pile:
    out: Pile = vmap(layer, in_axes=(pile_axis, None), out_axes=pile_axis)(pile, w1)
    return out


def loss(w1: Any, pile: Pile) -> Any:
    return pnp.sum(vmap(lambda x: pnp.sum(pnp.tanh(layer(x, w1))), in_axes=pile_axis)(pile))


def test_jit_vmap_over_a_packed_pile_holds_the_sum_of_the_lengths() -> None:
    elems = elements([3, 100])
    # Lengths not static (the buckets modes would compile each batch of other lengths anew).
    padded = Pile.from_arrays(elems, storage="padded", static_lengths=False)
    packed = Pile.from_arrays(elems, storage="packed", static_lengths=False)
    assert np.shape(packed.values) == (103, D) and np.shape(padded.data) == (2, 100, D)
    f = jit(mapped)
    got, want = f(packed, W1), f(padded, W1)
    assert got.storage == "packed" and np.shape(got.values) == (103, D) and got.capacity == 103
    np.testing.assert_allclose(np.asarray(got.data), np.asarray(want.data), rtol=2e-5, atol=2e-5)
    for a, e in zip(got.unpack(), elems):
        np.testing.assert_allclose(np.asarray(a), np.asarray(layer(e, W1)), rtol=2e-5, atol=2e-5)
    # The lengths are traced, the capacity (103 rows) and the max length static.
    closed = make_jaxpr(mapped)(packed, W1)
    assert [str(a.str_short()) for a in closed.in_avals] == ["f32[103,8]", "i32[2]", "f32[8,16]"]
    assert [str(a.str_short()) for a in closed.out_avals] == ["f32[103,8]", "i32[2]"]
    # Another pile of the same capacity and max length reuses the compiled program.
    other_elems = elements([60, 43], seed=1)
    other = Pile.packed(np.concatenate(other_elems), [60, 43], max_length=100, static_lengths=False)
    out = f(other, W1)
    assert f._cache_size() == 2  # the padded pile's and the packed piles' programs
    for a, e in zip(out.unpack(), other_elems):
        np.testing.assert_allclose(np.asarray(a), np.asarray(layer(e, W1)), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("layout", ["packed", "auto", "padded"])
@pytest.mark.parametrize("jitted", [False, True])
def test_grad_of_a_packed_pile_is_a_packed_pile(layout: str, jitted: bool) -> None:
    elems = elements([3, 9, 1, 0, 6])
    padded, packed = Pile.from_arrays(elems, storage="padded"), Pile.from_arrays(elems, storage="packed")
    g = grad(loss, argnums=(0, 1), allow_int=True)
    if jitted:
        g = jit(g)
    with pile_layout(layout):
        gw, gp = g(W1, packed)
        want_w, want_p = g(W1, padded)
    assert isinstance(gp, Pile) and gp.storage == "packed" and np.shape(gp.values) == (19, D)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(want_w), rtol=1e-4, atol=1e-5)
    as_padded = Pile.packed(gp.values, packed.lengths, max_length=packed.max_length).data
    np.testing.assert_allclose(np.asarray(as_padded), np.asarray(want_p.data), rtol=1e-4, atol=1e-5)
    # The padded view of a gradient's pile needs the lengths (its own are float0).
    with pytest.raises(TypeError, match="lengths are float0"):
        _ = gp.data


def test_a_buffer_tail_of_nan_has_no_gradient() -> None:
    """Rows past the sum of the lengths may hold anything: under jit (traced
    lengths) vmap zeroes them, so the weights' gradient stays finite."""
    elems = elements([2, 5])
    values = np.concatenate([*elems, np.full((3, D), np.nan, np.float32)])
    pile = Pile.packed(values, [2, 5], max_length=5)
    want = grad(loss)(W1, Pile.from_arrays(elems, storage="padded"))
    for layout in ("packed", "auto", "padded"):  # (the dense layers run on the 10 rows when packed)
        with pile_layout(layout):
            got = jit(grad(loss))(W1, pile)
        assert np.isfinite(np.asarray(got)).all()
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_packing_inside_jit() -> None:
    """``with_storage`` and ``Pile.packed`` on traced values: the capacity is
    static (given, or ``B x max length`` for traced lengths)."""
    elems = elements([2, 4, 1])
    padded = Pile.from_arrays(elems, storage="padded")

    @jit
    def repack(p: Pile) -> Any:
        q = Pile(p.data, p.lengths).with_storage("packed", capacity=7)
        r = Pile(p.data, p.lengths).with_storage("packed")
        return q.values, r.values, q.data

    values, roomy, data = repack(padded)
    np.testing.assert_array_equal(np.asarray(values), np.concatenate(elems))
    assert np.shape(roomy) == (12, D) and not np.asarray(roomy)[7:].any()
    np.testing.assert_array_equal(np.asarray(data), np.asarray(padded.data))
    with pytest.raises(TypeError, match=r"max_length \(the padded size, static\) must be given"):
        jit(lambda v, n: Pile.packed(v, n).values)(np.ones((3, D), np.float32), np.array([1, 2], np.int32))


@pytest.mark.parametrize("jitted", [False, True])
def test_eager_grad_through_the_storage_conversions(jitted: bool) -> None:
    # Under eager grad the values are JVP tracers with concrete primals: the views
    # must stay traced (a NumPy view lost the derivative: zero gradients).
    elems = [np.full((2, 3), 1.0, np.float32), np.full((1, 3), 2.0, np.float32)]
    packed = Pile.from_arrays(elems, storage="packed", static_lengths=False)
    padded = Pile.from_arrays(elems, storage="padded", static_lengths=False)
    through_data = grad(lambda p: pnp.sum(p.data ** 2), allow_int=True)
    through_values = grad(lambda p: pnp.sum(p.with_storage("packed").values ** 2), allow_int=True)
    if jitted:
        through_data, through_values = jit(through_data), jit(through_values)
    np.testing.assert_array_equal(np.asarray(through_data(packed).values), 2 * np.concatenate(elems))
    want = np.zeros((2, 2, 3), np.float32)
    want[0], want[1, :1] = 2 * elems[0], 2 * elems[1]
    np.testing.assert_array_equal(np.asarray(through_values(padded).data), want)
