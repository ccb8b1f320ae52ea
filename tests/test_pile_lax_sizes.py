"""Shapes given at the ``lax`` level with traced sizes inside ``vmap`` over sizes.

``lax.iota``, ``lax.broadcasted_iota``, ``lax.broadcast_in_dim``,
``lax.broadcast``, ``lax.full`` take a batched integer as a size the way
``pnp.arange``/``pnp.ones`` do: the result is ragged, and returning it with
``out_axes=pile_axis`` makes a pile.  ``lax.squeeze``/``lax.expand_dims``
keep a value ragged.  The oracle is NumPy on each element, in a Python loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait import Pile, grad, jit, lax, pile_axis, vmap

P = pile_axis
SIZES = np.array([3, 1, 4, 2], np.int32)
RNG = np.random.default_rng(1616)


def _pile(shape_of: Callable[[int], tuple[int, ...]], ragged_axis: int = 0) -> Pile:
    return Pile.from_arrays([RNG.standard_normal(shape_of(int(k))).astype(np.float32) for k in SIZES],
                            ragged_axis=ragged_axis)  # fmt: skip


def _elements(p: Pile) -> list[np.ndarray]:
    return [np.asarray(a) for a in p.unpack()]


def _same_elements(got: Any, want: Sequence[np.ndarray], rtol: float = 1e-6) -> None:
    assert isinstance(got, Pile), type(got)
    els = _elements(got)
    assert len(els) == len(want)
    for i, (g, w) in enumerate(zip(els, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape, g.dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-6, err_msg=f"element {i}")


# ---------------------------------------------------------------------------
# Sizes from a batched integer


@pytest.mark.parametrize(
    "name, fun, oracle",
    [
        ("iota", lambda n: lax.iota(pnp.int32, n), lambda n: np.arange(n, dtype=np.int32)),
        ("iota of 2n+1", lambda n: lax.iota(pnp.float32, 2 * n + 1), lambda n: np.arange(2 * n + 1, dtype=np.float32)),
        ("broadcasted_iota along the ragged axis", lambda n: lax.broadcasted_iota(pnp.int32, (n, 3), 0),
         lambda n: np.broadcast_to(np.arange(n, dtype=np.int32)[:, None], (n, 3))),
        ("broadcasted_iota along a static axis", lambda n: lax.broadcasted_iota(pnp.int32, (2, n), 0),
         lambda n: np.broadcast_to(np.arange(2, dtype=np.int32)[:, None], (2, n))),
        ("broadcast_in_dim", lambda n: lax.broadcast_in_dim(pnp.arange(7.0), (n, 7), (1,)),
         lambda n: np.broadcast_to(np.arange(7, dtype=np.float32), (n, 7))),
        ("broadcast_in_dim of a scalar", lambda n: lax.broadcast_in_dim(n * 2, (2, n), ()),
         lambda n: np.full((2, n), 2 * n, np.int32)),
        ("broadcast", lambda n: lax.broadcast(pnp.arange(3), (n,)),
         lambda n: np.broadcast_to(np.arange(3, dtype=np.int32), (n, 3))),
        ("full of a Python float", lambda n: lax.full((n, 2), 1.5), lambda n: np.full((n, 2), 1.5, np.float32)),
        ("full with a dtype", lambda n: lax.full((3, n), 2, pnp.int32), lambda n: np.full((3, n), 2, np.int32)),
        ("full of a batched value", lambda n: lax.full((n, 2), n * 0.5), lambda n: np.full((n, 2), n * 0.5, np.float32)),
        ("expand_dims then squeeze", lambda n: lax.squeeze(lax.expand_dims(lax.iota(pnp.int32, n), (0, 2)), (0,)),
         lambda n: np.arange(n, dtype=np.int32)[:, None]),
    ],
)
def test_lax_sizes_from_batched_integers_make_piles(name: str, fun: Any, oracle: Any) -> None:
    got = vmap(fun, out_axes=P)(SIZES)
    _same_elements(got, [oracle(int(k)) for k in SIZES])


def test_a_lax_size_reduced_away_gives_an_ordinary_array() -> None:
    got = vmap(lambda n: pnp.sum(lax.full((n, 3), 2.0)) + pnp.max(lax.iota(pnp.int32, n)))(SIZES)
    want = [np.float32(6.0 * k + (k - 1)) for k in SIZES]
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)


def test_lax_and_numpy_sizes_agree() -> None:
    """A ragged value from ``lax.full`` combines with one from ``pnp.ones`` of the same sizes."""
    got = vmap(lambda n: lax.full((n, 2), 3.0) - pnp.ones((n, 2)) * lax.broadcasted_iota(pnp.float32, (n, 2), 1),
               out_axes=P)(SIZES)  # fmt: skip
    _same_elements(got, [np.full((k, 2), 3.0, np.float32) - np.arange(2, dtype=np.float32) for k in SIZES])


# ---------------------------------------------------------------------------
# Sizes read off a pile's shape: under jit and grad


def _scaled_rows(x: Any) -> Any:
    n = x.shape[0]
    weights = lax.broadcast_in_dim(lax.iota(pnp.float32, n) + 1.0, (n, 3), (0,))
    bias = lax.full((n, 3), 0.25)
    return lax.squeeze(lax.expand_dims(x * weights + bias, (1,)), (1,))


def _scaled_rows_np(x: np.ndarray) -> np.ndarray:
    return x * (np.arange(x.shape[0], dtype=np.float32) + 1)[:, None] + np.float32(0.25)


def test_lax_shapes_from_a_pile_under_jit() -> None:
    p = _pile(lambda k: (k, 3))
    want = [_scaled_rows_np(a) for a in _elements(p)]
    _same_elements(vmap(_scaled_rows, in_axes=P, out_axes=P)(p), want)
    _same_elements(jit(vmap(_scaled_rows, in_axes=P, out_axes=P))(p), want)


def test_lax_shapes_from_a_pile_under_grad() -> None:
    p = _pile(lambda k: (k, 3))

    def loss(data: Any) -> Any:
        out = vmap(lambda x: pnp.sum(_scaled_rows(x) ** 2), in_axes=P)(Pile(data, p.lengths))
        return pnp.sum(out)

    g = np.asarray(jit(grad(loss))(p.data))
    for i, a in enumerate(_elements(p)):
        k = a.shape[0]
        w = (np.arange(k, dtype=np.float32) + 1)[:, None]
        np.testing.assert_allclose(g[i, :k], 2 * _scaled_rows_np(a) * w, rtol=1e-5, err_msg=f"element {i}")
        np.testing.assert_array_equal(g[i, k:], 0.0)


def test_a_lax_size_from_a_batched_integer_under_grad() -> None:
    x = RNG.standard_normal((len(SIZES), 2)).astype(np.float32)

    def loss(v: Any) -> Any:
        return pnp.sum(vmap(lambda row, n: pnp.sum(lax.broadcast_in_dim(row, (n, 2), (1,)) ** 3))(v, SIZES))

    np.testing.assert_allclose(np.asarray(grad(loss)(x)), 3 * x**2 * SIZES[:, None], rtol=1e-5)


# ---------------------------------------------------------------------------
# Traced sizes where no ragged value can be made


def test_a_traced_lax_size_outside_vmap_says_so() -> None:
    with pytest.raises(plait.ConcretizationTypeError,
                       match=r"lax.iota: a dimension of size needs a concrete value, but got a traced value i32\[\]"):
        jit(lambda n: lax.iota(pnp.int32, n))(3)
    with pytest.raises(plait.ConcretizationTypeError, match=r"lax.full: a dimension of shape needs a concrete value"):
        jit(lambda n: lax.full((n, 2), 1.0))(np.int32(3))


def test_traced_batched_sizes_need_a_known_padded_size() -> None:
    with pytest.raises(plait.ConcretizationTypeError, match=r"lax.broadcast_in_dim: a dimension of shape: a size taken from a batched "
                                        r"integer makes a ragged value, padded to the largest of the sizes, which "
                                        r"must be known; but the sizes i32\[\] are traced"):
        jit(vmap(lambda n: lax.broadcast_in_dim(1.0, (n,), ()), out_axes=P))(SIZES)


def test_lax_full_outside_vmap() -> None:
    got = lax.full((np.int32(2), 3), 1.0)
    np.testing.assert_array_equal(np.asarray(got), np.ones((2, 3), np.float32))
    assert (lax.full((2,), 1.5) + np.float16(1)).dtype == np.float16  # a Python scalar stays weakly typed
    assert (lax.full((2,), 1.5, pnp.float32) + np.float16(1)).dtype == np.float32
    assert lax.full((2,), True).dtype == np.bool_
    with pytest.raises(TypeError, match=r"lax.full: fill_value must be a scalar, got f32\[2\]"):
        lax.full((2,), np.ones(2, np.float32))


# ---------------------------------------------------------------------------
# jit inside vmap over sizes


def test_jit_inside_vmap_over_sizes_makes_a_pile() -> None:
    got = vmap(jit(lambda n: lax.iota(pnp.int32, n)), out_axes=P)(SIZES)
    _same_elements(got, [np.arange(k, dtype=np.int32) for k in SIZES])


def test_jit_inside_vmap_over_sizes_reduced_is_an_ordinary_array() -> None:
    got = vmap(jit(lambda n: pnp.arange(n).sum()))(SIZES)
    assert not isinstance(got, Pile)
    np.testing.assert_array_equal(np.asarray(got), [sum(range(k)) for k in SIZES])


def test_jit_inside_vmap_over_sizes_with_static_and_keyword_arguments() -> None:
    f = jit(lambda n, k, *, scale: lax.full((n, k), scale) * lax.broadcasted_iota(pnp.float32, (n, k), 0),
            static_argnums=1)  # fmt: skip
    got = vmap(lambda n: f(n, 3, scale=2.0), out_axes=P)(SIZES)
    _same_elements(got, [2.0 * np.broadcast_to(np.arange(k, dtype=np.float32)[:, None], (k, 3)) for k in SIZES])


def test_jit_inside_vmap_over_sizes_and_a_pile() -> None:
    p = _pile(lambda k: (k, 2))
    f = jit(lambda x, n: x * lax.broadcast_in_dim(lax.iota(pnp.float32, n), (n, 2), (0,)))
    got = vmap(f, in_axes=(P, 0), out_axes=P)(p, SIZES)
    _same_elements(got, [a * np.arange(a.shape[0], dtype=np.float32)[:, None] for a in _elements(p)])


def test_jit_inside_vmap_over_sizes_under_grad() -> None:
    x = RNG.standard_normal(len(SIZES)).astype(np.float32)
    step = jit(lambda v, n: pnp.sum(lax.full((n,), 1.0) * pnp.sin(v)))

    def loss(v: Any) -> Any:
        return pnp.sum(vmap(step)(v, SIZES))

    np.testing.assert_allclose(np.asarray(grad(loss)(x)), SIZES * np.cos(x), rtol=1e-5)


def test_jit_inside_vmap_stays_one_call_when_no_size_is_batched() -> None:
    """Only a function that needs a batched integer as a size is traced under vmap."""
    xs = RNG.standard_normal((len(SIZES), 5)).astype(np.float32)
    closed = plait.make_jaxpr(vmap(jit(lambda i, x: x[i] * 2.0)))(SIZES, xs)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["closed_call"]
    got = vmap(jit(lambda i, x: x[i] * 2.0))(SIZES, xs)
    np.testing.assert_allclose(np.asarray(got), [2 * xs[j, k] for j, k in enumerate(SIZES)], rtol=1e-6)


def test_jit_inside_vmap_over_traced_sizes_is_an_error() -> None:
    with pytest.raises(plait.ConcretizationTypeError, match=r"lax.iota: a dimension of size: a size taken from a "
                                                           r"batched integer makes a ragged value"):
        jit(vmap(jit(lambda n: lax.iota(pnp.int32, n)), out_axes=P))(SIZES)
    with pytest.raises(plait.ConcretizationTypeError, match=r"bool\(\) needs a concrete value, but got a traced "
                                                           r"value bool\[\] \(by staging to a jaxpr\)"):
        vmap(jit(lambda x: x if x > 0 else -x))(np.ones(3, np.float32))
