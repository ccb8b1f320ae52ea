"""Piles (``vmap`` over ragged batches) composed with ``jit`` and ``grad``.

The oracle is NumPy (or plait without piles) on each element's true slice.
Under ``jit`` the lengths are traced values and the data has a static padded
size, so piles of one padded size share a compilation.  Under ``grad`` the
gradient with respect to the padded data is zero in the padding.  The
programs: a transformer layer, and an RNN that scans each sequence of a
ragged batch up to its length (trained with SGD at the end).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import Pile, grad, nn, pile_axis, vmap
from plait_batching import ragged_dim
from plait_dispatch import jit, stats

P = pile_axis
D, H, F = 8, 2, 16
RNG = np.random.default_rng(0)


def params() -> dict[str, np.ndarray]:
    p = {k: (RNG.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32) for k in ("wq", "wk", "wv", "wo")}
    p["w1"] = (RNG.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
    p["w2"] = (RNG.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)
    return p


PARAMS = params()


def layer(x: Any, p: dict[str, Any]) -> Any:
    n = x.shape[0]

    def heads(y: Any) -> Any:
        return y.reshape(n, H, D // H).transpose(1, 0, 2)

    q, k, v = heads(x @ p["wq"]), heads(x @ p["wk"]), heads(x @ p["wv"])
    att = nn.softmax(pnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D // H), axis=-1)
    o = pnp.einsum("hqk,hkd->hqd", att, v).transpose(1, 0, 2).reshape(n, D)
    x = x + o @ p["wo"]
    x = (x - pnp.mean(x, -1, keepdims=True)) / pnp.sqrt(pnp.var(x, -1, keepdims=True) + 1e-5)
    return x + nn.gelu(x @ p["w1"]) @ p["w2"]


def elements(lengths: list[int]) -> list[np.ndarray]:
    return [RNG.standard_normal((n, D)).astype(np.float32) for n in lengths]


def close(a: Any, b: Any, tol: float = 2e-5) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


PILED = vmap(layer, in_axes=(P, None), out_axes=P)


def test_jit_of_vmap_over_a_pile() -> None:
    xs = elements([5, 9, 2, 7])
    pile = Pile.from_arrays(xs)
    out = jit(PILED)(pile, PARAMS)
    assert isinstance(out, Pile)
    np.testing.assert_array_equal(np.asarray(out.lengths), [5, 9, 2, 7])
    for got, x in zip(out.unpack(), xs):
        close(got, layer(x, PARAMS))


def test_piles_of_one_padded_size_share_a_compilation() -> None:
    f = jit(PILED)
    # Not with static lengths, which are part of the pile's structure: jit compiles per set of them.
    f(Pile.from_arrays(elements([3, 6, 4]), pad_to=8, static_lengths=False), PARAMS)
    before = stats.snapshot()
    xs = elements([8, 1, 5])
    out = f(Pile.from_arrays(xs, pad_to=8, static_lengths=False), PARAMS)
    after = stats.snapshot()
    assert after["traces"] == before["traces"] and after["compiles"] == before["compiles"]
    for got, x in zip(out.unpack(), xs):
        close(got, layer(x, PARAMS))


def test_pile_built_inside_jit() -> None:
    xs = elements([4, 2])
    pile = Pile.from_arrays(xs)

    @jit
    def f(data: Any, lengths: Any) -> Any:
        return vmap(lambda x: pnp.cumsum(x, axis=0) * 2, in_axes=P, out_axes=P)(Pile(data, lengths))

    out = f(pile.data, pile.lengths)
    for got, x in zip(out.unpack(), xs):
        close(got, np.cumsum(x, axis=0) * 2)


def _loss(data: Any, lengths: Any, p: dict[str, Any]) -> Any:
    out = PILED(Pile(data, lengths), p)
    return pnp.sum(pnp.tanh(out.data))


@pytest.mark.parametrize("jitted", [False, True])
def test_grad_with_respect_to_padded_data(jitted: bool) -> None:
    xs = elements([5, 1, 3])
    pile = Pile.from_arrays(xs)
    g = grad(_loss)
    g = jit(g) if jitted else g
    got = np.asarray(g(pile.data, pile.lengths, PARAMS))
    for i, x in enumerate(xs):
        n = x.shape[0]
        assert not got[i, n:].any(), "the gradient must be zero in the padding"
        close(got[i, :n], grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS))))(x), 1e-4)


def test_grad_with_respect_to_shared_parameters() -> None:
    xs = elements([4, 6, 2])
    pile = Pile.from_arrays(xs)
    got = jit(grad(_loss, argnums=2))(pile.data, pile.lengths, PARAMS)
    for k in PARAMS:
        expected = sum(np.asarray(grad(lambda p, x=x: pnp.sum(pnp.tanh(layer(x, p))))(PARAMS)[k]) for x in xs)
        close(got[k], expected, 1e-4)


def test_grad_through_a_nan_padded_pile() -> None:
    xs = elements([3, 5])
    pile = Pile.from_arrays(xs)
    data = np.array(pile.data)
    data[0, 3:] = np.nan
    got = np.asarray(grad(_loss)(data, pile.lengths, PARAMS))
    assert np.isfinite(got).all() and not got[0, 3:].any()
    close(got[1], grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS))))(xs[1]), 1e-4)


def test_vmap_of_grad_over_a_pile() -> None:
    xs = elements([4, 7, 1])
    pile = Pile.from_arrays(xs)
    per = jit(vmap(grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS)))), in_axes=P, out_axes=P))(pile)
    for got, x in zip(per.unpack(), xs):
        close(got, grad(lambda x: pnp.sum(pnp.tanh(layer(x, PARAMS))))(x), 1e-4)


def test_traced_sizes_under_jit_are_an_error() -> None:
    f = jit(vmap(lambda n: pnp.ones(ragged_dim(n)), out_axes=P))
    with pytest.raises(plait.ConcretizationTypeError, match="a size taken from a batched integer makes a ragged value"):
        f(np.array([1, 2], np.int32))



# ---------------------------------------------------------------------------
# An RNN over a ragged batch: lax.scan over each sequence's true length

HID, FEAT = 8, 3


def rnn_params() -> dict[str, np.ndarray]:
    return {
        "wh": (RNG.standard_normal((HID, HID)) / np.sqrt(HID)).astype(np.float32),
        "wx": (RNG.standard_normal((FEAT, HID)) / np.sqrt(FEAT)).astype(np.float32),
        "b": np.zeros(HID, np.float32),
        "wo": (RNG.standard_normal(HID) / np.sqrt(HID)).astype(np.float32),
    }


RNN_PARAMS = rnn_params()


def rnn(xs: Any, p: dict[str, Any], reverse: bool = False) -> tuple[Any, Any]:
    """An Elman RNN over ``xs`` (``(n, FEAT)``): the last state and every state."""

    def cell(h: Any, x: Any) -> tuple[Any, Any]:
        h = pnp.tanh(h @ p["wh"] + x @ p["wx"] + p["b"])
        return h, h

    return plait.lax.scan(cell, pnp.zeros(HID, np.float32), xs, reverse=reverse)


def numpy_rnn(xs: np.ndarray, p: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    h, states = np.zeros(HID), []
    for x in xs:
        h = np.tanh(h @ p["wh"] + x @ p["wx"] + p["b"])
        states.append(h)
    return h, np.array(states)


def seq_loss(xs: Any, p: dict[str, Any], reverse: bool = False) -> Any:
    last, states = rnn(xs, p, reverse)
    return pnp.sum(last * p["wo"]) ** 2 + pnp.mean(pnp.tanh(states) ** 2)


def pile_loss(data: Any, lengths: Any, p: dict[str, Any], reverse: bool = False) -> Any:
    per = vmap(lambda xs, p: seq_loss(xs, p, reverse), in_axes=(P, None))(Pile(data, lengths), p)
    return pnp.sum(per)


def sequences(lengths: list[int]) -> list[np.ndarray]:
    return [RNG.standard_normal((n, FEAT)).astype(np.float32) for n in lengths]


def test_jit_of_an_rnn_over_a_pile() -> None:
    f = jit(vmap(rnn, in_axes=(P, None), out_axes=(0, P)))
    # Not with static lengths, which are part of the pile's structure: jit compiles per set of them.
    f(Pile.from_arrays(sequences([2, 6, 3]), pad_to=8, static_lengths=False), RNN_PARAMS)
    before = stats.snapshot()
    xs = sequences([8, 1, 5])
    last, states = f(Pile.from_arrays(xs, pad_to=8, static_lengths=False), RNN_PARAMS)
    after = stats.snapshot()
    assert after["traces"] == before["traces"] and after["compiles"] == before["compiles"]
    np.testing.assert_array_equal(np.asarray(states.lengths), [8, 1, 5])
    for i, x in enumerate(xs):
        h, hs = numpy_rnn(x, RNN_PARAMS)
        close(np.asarray(last)[i], h, 1e-5)
        close(states.unpack()[i], hs, 1e-5)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_grad_of_an_rnn_loss_over_a_pile(jitted: bool, reverse: bool) -> None:
    xs = sequences([4, 1, 6])
    pile = Pile.from_arrays(xs)
    g = grad(lambda d, n, p: pile_loss(d, n, p, reverse), argnums=(0, 2))
    g = jit(g) if jitted else g
    g_data, g_params = g(pile.data, pile.lengths, RNN_PARAMS)
    g_data = np.asarray(g_data)
    per_seq = jit(grad(lambda x, p: seq_loss(x, p, reverse), argnums=(0, 1)))
    expected = {k: np.zeros_like(v) for k, v in RNN_PARAMS.items()}
    for i, x in enumerate(xs):
        gx, gp = per_seq(x, RNN_PARAMS)
        n = x.shape[0]
        assert not g_data[i, n:].any(), "the gradient must be zero in the padding"
        close(g_data[i, :n], gx, 1e-4)
        for k in expected:
            expected[k] += np.asarray(gp[k])
    for k in expected:
        close(g_params[k], expected[k], 1e-4)


def test_training_an_rnn_on_a_ragged_batch() -> None:
    """Regress the mean of the first feature of each sequence from the RNN's
    last state: SGD on the ragged batch follows SGD on the sum of the
    sequences' losses step for step, and the loss falls."""
    xs = sequences([7, 2, 5, 1, 9, 4])
    pile = Pile.from_arrays(xs, pad_to=10)
    targets = np.array([x[:, 0].mean() for x in xs], np.float32)

    def loss(p: dict[str, Any], data: Any, lengths: Any, y: Any) -> Any:
        out = vmap(lambda s, p: pnp.sum(rnn(s, p)[0] * p["wo"]), in_axes=(P, None))(Pile(data, lengths), p)
        return pnp.mean((out - y) ** 2)

    def one(p: dict[str, Any], x: Any, y: Any) -> Any:
        return (pnp.sum(rnn(x, p)[0] * p["wo"]) - y) ** 2 / len(xs)

    step = jit(plait.value_and_grad(loss))
    one_grad = jit(grad(one))
    p_pile, p_seq, lr, losses = dict(RNN_PARAMS), dict(RNN_PARAMS), 0.5, []
    for _ in range(8):
        value, g = step(p_pile, pile.data, pile.lengths, targets)
        losses.append(float(value))
        p_pile = {k: p_pile[k] - lr * np.asarray(g[k]) for k in p_pile}
        gs = [one_grad(p_seq, x, y) for x, y in zip(xs, targets)]
        p_seq = {k: p_seq[k] - lr * sum(np.asarray(gi[k]) for gi in gs) for k in p_seq}
        for k in p_pile:
            close(p_pile[k], p_seq[k], 1e-4)
    assert losses[-1] < 0.5 * losses[0], losses


