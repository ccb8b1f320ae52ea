"""Named-axis collectives under ``vmap(axis_name=...)``: each against NumPy,
with one name, nested names, tuples of names in either order, unbatched
operands, collectives inside control flow, staging, and unbound names."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_batching import vmap
from plait_core import lax
from plait_core.errors import UnboundAxisNameError

f32, i32 = np.float32, np.int32
rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4)).astype(f32)
REDUCERS = {"psum": (lax.psum, np.sum), "pmax": (lax.pmax, np.max), "pmin": (lax.pmin, np.min),
            "pmean": (lax.pmean, np.mean)}  # fmt: skip


@pytest.mark.parametrize("name", list(REDUCERS))
@pytest.mark.parametrize("in_axes", [0, 1])
def test_reductions_over_the_batch(name: str, in_axes: int) -> None:
    fn, ref = REDUCERS[name]
    x = X if in_axes == 0 else X.T
    out = vmap(lambda v: fn(v, "i"), in_axes=in_axes, axis_name="i")(x)
    np.testing.assert_allclose(out, np.broadcast_to(ref(X, axis=0), X.shape), rtol=1e-6)


def test_psum_of_an_unbatched_value_multiplies_by_the_axis_size() -> None:
    y = np.arange(3, dtype=i32)
    out = vmap(lambda v: lax.psum(y, "i"), axis_name="i")(X)
    np.testing.assert_array_equal(out, np.broadcast_to(3 * y, (3, 3)))
    np.testing.assert_array_equal(vmap(lambda v: lax.pmax(y, "i"), axis_name="i")(X), np.broadcast_to(y, (3, 3)))


def test_pmean_of_integers_is_a_float_mean() -> None:
    x = np.array([1, 2, 4], i32)
    out = vmap(lambda v: lax.pmean(v, "i"), axis_name="i")(x)
    assert out.dtype == f32
    np.testing.assert_allclose(out, np.full(3, 7 / 3, f32))


def test_normalising_by_the_batch_sum() -> None:
    out = vmap(lambda v: lax.div(v, lax.psum(v, "batch")), axis_name="batch")(np.abs(X))
    np.testing.assert_allclose(out, np.abs(X) / np.abs(X).sum(0), rtol=1e-6)


# ---------------------------------------------------------------------------
# Several names

Y = rng.standard_normal((2, 3, 4)).astype(f32)


def two_levels(f: Any) -> Any:
    return vmap(vmap(f, axis_name="j"), axis_name="i")(Y)


@pytest.mark.parametrize(
    ("names", "axes"), [("i", (0,)), ("j", (1,)), (("i", "j"), (0, 1)), (("j", "i"), (0, 1))]
)
@pytest.mark.parametrize("name", list(REDUCERS))
def test_reductions_over_nested_and_tuple_names(name: str, names: Any, axes: tuple[int, ...]) -> None:
    fn, ref = REDUCERS[name]
    out = two_levels(lambda v: fn(v, names))
    np.testing.assert_allclose(out, np.broadcast_to(ref(Y, axis=axes, keepdims=True), Y.shape), rtol=1e-5)


def test_the_innermost_binding_of_a_name_wins() -> None:
    out = vmap(vmap(lambda v: lax.psum(v, "i"), axis_name="i"), axis_name="i")(Y)
    np.testing.assert_allclose(out, np.broadcast_to(Y.sum(1, keepdims=True), Y.shape), rtol=1e-6)


@pytest.mark.parametrize(("names", "expected"), [("i", lambda i, j: i), ("j", lambda i, j: j),
                                                 (("i", "j"), lambda i, j: 3 * i + j),
                                                 (("j", "i"), lambda i, j: 2 * j + i)])  # fmt: skip
def test_axis_index(names: Any, expected: Any) -> None:
    out = two_levels(lambda v: lax.axis_index(names))
    i, j = np.meshgrid(np.arange(2), np.arange(3), indexing="ij")
    assert out.dtype == i32
    np.testing.assert_array_equal(out, expected(i, j).astype(i32))


def test_axis_index_in_a_function_with_no_mapped_argument() -> None:
    out = vmap(lambda: lax.axis_index("i"), axis_name="i", axis_size=4)()
    np.testing.assert_array_equal(out, np.arange(4, dtype=i32))


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather(axis: int, tiled: bool) -> None:
    x = rng.standard_normal((3, 2, 5)).astype(f32)
    out = vmap(lambda v: lax.all_gather(v, "i", axis=axis, tiled=tiled), axis_name="i")(x)
    ax = axis % (2 if tiled else 3)
    one = np.concatenate(list(x), axis=ax) if tiled else np.stack(list(x), axis=ax)
    np.testing.assert_allclose(out, np.broadcast_to(one, (3, *one.shape)))


def test_all_gather_of_an_unbatched_value() -> None:
    y = np.arange(4, dtype=i32)
    out = vmap(lambda v: lax.all_gather(y, "i"), axis_name="i")(X)
    np.testing.assert_array_equal(out, np.broadcast_to(y, (3, 3, 4)))


@pytest.mark.parametrize(("names", "order"), [("i", "i"), ("j", "j"), (("i", "j"), "ij"), (("j", "i"), "ji")])
@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather_over_nested_and_tuple_names(names: Any, order: str, tiled: bool) -> None:
    out = two_levels(lambda v: lax.all_gather(v, names, tiled=tiled))
    if order == "i":
        one = Y  # (i, j, ...): gathered over i, for each j
        expected = np.stack([np.stack([Y[:, j] for j in range(3)], 0) for _ in range(2)])  # (i, j, i', 4)
    elif order == "j":
        expected = np.stack([np.stack([Y[i] for _ in range(3)]) for i in range(2)])  # (i, j, j', 4)
    else:
        one = Y.reshape(6, 4) if order == "ij" else Y.transpose(1, 0, 2).reshape(6, 4)
        expected = np.broadcast_to(one, (2, 3, 6, 4))
    if tiled:
        expected = expected.reshape(2, 3, -1)
    np.testing.assert_allclose(out, expected)


# ---------------------------------------------------------------------------
# Inside control flow, staging, errors


def test_collectives_inside_control_flow_bodies() -> None:
    def f(x: Any) -> Any:
        def step(c: Any, _: Any) -> Any:
            return lax.add(c, lax.psum(x, "i")), lax.axis_index("i")

        return lax.scan(step, np.float32(0), None, length=2)

    carry, idx = vmap(f, axis_name="i")(X[:, 0])
    np.testing.assert_allclose(carry, np.full(3, 2 * X[:, 0].sum(), f32), rtol=1e-6)
    np.testing.assert_array_equal(idx, np.tile(np.arange(3, dtype=i32)[:, None], (1, 2)))


def test_a_body_using_the_axis_is_batched_even_without_batched_operands() -> None:
    def f(x: Any) -> Any:
        return lax.cond(True, lambda: lax.convert_element_type(lax.axis_index("i"), f32), lambda: np.float32(-1))

    np.testing.assert_allclose(vmap(f, axis_name="i")(X), np.arange(3, dtype=f32))


def test_staged_vmap_has_no_collective_left() -> None:
    closed = pc.make_jaxpr(vmap(lambda v: lax.psum(v, "i"), axis_name="i"))(X)
    names = [e.primitive.name for e in closed.eqns]
    assert "psum" not in names and "reduce_sum" in names
    pc.check_jaxpr(closed)
    np.testing.assert_allclose(pc.eval_jaxpr(closed.jaxpr, closed.consts, X)[0], np.broadcast_to(X.sum(0), X.shape),
                               rtol=1e-6)  # fmt: skip


def test_an_outer_name_bound_by_make_jaxpr_is_left_to_it() -> None:
    closed = pc.make_jaxpr(vmap(lambda v: lax.psum(v, ("k", "i")), axis_name="i"), axis_env=[("k", 5)])(X)
    (eqn,) = [e for e in closed.eqns if e.primitive.name == "psum"]
    assert eqn.params["axes"] == ("k",)


def test_an_unbound_axis_name_is_a_name_error() -> None:
    with pytest.raises(UnboundAxisNameError, match=r"psum uses the axis name 'j', which is not bound here.*'i'"):
        vmap(lambda v: lax.psum(v, "j"), axis_name="i")(X)
    assert issubclass(UnboundAxisNameError, NameError)
    with pytest.raises(NameError, match=r"axis_index uses the axis name 'i'"):
        vmap(lambda v: lax.axis_index("i"))(X)


def test_ppermute_over_the_batch() -> None:
    out = vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), axis_name="i")(X)
    np.testing.assert_array_equal(out, X[[2, 0, 1]])
    out = vmap(lambda v: lax.ppermute(v, "i", [(0, 2)]), in_axes=1, axis_name="i")(X.T)
    np.testing.assert_array_equal(out, np.stack([np.zeros(4, f32), np.zeros(4, f32), X[0]]))


@pytest.mark.parametrize("tiled", [False, True])
def test_psum_scatter_over_the_batch(tiled: bool) -> None:
    y = rng.standard_normal((3, 2, 6 if tiled else 3)).astype(f32)
    out = vmap(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=tiled), axis_name="i")(y)
    total = y.sum(0)
    want = total.reshape(2, 3, 2).transpose(1, 0, 2) if tiled else total.T
    np.testing.assert_allclose(out, want, rtol=1e-6)


@pytest.mark.parametrize("split, concat", [(0, 0), (0, 1), (1, 0)])
def test_all_to_all_over_the_batch(split: int, concat: int) -> None:
    y = rng.standard_normal((3, 3, 3)).astype(f32) if split == 0 else rng.standard_normal((3, 2, 3)).astype(f32)
    out = np.asarray(vmap(lambda v: lax.all_to_all(v, "i", split, concat), axis_name="i")(y))
    for i in range(3):  # element i receives block i of every element j, stacked at concat
        got = np.moveaxis(out[i], concat, 0)
        for j in range(3):
            np.testing.assert_array_equal(got[j], np.take(y[j], i, axis=split))
    z = rng.standard_normal((3, 6, 2)).astype(f32)
    tiled = np.asarray(vmap(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), axis_name="i")(z))
    for i in range(3):
        np.testing.assert_array_equal(tiled[i], np.concatenate([z[j, 2 * i : 2 * i + 2] for j in range(3)], axis=1))


def test_new_collectives_check_their_operands() -> None:
    with pytest.raises(ValueError, match="dimension 0 of f32\\[4\\] must have the axis size 3"):
        vmap(lambda v: lax.psum_scatter(v, "i"), axis_name="i")(np.zeros((3, 4), f32))
    with pytest.raises(ValueError, match="sends to or from one position twice"):
        vmap(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]), axis_name="i")(X)
    with pytest.raises(NotImplementedError, match="mixing a vmap axis \\('j'\\) with other axes"):
        vmap(vmap(lambda v: lax.ppermute(v, ("i", "j"), [(0, 1)]), axis_name="j"), axis_name="i")(np.zeros((3, 2), f32))


def test_pvary_is_the_identity_over_vmap_and_outer_names() -> None:
    # pvary only types a value as varying (inside shard_map); under vmap it changes no value,
    # over this vmap's own name or an outer one, batched or not.
    y = rng.standard_normal(4).astype(f32)
    out = vmap(lambda v: lax.pvary(v, "i") * 2 + lax.pvary(y, "i"), axis_name="i")(X)
    np.testing.assert_allclose(out, X * 2 + y, rtol=1e-6)
    nested = vmap(vmap(lambda v: lax.pvary(v, ("i", "j")) + 1, axis_name="j"), axis_name="i")(X)
    np.testing.assert_allclose(nested, X + 1, rtol=1e-6)
