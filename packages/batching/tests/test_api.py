"""``vmap``'s interface: every in_axes/out_axes form, axis_size, keyword
arguments, and every error a user can cause (type and message)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
import plait_core.numpy as pnp
from plait_batching import vmap
from plait_core import lax
from plait_core.errors import ConcretizationTypeError, TracerLeakError

f32, i32 = np.float32, np.int32
rng = np.random.default_rng(0)


def randn(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(f32)


# ---------------------------------------------------------------------------
# in_axes


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_int_in_axes_map_that_axis(axis: int) -> None:
    x = randn(2, 3, 4)
    out = vmap(lambda a: lax.reduce_sum(a, (0,)), in_axes=axis)(x)
    expected = np.stack([np.take(x, b, axis=axis).sum(0) for b in range(x.shape[axis])])
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_none_in_axes_pass_the_argument_to_every_element() -> None:
    x, y = randn(4, 3), randn(3)
    out = vmap(lambda a, b: lax.mul(a, b), in_axes=(0, None))(x, y)
    np.testing.assert_allclose(out, x * y)
    out = vmap(lambda a, b: lax.mul(a, b), in_axes=[None, 1])(y, x.T)  # a list counts as a tuple
    np.testing.assert_allclose(out, x * y)


def test_in_axes_as_pytree_prefixes() -> None:
    tree = {"a": randn(2, 5), "b": (randn(5), randn(3, 5))}

    def f(t: Any, s: Any) -> Any:
        return lax.add(lax.add(t["a"][0], t["b"][0]), lax.add(t["b"][1][1], s))

    in_axes = ({"a": 1, "b": (None, 1)}, 0)
    s = randn(5)
    out = vmap(f, in_axes=in_axes)(tree, s)
    expected = np.stack([tree["a"][0, b] + tree["b"][0] + tree["b"][1][1, b] + s[b] for b in range(5)])
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_non_array_leaves_pass_through_unmapped() -> None:
    out = vmap(lambda x, scale, how: lax.mul(x, scale) if how == "mul" else x, in_axes=(0, None, None))(
        randn(3), 2.0, "mul"
    )
    assert out.shape == (3,)


def test_keyword_arguments_are_mapped_over_axis_0() -> None:
    x, y = randn(3, 2), randn(3, 2)
    out = vmap(lambda a, *, b: lax.sub(a, b), in_axes=(1,))(x.T, b=y)
    np.testing.assert_allclose(out, x - y)


def test_axis_size_maps_a_function_without_mapped_arguments() -> None:
    out = vmap(lambda x: lax.add(x, 1.0), in_axes=None, axis_size=4)(np.float32(2))
    np.testing.assert_array_equal(out, np.full(4, 3, f32))
    out = vmap(lambda: np.arange(3, dtype=i32), axis_size=2)()
    np.testing.assert_array_equal(out, np.tile(np.arange(3, dtype=i32), (2, 1)))


def test_axis_size_that_agrees_is_accepted() -> None:
    np.testing.assert_allclose(vmap(lax.neg, axis_size=3)(np.ones(3, f32)), -np.ones(3, f32))


# ---------------------------------------------------------------------------
# out_axes


@pytest.mark.parametrize("out_axes", [0, 1, 2, -1, -3])
def test_int_out_axes_place_the_batch(out_axes: int) -> None:
    x = randn(4, 2, 3)
    out = vmap(lambda a: lax.mul(a, 2.0), out_axes=out_axes)(x)
    np.testing.assert_allclose(out, np.moveaxis(x * 2, 0, out_axes))


def test_unmapped_outputs_are_broadcast_along_out_axes() -> None:
    y = randn(3)
    out = vmap(lambda a: (a, y, 7), out_axes=(0, 1, 0))(randn(4, 2))
    np.testing.assert_allclose(out[1], np.broadcast_to(y[:, None], (3, 4)))
    np.testing.assert_array_equal(out[2], np.full(4, 7, i32))


def test_out_axes_none_returns_unmapped_values_as_they_are() -> None:
    y = randn(3)
    mapped, same = vmap(lambda a: (lax.neg(a), lax.add(y, 1.0)), out_axes=(0, None))(randn(4, 2))
    assert mapped.shape == (4, 2)
    np.testing.assert_allclose(same, y + 1)


def test_out_axes_as_a_pytree_prefix() -> None:
    x = randn(4, 2)
    out = vmap(lambda a: {"p": a, "q": (a, lax.neg(a))}, out_axes={"p": 1, "q": 0})(x)
    np.testing.assert_allclose(out["p"], x.T)
    np.testing.assert_allclose(out["q"][1], -x)


# ---------------------------------------------------------------------------
# Behaviour of batched values


def test_vmap_keeps_the_function_name_and_docstring() -> None:
    def loss(x: Any) -> Any:
        """The loss."""
        return x

    mapped = vmap(loss)
    assert mapped.__name__ == "loss" and mapped.__doc__ == "The loss."


def test_numpy_api_and_operators_work_on_batched_values() -> None:
    x = randn(3, 4)
    out = vmap(lambda a: pnp.sum(a[1:] * 2 + a[0]) / a.shape[0])(x)
    expected = np.array([(x[b, 1:] * 2 + x[b, 0]).sum() / 4 for b in range(3)])
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_python_control_flow_on_a_batched_value_is_a_concretization_error() -> None:
    def f(x: Any) -> Any:
        return x if x > 0 else -x

    with pytest.raises(ConcretizationTypeError, match=r"bool\(\) needs a concrete value, but got a traced value bool\[\] \(by vmap over the axis of size 3\)"):
        vmap(f)(randn(3))


def test_a_leaked_batched_value_is_reported() -> None:
    leaked = []

    def f(x: Any) -> Any:
        leaked.append(x)
        return x

    vmap(f)(randn(3))
    with pytest.raises(TracerLeakError, match=r"after that transformation ended"):
        lax.neg(leaked[0])


def test_vmap_of_make_jaxpr_and_make_jaxpr_of_vmap_agree() -> None:
    x = randn(3, 2)
    f = vmap(lambda a: lax.exp(lax.reduce_max(a, (0,))))
    closed = pc.make_jaxpr(f)(x)
    pc.check_jaxpr(closed)
    np.testing.assert_allclose(pc.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], np.exp(x.max(1)), rtol=1e-6)


def test_nested_vmap_with_different_in_axes() -> None:
    x, y = randn(2, 3), randn(4, 3)
    out = vmap(vmap(lax.mul, in_axes=(None, 0)), in_axes=(0, None))(x, y)
    np.testing.assert_allclose(out, x[:, None, :] * y[None, :, :], rtol=1e-6)
    out = vmap(vmap(lax.mul, in_axes=(None, 1)), in_axes=(1, None), out_axes=2)(x.T, y.T)
    np.testing.assert_allclose(out, np.moveaxis(x[:, None, :] * y[None, :, :], 0, 2), rtol=1e-6)


def test_shape_errors_inside_vmap_are_the_primitive_errors() -> None:
    with pytest.raises(ValueError, match=r"mul requires operands of equal shapes .*\(3, 1\) and \(3,\)"):
        vmap(vmap(lax.mul, in_axes=(None, 0)), in_axes=(0, None))(randn(2, 3, 1), randn(4, 3))


# ---------------------------------------------------------------------------
# Errors


def test_inconsistent_sizes_name_every_mapped_argument() -> None:
    def f(x: Any, y: Any) -> Any:
        return lax.add(x, y)

    with pytest.raises(ValueError, match=r"inconsistent sizes") as e:
        vmap(f, in_axes=(0, 1))(randn(2, 3), randn(2, 3))
    msg = str(e.value)
    assert "argument x of type f32[2,3] has size 2 along its mapped axis 0" in msg
    assert "argument y of type f32[2,3] has size 3 along its mapped axis 1" in msg


def test_inconsistent_sizes_inside_pytrees_name_the_leaf() -> None:
    with pytest.raises(ValueError, match=r"argument t\['b'\]\[1\] of type f32\[4\] has size 4"):
        vmap(lambda t: t["a"])({"a": randn(3), "b": (randn(3), randn(4))})


def test_axis_size_that_disagrees_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"(?s)axis_size=5 was given.*argument x of type f32\[3\] has size 3"):
        vmap(lambda x: x, axis_size=5)(randn(3))


@pytest.mark.parametrize("axis", [2, -3])
def test_in_axis_out_of_range(axis: int) -> None:
    with pytest.raises(ValueError, match=rf"map argument x of type f32\[2,3\] over axis {axis}.*rank 2: the axis must be in \[-2, 2\)"):
        vmap(lambda x: x, in_axes=axis)(randn(2, 3))


def test_mapping_a_scalar_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"argument x of type f32\[\] over axis 0.*a scalar \(rank 0\)"):
        vmap(lambda x: x)(np.float32(1))


def test_mapping_a_non_array_leaf_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"argument s is mapped over axis 0 .* value of type str, not an array"):
        vmap(lambda x, s: x)(randn(2), "abc")


def test_mapped_output_with_out_axes_none_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"output leaf \[1\] .* is batched\), but out_axes is None"):
        vmap(lambda x: (x, lax.neg(x)), out_axes=(0, None))(randn(3))


def test_out_axes_out_of_range() -> None:
    with pytest.raises(ValueError, match=r"out_axes 3 is out of range .* elements have rank 1"):
        vmap(lambda x: x, out_axes=3)(randn(2, 3))


def test_non_array_output_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"of type str, which is not an array"):
        vmap(lambda x: (x, "label"))(randn(2))


def test_in_axes_structure_mismatch() -> None:
    with pytest.raises(ValueError, match=r"in_axes specification must be a tree prefix .*argument t"):
        vmap(lambda t: t, in_axes=({"a": 0, "c": 0},))({"a": randn(2), "b": randn(2)})


def test_in_axes_tuple_of_wrong_length() -> None:
    with pytest.raises(ValueError, match=r"tuple of length 1 .* for 2 positional arguments"):
        vmap(lambda x, y: x, in_axes=(0,))(randn(2), randn(2))


@pytest.mark.parametrize("bad", [1.0, "0", {"x": 0}, (0, "a")])
def test_malformed_in_axes_is_a_type_error(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"vmap in_axes must be an int, None, or a"):
        vmap(lambda x: x, in_axes=bad)


def test_malformed_out_axes_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"vmap out_axes must be an int, None, or a .* entry 'x'"):
        vmap(lambda x: x, out_axes=(0, "x"))


def test_nothing_mapped_without_axis_size() -> None:
    with pytest.raises(ValueError, match=r"at least one mapped argument .* pass axis_size=n"):
        vmap(lambda x: x, in_axes=None)(randn(2))


def test_non_callable_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"vmap requires a callable.*int"):
        vmap(3)  # type: ignore[arg-type]


def test_bad_axis_size_and_axis_name() -> None:
    with pytest.raises(TypeError, match=r"axis_size must be a non-negative int"):
        vmap(lambda x: x, axis_size=-1)
    with pytest.raises(TypeError, match=r"axis_name must be hashable"):
        vmap(lambda x: x, axis_name=["i"])