def test_grad_of_a_scan_over_values_whose_padding_is_not_finite() -> None:
    """``log`` of the zero padding is ``-inf``: the steps past each length
    scan zeros instead, so the gradient stays finite and exact."""
    xs = [np.abs(x) + 0.5 for x in sequences([3, 6])]
    pile = Pile.from_arrays(xs)

    def loss(p: dict[str, Any], data: Any, lengths: Any) -> Any:
        return pnp.sum(vmap(lambda s, p: seq_loss(pnp.log(s), p), in_axes=(P, None))(Pile(data, lengths), p))

    got = jit(grad(loss))(RNN_PARAMS, pile.data, pile.lengths)
    per_seq = jit(grad(lambda p, x: seq_loss(pnp.log(x), p)))
    for k in RNN_PARAMS:
        close(got[k], sum(np.asarray(per_seq(RNN_PARAMS, x)[k]) for x in xs), 1e-4)


@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_vmap_of_grad_of_an_rnn_over_a_pile(reverse: bool) -> None:
    xs = sequences([4, 1, 6])
    per_seq = grad(lambda x, p: seq_loss(x, p, reverse), argnums=(0, 1))
    g_xs, g_params = jit(vmap(per_seq, in_axes=(P, None), out_axes=(P, 0)))(Pile.from_arrays(xs), RNN_PARAMS)
    for i, x in enumerate(xs):
        gx, gp = jit(per_seq)(x, RNN_PARAMS)
        close(g_xs.unpack()[i], gx, 1e-4)
        for k in gp:
            close(np.asarray(g_params[k])[i], gp[k], 1e-4)


