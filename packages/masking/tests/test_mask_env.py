"""``mask``'s environment of sizes: padded sizes that disagree, names it
ignores, and the logical shapes it returns when ``out_shape`` is omitted."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import ShapeDtypeStruct, make_jaxpr
from plait_masking import ShapeError, mask

RNG = np.random.default_rng(16)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


# ---------------------------------------------------------------------------
# One name, two padded sizes


@pytest.mark.parametrize(
    "in_shapes, shapes, message",
    [
        (["(n, 3)", "n"], [(5, 3), (7,)],
         r"mask: the padded inputs disagree on the size n: dimension 0 \(n\) of argument 0, of "
         r"padded size 5, gives n = 5 but dimension 0 \(n\) of argument 1, of padded size 7, gives n = 7"),
        (["(m, n)", "(n, m)"], [(2, 3), (3, 4)],
         r"disagree on the size m: dimension 0 \(m\) of argument 0, of padded size 2, gives m = 2 but dimension 1 "
         r"\(m\) of argument 1, of padded size 4, gives m = 4"),
        ([{"a": "n", "b": "n + 1"}], [(4,), (4,)],
         r"disagree on the size n: dimension 0 \(n\) of argument 0 leaf 0, of padded size 4, gives n = 4 but "
         r"dimension 0 \(n \+ 1\) of argument 0 leaf 1, of padded size 4, gives n = 3"),
    ],
)
def test_one_name_with_two_padded_sizes_is_a_shape_error(
    in_shapes: list[Any], shapes: list[tuple[int, ...]], message: str
) -> None:
    arrays = [np.zeros(s, np.float32) for s in shapes]
    args: list[Any] = [{"a": arrays[0], "b": arrays[1]}] if isinstance(in_shapes[0], dict) else arrays
    with pytest.raises(ShapeError, match=message) as info:
        mask(lambda *xs: pnp.float32(0.0), in_shapes, "")(args, {"n": 1, "m": 1})
    assert isinstance(info.value, TypeError)  # ShapeError is a TypeError, as DESIGN §3 allows


def test_a_padded_shape_against_its_spec_is_a_shape_error() -> None:
    with pytest.raises(ShapeError, match=r"argument 1 has the padded shape \(4, 2\), which does not fit its spec "
                                         r"\(n, 3\): dimension 1 must be 3, got 2"):
        mask(lambda x, y: x, ["n", "(n, 3)"], "n")([np.zeros(4, np.float32), np.zeros((4, 2), np.float32)],
                                                    {"n": 2})


# ---------------------------------------------------------------------------
# Names the specs do not use


def test_names_no_in_shape_uses_are_ignored() -> None:
    x, a = _f32(8), _f32(6, 5)
    env = {"n": 3, "k": 4, "m": 2, "unused": 0}  # 'unused' would be refused as a size (< 1) if it were read
    total = mask(lambda v: pnp.sum(v * v), ["n"], "")([x], env)
    rows = mask(lambda b: pnp.max(b, axis=1), ["(k, m)"], "k")([a], env)
    np.testing.assert_allclose(float(total), float(np.sum(x[:3] ** 2)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(rows)[:4], np.max(a[:4, :2], axis=1), rtol=1e-6)


def test_an_ignored_name_is_not_staged() -> None:
    masked = mask(lambda v: pnp.sum(v), ["n"], "")
    closed = make_jaxpr(lambda v, n, k: masked([v], {"n": n, "k": k}))(_f32(8), np.int32(3), np.int32(99))
    from plait_core import eval_jaxpr

    x = _f32(8)
    for n in (1, 5, 8):
        (got,) = eval_jaxpr(closed.jaxpr, closed.consts, x, np.int32(n), np.int32(123))
        np.testing.assert_allclose(float(got), float(np.sum(x[:n])), rtol=1e-6)


def test_a_name_the_specs_use_must_still_be_given() -> None:
    with pytest.raises(ValueError, match=r"logical_env has no size for n \(the in_shapes name n\)"):
        mask(lambda v: v, ["n"], "n")([_f32(8)], {"m": 3})


# ---------------------------------------------------------------------------
# mask without out_shape: (outputs, logical shapes)


def test_without_out_shape_the_logical_shapes_come_back() -> None:
    x, y = _f32(6, 4), _f32(5)

    def f(a: Any, b: Any) -> Any:
        return {"pair": (a * 2.0, pnp.concatenate([b, b, b[:1]])), "sum": pnp.sum(a, axis=1), "n": a.shape[0] * 1.0}

    masked = mask(f, ["(n, 4)", "m"], None)
    for n, m in [(6, 5), (3, 2), (1, 1)]:
        outs, shapes = masked([x, y], {"n": n, "m": m})
        assert set(outs) == set(shapes) == {"pair", "sum", "n"}
        assert shapes["pair"][0] == ShapeDtypeStruct((n, 4), np.float32)
        assert shapes["pair"][1] == ShapeDtypeStruct((2 * m + 1,), np.float32)
        assert shapes["sum"] == ShapeDtypeStruct((n,), np.float32)
        assert shapes["sum"].shape == (n,) and all(type(d) is int for d in shapes["pair"][1].shape)
        # each logical slice, cut with the returned shapes, is the computation on the logical inputs
        want = f(x[:n], y[:m])
        for out, shape, expect in [(outs["pair"][0], shapes["pair"][0], want["pair"][0]),
                                   (outs["pair"][1], shapes["pair"][1], want["pair"][1]),
                                   (outs["sum"], shapes["sum"], want["sum"])]:
            got = np.asarray(out)[tuple(slice(0, d) for d in shape.shape)]
            np.testing.assert_allclose(got, np.asarray(expect), rtol=1e-6)
        assert shapes["n"].shape == ()
        assert float(outs["n"]) == n


def test_without_out_shape_a_single_output_gives_a_single_shape() -> None:
    outs, shape = mask(lambda v: pnp.cumsum(v)[1:], ["n"])([_f32(8)], {"n": 5})
    assert isinstance(shape, ShapeDtypeStruct) and shape.shape == (4,) and shape.dtype == np.float32
    assert np.asarray(outs).shape == (7,)


def test_without_out_shape_traced_sizes_are_an_error() -> None:
    masked = mask(lambda v: v + 1.0, ["n"])
    with pytest.raises(ValueError, match=r"mask\(<lambda>\): without out_shape the masked function returns each "
                                         r"output's logical shape in concrete sizes, but the logical size n is "
                                         r"traced \(under jit or vmap\); pass out_shape"):
        make_jaxpr(lambda v, n: masked([v], {"n": n}))(_f32(8), np.int32(3))
    # a result whose shape does not use the traced size needs no concrete size
    total = mask(lambda v: pnp.sum(v), ["n"])
    closed = make_jaxpr(lambda v, n: total([v], {"n": n})[0])(_f32(8), np.int32(3))
    from plait_core import eval_jaxpr

    x = _f32(8)
    (got,) = eval_jaxpr(closed.jaxpr, closed.consts, x, np.int32(4))
    np.testing.assert_allclose(float(got), float(np.sum(x[:4])), rtol=1e-6)
