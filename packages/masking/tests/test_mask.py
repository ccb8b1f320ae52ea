"""``mask``: what user code sees, padded outputs, and every error a user can cause."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from masking_testing import Case, check_case, integers, uniform

import plait_core.numpy as pnp
from plait_core import InconclusiveDimensionOperation, TracerLeakError, lax, make_jaxpr, nn
from plait_core.dims import SymbolicDim, symbolic_dims
from plait_core.primitives import elementwise as ew
from plait_core.primitives import structural as st
from plait_core.primitives.indexing_prims import GatherScatterMode, ScatterDimensionNumbers
from plait_core.primitives.linalg import ConvDimensionNumbers
from plait_masking import ShapeError, mask, masking_rules

n, m = symbolic_dims("n m")
X8 = np.arange(8, dtype=np.float32)


def test_shapes_inside_are_symbolic() -> None:
    seen: list[Any] = []

    def f(x: Any, y: Any) -> Any:
        seen.append((x.shape, y.shape, x.ndim, x.size))
        return x

    mask(f, ["(n, 3)", "(_, n + 1)"], "(n, 3)")([np.zeros((4, 3), np.float32), np.zeros((2, 5), np.float32)],
                                                {"n": 2})
    (xs, ys, ndim, size), = seen
    assert xs == (n, 3) and isinstance(xs[0], SymbolicDim)
    assert ys[0] == 2 and type(ys[0]) is int  # '_' is the padded size: it is not masked
    assert ys[1] == n + 1
    assert ndim == 2 and size == 3 * n


def test_padded_output_shape_is_out_spec_at_padded_sizes() -> None:
    f = mask(lambda x, y: pnp.concatenate([x, y, x]), ["n", "m"], "2*n + m")
    out = f([X8, np.ones(5, np.float32)], {"n": 3, "m": 2})
    assert out.shape == (2 * 8 + 5,)
    np.testing.assert_array_equal(out[:8], np.concatenate([X8[:3], np.ones(2), X8[:3]]))


def test_output_trees_and_constant_outputs() -> None:
    def f(x: Any) -> Any:
        return {"sum": pnp.sum(x), "pair": (x * 2.0, np.float32(3.0))}

    out = mask(f, ["n"], {"sum": "", "pair": ("n", "")})([X8], {"n": 4})
    assert set(out) == {"sum", "pair"}
    assert float(out["sum"]) == 6.0
    np.testing.assert_array_equal(np.asarray(out["pair"][0])[:4], X8[:4] * 2)
    assert float(out["pair"][1]) == 3.0


def test_pytree_arguments() -> None:
    def f(p: Any) -> Any:
        return p["w"] @ p["x"]

    args = [{"w": np.ones((2, 6), np.float32), "x": np.arange(6, dtype=np.float32)}]
    out = mask(f, [{"w": "(2, n)", "x": "n"}], "2")(args, {"n": 3})
    np.testing.assert_array_equal(out, [3.0, 3.0])


def test_a_logical_size_as_a_value() -> None:
    out = mask(lambda x: lax.dimension_as_value(x.shape[0] * 2 + 1), ["n"], "")([X8], {"n": 5})
    assert int(out) == 11 and np.asarray(out).dtype == np.int32


def test_one_staged_program_serves_every_logical_size() -> None:
    calls = []

    def f(x: Any) -> Any:
        calls.append(1)
        return pnp.mean(x)

    masked = mask(f, ["n"], "")
    closed = make_jaxpr(lambda x, k: masked([x], {"n": k}))(X8, np.int32(8))
    assert len(calls) == 1 and len(closed.jaxpr.invars) == 2
    from plait_core import eval_jaxpr

    for k in (1, 3, 8):
        (got,) = eval_jaxpr(closed.jaxpr, closed.consts, X8, np.int32(k))
        assert float(got) == pytest.approx(float(np.mean(X8[:k])))


# ---------------------------------------------------------------------------
# plait.numpy and plait.nn under mask: the logical sizes reach shapes and values

NUMPY_CASES = [
    Case("pnp.mean", pnp.mean, ["n"], "", [((8,), np.float32)], [{"n": 8}, {"n": 3}, {"n": 1}]),
    Case("pnp.var and std over an axis", lambda x: (pnp.var(x, axis=0), pnp.std(x, axis=1)), ["(n, m)"], ("m", "n"),
         [((6, 5), np.float32)], [{"n": 6, "m": 5}, {"n": 3, "m": 2}, {"n": 2, "m": 4}], rtol=1e-4),
    Case("nn.softmax and logsumexp", lambda x: (nn.softmax(x, axis=-1), nn.logsumexp(x, axis=0)), ["(n, m)"],
         ("(n, m)", "m"), [((6, 5), np.float32)], [{"n": 6, "m": 5}, {"n": 3, "m": 2}, {"n": 1, "m": 4}]),
    Case("pnp.arange of a shape", lambda x: pnp.arange(x.shape[0]) * x, ["n"], "n", [((8,), np.float32)],
         [{"n": 8}, {"n": 5}, {"n": 1}]),
    Case("reversed and shifted slices", lambda x: (x[::-1], x[1:], x[-1], pnp.flip(x)), ["n + 1"],
         ("n + 1", "n", "", "n + 1"), [((9,), np.float32)], [{"n": 8}, {"n": 5}, {"n": 1}]),
    Case("pnp.sort and argsort", lambda x: (pnp.sort(x), pnp.argsort(x)), ["n"], ("n", "n"),
         [((8,), np.int32)], [{"n": 8}, {"n": 5}, {"n": 1}]),
    Case("x.at[i].set", lambda x, i: x.at[i].set(-1.0), ["n", ""], "n", [((8,), np.float32), ((), np.int32)],
         [{"n": 8}, {"n": 5}, {"n": 2}], {1: integers(0, 2)}),
    Case("pnp.where, max, all", lambda x: (pnp.where(x > 0, x, 0.0), pnp.max(x, axis=0), pnp.all(x > -3, axis=1)),
         ["(n, m)"], ("(n, m)", "m", "n"), [((6, 5), np.float32)], [{"n": 6, "m": 5}, {"n": 3, "m": 2}]),
    Case("pnp.einsum and matmul", lambda a, b: (pnp.einsum("ij,jk->ik", a, b), a.T @ a), ["(n, k)", "(k, 3)"],
         ("(n, 3)", "(k, k)"), [((5, 4), np.float32), ((4, 3), np.float32)], [{"n": 5, "k": 4}, {"n": 2, "k": 1}]),
    Case("pnp.pad and concatenate", lambda x: pnp.concatenate([pnp.pad(x, (1, 2)), x]), ["n"], "2*n + 3",
         [((8,), np.float32)], [{"n": 8}, {"n": 3}]),
    Case("pnp.prod and cumprod", lambda x: (pnp.prod(x), pnp.cumprod(x[::-1])), ["n"], ("", "n"),
         [((8,), np.float32)], [{"n": 8}, {"n": 3}], {0: uniform(0.5, 1.5)}),
]


@pytest.mark.parametrize("case", NUMPY_CASES, ids=repr)
def test_numpy_api_under_mask(case: Case) -> None:
    check_case(case)


# ---------------------------------------------------------------------------
# Errors: padded shapes against specs


def _err(in_shapes: list[Any], args: list[Any], env: dict[str, Any], out: Any = "") -> None:
    mask(lambda *xs: np.float32(0.0), in_shapes, out)(args, env)


@pytest.mark.parametrize(
    "in_shapes, shapes, env, message",
    [
        (["(n, 3)"], [(8,)], {"n": 2},
         r"mask: argument 0 has the padded shape \(8,\) of rank 1, but its spec \(n, 3\) has rank 2"),
        (["(n, 3)"], [(8, 4)], {"n": 2},
         r"argument 0 has the padded shape \(8, 4\), which does not fit its spec \(n, 3\): dimension 1 must be 3, got 4"),
        (["2*n"], [(7,)], {"n": 2},
         r"argument 0 has the padded shape \(7,\), which does not fit its spec \(2\*n,\): dimension 0 is 2\*n, "
         r"which is never 7 for a whole size n >= 1"),
        (["n + 3"], [(2,)], {"n": 1}, r"dimension 0 is n \+ 3, which is never 2 for a whole size n >= 1"),
        (["n", "(2, n)"], [(8,), (2, 6)], {"n": 2},
         r"the padded inputs disagree on the size n: dimension 0 \(n\) of argument 0, of padded size 8, gives "
         r"n = 8 but dimension 1 \(n\) of argument 1, of padded size 6, gives n = 6"),
        (["n", "2*n + 1"], [(4,), (11,)], {"n": 2},
         r"the padded inputs disagree on the size n: dimension 0 \(n\) of argument 0, of padded size 4, gives "
         r"n = 4 but dimension 0 \(2\*n \+ 1\) of argument 1, of padded size 11, gives n = 5"),
        (["m", "n", "m*n"], [(3,), (4,), (11,)], {"n": 2, "m": 2},
         r"argument 2 has the padded shape \(11,\), which does not fit its spec \(m\*n,\): dimension 0 is m\*n = 12 "
         r"at the padded sizes \(m = 3, n = 4\), got 11"),
    ],
)
def test_padded_shape_must_fit_the_spec(
    in_shapes: list[str], shapes: list[tuple[int, ...]], env: dict[str, int], message: str
) -> None:
    with pytest.raises(ShapeError, match=message):
        _err(in_shapes, [np.zeros(s, np.float32) for s in shapes], env)


def test_a_spec_the_padded_shapes_cannot_solve_is_a_value_error() -> None:
    with pytest.raises(ValueError, match=r"cannot tell the padded size of m, n from the inputs: dimension 0 "
                                         r"\(m\*n\) of argument 0 is not linear"):
        _err(["m*n"], [np.zeros(12, np.float32)], {"n": 2, "m": 2})


def test_nonlinear_dims_check_against_linear_ones() -> None:
    out = mask(lambda a, b, c: pnp.sum(c), ["m", "n", "m*n"], "")(
        [np.zeros(3, np.float32), np.zeros(4, np.float32), np.ones(12, np.float32)], {"m": 2, "n": 3})
    assert float(out) == 6.0


def test_pytree_argument_must_match_its_spec_tree() -> None:
    with pytest.raises(ShapeError, match=r"argument 0 does not match its spec tree"):
        _err([{"a": "n"}], [{"b": X8}], {"n": 2})


def test_arguments_must_be_arrays() -> None:
    with pytest.raises(TypeError, match=r"mask\(<lambda>\) argument 0: expected an array.*got a value of type "
                                        r"builtins.str"):
        _err(["n"], ["hello"], {"n": 2})


# ---------------------------------------------------------------------------
# Errors: logical sizes


@pytest.mark.parametrize(
    "in_shapes, env, error, message",
    [
        (["n"], {"n": 9}, ValueError,
         r"the logical size of dimension 0 \(n\) of argument 0 is 9 \(n = 9\), larger than its padded size 8"),
        (["2*n"], {"n": 5}, ValueError,
         r"the logical size of dimension 0 \(2\*n\) of argument 0 is 10 \(n = 5\), larger than its padded size 8"),
        (["n"], {"n": 0}, ValueError, r"the logical size n = 0 must be at least 1"),
        (["n"], {"n": -2}, ValueError, r"the logical size n = -2 must be at least 1"),
        (["n"], {}, ValueError, r"logical_env has no size for n \(the in_shapes name n\)"),
        (["n"], {"n": 2.5}, TypeError, r"the logical size n must be an integer, got f32\[\]"),
        (["n"], {"n": True}, TypeError, r"the logical size n must be an integer, got bool\[\]"),
        (["n"], {"n": "3"}, TypeError, r"the logical size n must be an integer scalar, got str '3'"),
        (["n"], {"n": np.array([2, 3])}, ValueError,
         r"the logical size n must be a scalar, got i32\[2\]; for one size per example, vmap"),
    ],
)
def test_logical_sizes_are_checked(in_shapes: list[str], env: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        _err(in_shapes, [X8], env)


def test_logical_env_must_be_a_dict() -> None:
    with pytest.raises(TypeError, match=r"logical_env must be a dict from size names to sizes, got list"):
        mask(lambda x: x, ["n"], "n")([X8], [3])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Errors: the call and the output


def test_call_errors() -> None:
    f = mask(lambda x: x, ["n"], "n")
    with pytest.raises(TypeError, match=r"args must be a list of padded arrays, one per spec, got ndarray"):
        f(X8, {"n": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"in_shapes has 1 specs but 2 arguments were given"):
        f([X8, X8], {"n": 2})
    with pytest.raises(TypeError, match=r"in_shapes must be a list of shape specs, one per argument"):
        mask(lambda x: x, "n", "n")
    with pytest.raises(ValueError, match=r"out_shape names the size m, which no input spec names"):
        mask(lambda x: x, ["n"], "m")
    with pytest.raises(ValueError, match=r"cannot parse the shape spec 'n \+'"):
        mask(lambda x: x, ["n +"], "n")


@pytest.mark.parametrize(
    "fun, out_shape, message",
    [
        (lambda x: x, "2*n", r"the output has the shape \(n,\) but out_shape says \(2\*n,\): dimension 0 is n, not 2\*n"),
        (lambda x: x, "(n, 1)", r"the output has the shape \(n,\) of rank 1, but out_shape says \(n, 1\) of rank 2"),
        (lambda x: (x, x), "n", r"the function returned a tree PyTreeDef\(\(\*, \*\)\), which does not match "
                                r"out_shape's PyTreeDef\(\*\)"),
        (lambda x: (x, pnp.sum(x)), ("n", "n"), r"output 1 has the shape \(\) of rank 0"),
        (lambda x: np.zeros(8, np.float32), "n", r"dimension 0 is 8, not n"),
    ],
)
def test_output_must_match_out_shape(fun: Any, out_shape: Any, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        mask(fun, ["n"], out_shape)([X8], {"n": 3})


def test_shape_errors_inside_the_function_come_from_core() -> None:
    with pytest.raises(InconclusiveDimensionOperation, match=r"add: cannot tell whether the operand shapes \(n,\) "
                                                             r"and \(m,\) are equal"):
        mask(lambda x, y: lax.add(x, y), ["n", "m"], "n")([X8, X8], {"n": 3, "m": 3})


def test_a_leaked_masked_value_is_reported() -> None:
    leaked: list[Any] = []

    def f(x: Any) -> Any:
        leaked.append(x)
        return x

    mask(f, ["n"], "n")([X8], {"n": 3})
    with pytest.raises(TracerLeakError, match=r"created by mask over the sizes n<=8 was used"):
        ew.neg_p.bind(leaked[0])


def test_a_rule_making_the_wrong_padded_shape_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(masking_rules._rules, ew.neg_p, lambda env, vals, avals: vals[0][:2])
    with pytest.raises(AssertionError, match=r"the masking rule of neg made padded data f32\[2\] for the logical "
                                             r"result f32\[n\], but f32\[8\] was due"):
        mask(lambda x: -x, ["n"], "n")([X8], {"n": 3})


# ---------------------------------------------------------------------------
# What masking refuses, with the reason


def test_conv_with_a_symbolic_kernel_is_refused() -> None:
    dn = ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))

    def f(x: Any, w: Any) -> Any:
        return lax.conv_general_dilated(x, w, (1,), ((0, 0),), dimension_numbers=dn)

    with pytest.raises(NotImplementedError, match=r"mask: conv_general_dilated has a kernel of symbolic size along its "
                                                  r"spatial dimension 2; .* \(operands f32\[1,1,n\], f32\[1,1,k\]\)"):
        mask(f, ["(1, 1, n)", "(1, 1, k)"], "(1, 1, n - k + 1)")(
            [np.zeros((1, 1, 9), np.float32), np.zeros((1, 1, 3), np.float32)], {"n": 4, "k": 2})


def test_conv_groups_over_a_symbolic_size_are_refused() -> None:
    dn = ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))

    def f(x: Any, w: Any) -> Any:
        return lax.conv_general_dilated(x, w, (1,), ((0, 0),), dimension_numbers=dn, batch_group_count=2)

    with pytest.raises(NotImplementedError, match=r"splits a symbolic dimension into batch_group_count=2 groups"):
        mask(f, ["(2*b, 1, 3)", "(2, 1, 1)"], "(b, 2, 3)")(
            [np.zeros((4, 1, 3), np.float32), np.zeros((2, 1, 1), np.float32)], {"b": 1})


@pytest.mark.parametrize("i", [0, 2, 3, -1])
def test_scatter_with_a_partial_symbolic_window(i: int) -> None:
    """A window of symbolic size ``n`` into an axis of size ``n + 2`` is written
    entry by entry, so its padding overwrites nothing (a window that does not
    fit at ``i`` is dropped whole, as in drop mode)."""
    dn = ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))

    def f(x: Any, i: Any, u: Any) -> Any:
        return st.scatter_p.bind(x, i, u, dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                                 mode=GatherScatterMode.FILL_OR_DROP)

    x = np.arange(8, dtype=np.float32)
    u = 10 + np.arange(6, dtype=np.float32)[None]
    got = mask(f, ["n + 2", "(1, 1)", "(1, n)"], "n + 2")([x, np.full((1, 1), i, np.int32), u], {"n": 3})
    want = x[:5].copy()
    if 0 <= i <= 2:
        want[i : i + 3] = u[0, :3]
    np.testing.assert_array_equal(np.asarray(got)[:5], want)


def test_collectives_stage_on_padded_data() -> None:
    masked = mask(lambda x: lax.psum(x * 2.0, "i"), ["n"], "n")
    closed = make_jaxpr(lambda x: masked([x], {"n": np.int32(3)}), axis_env=[("i", 2)])(X8)
    psums = [e for e in closed.jaxpr.eqns if e.primitive.name == "psum"]
    assert len(psums) == 1 and psums[0].outvars[0].aval.shape == (8,)


def test_tiled_all_gather_of_a_symbolic_axis_is_refused() -> None:
    masked = mask(lambda x: lax.all_gather(x, "i", tiled=True), ["n"], "2*n")
    with pytest.raises(NotImplementedError, match=r"all_gather\(tiled=True\) along axis 0 of symbolic size n"):
        make_jaxpr(lambda x: masked([x], {"n": np.int32(3)}), axis_env=[("i", 2)])(X8)
    untiled = mask(lambda x: lax.all_gather(x, "i"), ["n"], "(2, n)")
    closed = make_jaxpr(lambda x: untiled([x], {"n": np.int32(3)}), axis_env=[("i", 2)])(X8)
    assert closed.out_avals[0].shape == (2, 8)