def test_jvp_of_a_loop_up_to_each_ragged_length() -> None:
    xs = [x[:, 0] for x in sequences([3, 1, 5])]
    pile = Pile.from_arrays(xs)

    def f(x: Any) -> Any:
        return plait.lax.fori_loop(0, pnp.asarray(x.shape[0]), lambda i, v: pnp.sin(v) + pnp.sum(v) * 0.5, x)

    def on_data(data: Any) -> Any:
        return vmap(f, in_axes=P, out_axes=P)(Pile(data, pile.lengths)).data

    out, out_dot = plait.jvp(on_data, (pile.data,), (np.ones_like(pile.data),))
    for i, x in enumerate(xs):
        e, e_dot = plait.jvp(f, (x,), (np.ones_like(x),))
        close(np.asarray(out)[i, : len(x)], e, 1e-5)
        close(np.asarray(out_dot)[i, : len(x)], e_dot, 1e-4)


# ---------------------------------------------------------------------------
# Structural operations along the ragged axis (rev, sort, pad, concatenate,
# conv) under jit and grad

# A generator of their own, so these tests leave the data of the others as it was.
S_RNG = np.random.default_rng(1)
CLS = np.full((1, D), -0.5, np.float32)
KERNEL = (S_RNG.standard_normal((3, D, 3)) / 3).astype(np.float32)  # (out, in, window)


