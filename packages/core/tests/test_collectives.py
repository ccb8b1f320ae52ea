"""Named-axis collectives: staging with an axis environment, result types,
and the errors for unbound axis names and bad arguments.

Their values are defined by the interpreter that maps the axis (batching),
so core checks types, jaxprs and errors; evaluation here can only fail."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import dtypes, lax
from plait_core.abstract import ShapedArray
from plait_core.errors import UnboundAxisNameError
from plait_core.primitives.collectives import all_gather_p, axis_index_p, pmean_p, psum_p

f32, i32 = np.float32, np.int32
REDUCTIONS = [lax.psum, lax.pmean, lax.pmax, lax.pmin]


def _stage(f: Any, *args: Any, env: Any = (("i", 4),)) -> pc.ClosedJaxpr:
    closed: pc.ClosedJaxpr = pc.make_jaxpr(f, axis_env=list(env))(*args)
    with pc.extend_axis_env(list(env)):
        pc.check_jaxpr(closed)
    return closed


@pytest.mark.parametrize("fn", REDUCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float16, dtypes.bfloat16, dtypes.int32], ids=str)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)], ids=str)
def test_reductions_stage_with_an_axis_env(fn: Any, dtype: Any, shape: tuple[int, ...]) -> None:
    closed = _stage(lambda x: fn(x, "i"), np.zeros(shape, dtype))
    (eqn,) = closed.eqns
    assert eqn.primitive.name == fn.__name__ and eqn.params == {"axes": ("i",)}
    out_dtype = dtypes.float32 if fn is lax.pmean and dtype == dtypes.int32 else dtype
    assert closed.out_avals == [ShapedArray(shape, out_dtype)]


def test_reductions_over_pytrees_and_several_axes() -> None:
    tree = {"a": np.zeros(2, f32), "b": (np.zeros((), i32),)}
    closed = _stage(lambda t: lax.psum(t, ("i", "j")), tree, env=[("i", 2), ("j", 3)])
    assert [e.params["axes"] for e in closed.eqns] == [("i", "j"), ("i", "j")]
    assert closed.out_avals == [ShapedArray((2,), f32), ShapedArray((), i32)]
    out_tree = pc.make_jaxpr(lambda t: lax.pmax(t, "i"), axis_env=[("i", 2)], return_shape=True)(tree)[1]
    assert out_tree == {"a": pc.ShapeDtypeStruct((2,), f32), "b": (pc.ShapeDtypeStruct((), i32),)}


def test_psum_of_booleans_sums_int32() -> None:
    closed = _stage(lambda x: lax.psum(x, "i"), np.zeros(3, bool))
    assert [e.primitive.name for e in closed.eqns] == ["convert_element_type", "psum"]
    assert closed.out_avals == [ShapedArray((3,), i32)]


@pytest.mark.parametrize(
    ("axis", "tiled", "shape"),
    [(0, False, (4, 2, 3)), (1, False, (2, 4, 3)), (2, False, (2, 3, 4)), (-1, False, (2, 3, 4)),
     (0, True, (8, 3)), (1, True, (2, 12)), (-2, True, (8, 3))],
)
def test_all_gather_shapes(axis: int, tiled: bool, shape: tuple[int, ...]) -> None:
    closed = _stage(lambda x: lax.all_gather(x, "i", axis=axis, tiled=tiled), np.zeros((2, 3), f32))
    (eqn,) = closed.eqns
    assert eqn.params == {"axis_name": "i", "axis": axis % (2 if tiled else 3), "tiled": tiled}
    assert closed.out_avals == [ShapedArray(shape, f32)]


def test_all_gather_over_two_axes_multiplies_sizes() -> None:
    closed = _stage(lambda x: lax.all_gather(x, ("i", "j")), np.zeros(5, i32), env=[("i", 2), ("j", 3)])
    assert closed.out_avals == [ShapedArray((6, 5), i32)]


def test_axis_index_is_an_int32_scalar() -> None:
    closed = _stage(lambda x: lax.add(x, lax.axis_index("i")), np.zeros(3, i32))
    assert [e.primitive.name for e in closed.eqns] == ["axis_index", "add"]
    assert closed.eqns[0].params == {"axis_name": "i"}
    assert closed.out_avals == [ShapedArray((3,), i32)]


def test_innermost_binding_of_a_name_wins() -> None:
    closed = _stage(lambda x: lax.all_gather(x, "i"), np.zeros(2, f32), env=[("i", 4), ("i", 7)])
    assert closed.out_avals == [ShapedArray((7, 2), f32)]


def test_collectives_inside_control_flow_stage() -> None:
    def f(xs: Any) -> Any:
        return lax.scan(lambda c, x: (lax.add(c, lax.psum(x, "i")), lax.axis_index("i")), f32(0), xs)

    closed = _stage(f, np.zeros(3, f32))
    body = closed.eqns[0].params["jaxpr"]
    assert [e.primitive.name for e in body.eqns] == ["psum", "add", "axis_index"]
    assert closed.out_avals == [ShapedArray((), f32), ShapedArray((3,), i32)]


@pytest.mark.parametrize(
    "call",
    [
        lambda x: lax.psum(x, "k"),
        lambda x: lax.pmean(x, "k"),
        lambda x: lax.pmax(x, "k"),
        lambda x: lax.pmin(x, "k"),
        lambda x: lax.all_gather(x, "k"),
        lambda x: lax.axis_index("k"),
    ],
)
def test_unbound_axis_names_raise_name_errors(call: Any) -> None:
    x = np.ones(3, f32)
    with pytest.raises(NameError, match=r"uses the axis name 'k', which is not bound here \(bound axis names: none\)"):
        pc.make_jaxpr(call)(x)
    with pytest.raises(UnboundAxisNameError, match=r"uses the axis name 'k', which is not bound here "
                       r"\(bound axis names: 'i'\); bind it with vmap\(..., axis_name='k'\)"):
        pc.make_jaxpr(call, axis_env=[("i", 2)])(x)
    with pytest.raises(UnboundAxisNameError, match=r"the axis name 'k', which is not bound here"):
        call(x)  # eagerly


def test_unbound_name_error_names_the_collective() -> None:
    with pytest.raises(UnboundAxisNameError, match=r"^all_gather uses the axis name 'j'"):
        pc.make_jaxpr(lambda x: lax.all_gather(x, ("i", "j")), axis_env=[("i", 2)])(np.ones(2, f32))
    with pytest.raises(UnboundAxisNameError, match=r"^psum uses the axis name 'q'"):
        pc.make_jaxpr(lambda x: lax.psum(x, "q"))(np.ones(2, f32))


def test_bound_axis_cannot_be_evaluated_eagerly() -> None:
    with pc.extend_axis_env([("i", 3)]):
        with pytest.raises(UnboundAxisNameError, match=r"psum over the axis 'i' \(size 3\) cannot be evaluated "
                           r"eagerly: no transformation maps over that axis here"):
            lax.psum(np.ones(2, f32), "i")
        with pytest.raises(UnboundAxisNameError, match=r"axis_index over the axis 'i' \(size 3\) cannot be evaluated"):
            lax.axis_index("i")


def test_collective_argument_errors() -> None:
    x = np.ones((2, 3), f32)
    env = [("i", 2)]
    with pytest.raises(ValueError, match=r"all_gather: axis 3 is out of range for an operand of type f32\[2,3\] "
                       r"\(tiled=False: -3 <= axis < 3\)"):
        pc.make_jaxpr(lambda x: lax.all_gather(x, "i", axis=3), axis_env=env)(x)
    with pytest.raises(ValueError, match=r"all_gather: axis 2 is out of range .* \(tiled=True: -2 <= axis < 2\)"):
        pc.make_jaxpr(lambda x: lax.all_gather(x, "i", axis=2, tiled=True), axis_env=env)(x)
    with pytest.raises(TypeError, match=r"all_gather: axis must be an int, got 'a'"):
        lax.all_gather(x, "i", axis="a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"psum argument leaf 0: expected an array.*str"):
        pc.make_jaxpr(lambda x: lax.psum(["text"], "i"), axis_env=env)(x)
    with pytest.raises(TypeError, match=r"an axis name must be hashable, got \['i'\] of type list"):
        lax.psum(x, (["i"],))
    with pytest.raises(ValueError, match=r"pmax: axis_name must name at least one axis, got \(\)"):
        lax.pmax(x, ())
    with pytest.raises(NotImplementedError, match=r"pmin: axis_index_groups is not supported"):
        lax.pmin(x, "i", axis_index_groups=[[0, 1]])


def test_primitive_level_errors() -> None:
    with pc.extend_axis_env([("i", 2)]):
        with pytest.raises(TypeError, match=r"psum: boolean operands are not supported \(got bool\[3\]\)"):
            psum_p.abstract_eval(ShapedArray((3,), bool), axes=("i",))
        with pytest.raises(TypeError, match=r"pmean: boolean operands are not supported"):
            pmean_p.abstract_eval(ShapedArray((3,), bool), axes=("i",))
        with pytest.raises(TypeError, match=r"psum: the param axes must be a non-empty tuple of axis names, got 'i'"):
            psum_p.abstract_eval(ShapedArray((3,), f32), axes="i")
        with pytest.raises(TypeError, match=r"all_gather: the param tiled must be a bool, got 1"):
            all_gather_p.abstract_eval(ShapedArray((3,), f32), axis_name="i", axis=0, tiled=1)
        assert axis_index_p.abstract_eval(axis_name=("i", "i")) == ShapedArray((), i32)