def s_elements(lengths: list[int]) -> list[np.ndarray]:
    return [S_RNG.standard_normal((n, D)).astype(np.float32) for n in lengths]


def _np_same_conv(x: np.ndarray) -> np.ndarray:
    """A 'SAME' 1-D convolution of ``x`` (``(n, D)``) with KERNEL, in NumPy."""
    xp = np.pad(x.astype(np.float64), ((1, 1), (0, 0)))
    return np.stack([np.einsum("jc,ocj->o", xp[t : t + 3], KERNEL) for t in range(x.shape[0])]).reshape(-1, 3)


STRUCTURAL: dict[str, tuple[Any, Any]] = {
    "rev": (lambda x: x[::-1], lambda x: x[::-1]),
    "pad": (lambda x: pnp.pad(x, ((1, 2), (0, 0)), constant_values=0.5),
            lambda x: np.pad(x, ((1, 2), (0, 0)), constant_values=0.5)),
    "concatenate": (lambda x: pnp.concatenate([x, CLS, x[::-1]]), lambda x: np.concatenate([x, CLS, x[::-1]])),
    "sort": (lambda x: pnp.sort(x, axis=0), lambda x: np.sort(x, axis=0)),
    "argsort": (lambda x: pnp.argsort(x, axis=0), lambda x: np.argsort(x, axis=0, kind="stable")),
    "conv": (lambda x: plait.lax.conv_general_dilated(x.T[None], KERNEL, (1,), "SAME")[0].T, _np_same_conv),
}  # fmt: skip


@pytest.mark.parametrize("name", list(STRUCTURAL))
def test_jit_of_structural_ops_along_the_ragged_axis(name: str) -> None:
    fun, oracle = STRUCTURAL[name]
    xs = s_elements([3, 1, 6])
    out = jit(vmap(fun, in_axes=P, out_axes=P))(Pile.from_arrays(xs, pad_to=7))
    for got, x in zip(out.unpack(), xs):
        expected = oracle(x)
        assert np.asarray(got).shape == expected.shape
        close(got, expected.astype(np.asarray(got).dtype), 1e-5)


def test_jit_of_concatenating_piles_of_different_lengths() -> None:
    xs, ys = s_elements([3, 1, 6]), s_elements([2, 5, 1])
    f = jit(vmap(lambda x, y: pnp.concatenate([x, y]) * 2, in_axes=(P, P), out_axes=P))
    out = f(Pile.from_arrays(xs), Pile.from_arrays(ys))
    np.testing.assert_array_equal(np.asarray(out.lengths), [5, 6, 7])
    for got, x, y in zip(out.unpack(), xs, ys):
        close(got, np.concatenate([x, y]) * 2)


def _scored(fun: Any, x: Any) -> Any:
    """A scalar of ``fun(x)`` that weighs every position differently."""
    y = fun(x)
    return pnp.sum(pnp.tanh(y) * (1.0 + plait.lax.broadcasted_iota(np.float32, y.shape, 0)))


@pytest.mark.parametrize("jitted", [False, True])
@pytest.mark.parametrize("name", ["rev", "pad", "concatenate", "conv"])
def test_grad_through_structural_ops_along_the_ragged_axis(name: str, jitted: bool) -> None:
    fun = STRUCTURAL[name][0]

    def loss(data: Any, lengths: Any) -> Any:
        return pnp.sum(vmap(lambda x: _scored(fun, x), in_axes=P)(Pile(data, lengths)))

    xs = s_elements([4, 1, 6])
    pile = Pile.from_arrays(xs, pad_to=7)
    g = jit(grad(loss)) if jitted else grad(loss)
    got = np.asarray(g(pile.data, pile.lengths))
    for i, x in enumerate(xs):
        n = x.shape[0]
        assert not got[i, n:].any(), "the gradient must be zero in the padding"
        close(got[i, :n], grad(lambda x: _scored(fun, x))(x), 1e-4)


# ---------------------------------------------------------------------------
# Indexing into the ragged axis (gather, dynamic slices, scatters) under jit and grad

IDX = np.array([0, 2, 7], np.int32)


def _indexed(x: Any, i: Any) -> Any:
    """Last token, a window at a traced start, a lookup that fills past the end,
    an update at a traced (possibly negative) index and a segment sum."""
    window = plait.lax.dynamic_slice_in_dim(x, i, 2)
    picked = pnp.take(x, IDX, axis=0, mode="fill", fill_value=-3.0)
    bumped = x.at[i - 1].add(x[-1])
    seg = pnp.zeros((3, D), np.float32).at[pnp.arange(x.shape[0]) % 3].add(x + 1)
    return pnp.sum(pnp.tanh(bumped)) + pnp.sum(window * window) + pnp.sum(picked**2) + pnp.sum(seg**2)


def test_jit_of_indexing_into_the_ragged_axis() -> None:
    xs = elements([5, 2, 3, 8])
    starts = np.array([1, -1, 7, 3], np.int32)
    got = jit(vmap(_indexed, in_axes=(P, 0)))(Pile.from_arrays(xs, pad_to=8), starts)
    close(got, [_indexed(pnp.asarray(x), pnp.asarray(i)) for x, i in zip(xs, starts)], 1e-4)


@pytest.mark.parametrize("jitted", [False, True])
def test_grad_through_indexing_into_the_ragged_axis(jitted: bool) -> None:
    xs = elements([5, 2, 3])
    starts = np.array([4, 0, -2], np.int32)
    pile = Pile.from_arrays(xs)

    def loss(data: Any, lengths: Any) -> Any:
        return pnp.sum(vmap(_indexed, in_axes=(P, 0))(Pile(data, lengths), starts))

    g = jit(grad(loss)) if jitted else grad(loss)
    got = np.asarray(g(pile.data, pile.lengths))
    for b, (x, i) in enumerate(zip(xs, starts)):
        n = x.shape[0]
        assert not got[b, n:].any(), "the gradient must be zero in the padding"
        close(got[b, :n], grad(_indexed)(x, pnp.asarray(i)), 1e-4)


def test_vmap_of_grad_of_gathers_and_scatters_over_a_pile() -> None:
    def f(x: Any, i: Any) -> Any:
        picked = pnp.take(x, IDX, axis=0, mode="clip")
        return pnp.sum(picked**2) + pnp.sum(pnp.tanh(x.at[i].multiply(2.0))) + pnp.sum(x[i] ** 3)

    xs = elements([4, 1, 6])
    starts = np.array([3, 0, -6], np.int32)
    per = jit(vmap(grad(f), in_axes=(P, 0), out_axes=P))(Pile.from_arrays(xs), starts)
    for got, x, i in zip(per.unpack(), xs, starts):
        close(got, grad(f)(x, pnp.asarray(i)), 1e-4)
