"""``plait.experimental.hijax`` (JAX's high-level types, as far as plait gives
them: eager high-level primitives, ``register_hitype``, the records and sets
flax.nnx builds on), ``plait.Ref`` / ``new_ref`` (not supported) and
``typeof`` of typed keys; each checked against JAX 0.10.2's behaviour."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest

import plait
from plait.experimental import hijax as hjx


class Box:
    """A user value of a high-level type (a mutable holder of one array)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def cur_qdd(self) -> str:
        return f"holds {plait.typeof(self.value).str_short()}"


class BoxType(hjx.MutableHiType):
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BoxType) and other.inner == self.inner

    __hash__ = None  # type: ignore[assignment]


class NewBox(hjx.HiPrimitive):
    def impl(self, value: Any, *, scale: float) -> Box:
        return Box(value * scale)

    def abstract_eval(self, aval: Any, *, scale: float) -> Any:
        return BoxType(aval), set()


new_box_p = NewBox("new_box")


def test_hi_primitive_runs_its_impl_method_eagerly() -> None:
    box = new_box_p.bind(plait.numpy.arange(3.0), scale=2.0)
    assert type(box) is Box
    np.testing.assert_array_equal(np.asarray(box.value), [0.0, 2.0, 4.0])
    assert new_box_p.name == "new_box" and repr(new_box_p) == "new_box"
    assert isinstance(new_box_p, plait.extend.core.Primitive)


@pytest.mark.parametrize("transform", ["jit", "grad", "vmap"])
def test_hi_primitive_under_a_transformation_is_not_supported(transform: str) -> None:
    def f(x: Any) -> Any:
        return new_box_p.bind(x, scale=2.0).value.sum()

    wrapped = {"jit": plait.jit(f), "grad": plait.grad(f), "vmap": plait.vmap(f)}[transform]
    with pytest.raises(NotImplementedError, match=r"not supported: the high-level \(hijax\) primitive new_box "
                                                  r"under a transformation .*ShapedArrays only"):
        wrapped(plait.numpy.ones((2, 3)))


def test_register_hitype_makes_typeof_answer() -> None:
    hjx.register_hitype(Box, lambda b: BoxType(plait.typeof(b.value)))
    box = Box(plait.numpy.ones((2,), "int32"))
    assert plait.typeof(box) == BoxType(plait.typeof(box.value))
    assert hjx.cur_qdd(box) == "holds i32[2]"
    with pytest.raises(TypeError, match="register_hitype: expected a class, got 3"):
        hjx.register_hitype(3, lambda b: b)  # type: ignore[arg-type]


def test_cur_qdd_refuses_traced_values_and_plain_values() -> None:
    with pytest.raises(NotImplementedError, match="not supported: cur_qdd of a traced value"):
        plait.jit(hjx.cur_qdd)(1.0)
    with pytest.raises(TypeError, match="cur_qdd: expected a value of a mutable high-level type, got int"):
        hjx.cur_qdd(1)


def test_records_are_jaxs() -> None:
    def f(x: Any) -> Any:
        return x

    assert hjx.aval_method(f).fun is f and hjx.aval_method._fields == ("fun",)
    assert hjx.aval_property(fget=f).fget is f and hjx.aval_property._fields == ("fget",)
    assert hjx.AvalQDD(1, 2) == hjx.AvalQDD(aval=1, qdd=2) != hjx.AvalQDD(1, 3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        hjx.AvalMutableQDD(1, []).aval = 2  # type: ignore[misc]
    assert hjx.MutableHiType.has_qdd and not hjx.HiType.has_qdd and hjx.HiType.is_high
    assert hjx.AbstractValue is plait.core.ShapedArray is hjx.ShapedArray


def test_effect_type_sets_contain_instances_of_their_types() -> None:
    class MyEffect(plait.extend.core.Effect):
        pass

    effects = hjx.EffectTypeSet()
    assert not effects.contains(MyEffect())
    effects.add_type(MyEffect)
    assert effects.contains(MyEffect()) and not effects.contains(object())
    mine = MyEffect()
    assert effects.filter_in([mine, 1]) == [mine] and effects.filter_not_in([mine, 1]) == [1]
    with pytest.raises(TypeError, match="add_type: expected an effect class"):
        effects.add_type(mine)  # type: ignore[arg-type]
    assert isinstance(hjx.control_flow_allowed_effects, hjx.EffectTypeSet)


def test_ad_helpers_are_plait_autodiffs() -> None:
    zero = hjx.Zero(plait.core.ShapedArray((2,), np.float32))
    np.testing.assert_array_equal(np.asarray(hjx.instantiate_zeros(zero)), [0.0, 0.0])
    assert hjx.instantiate_zeros(3.0) == 3.0
    assert not hjx.is_undefined_primal(1.0)
    assert hjx.Zero is plait.interpreters.ad.Zero


def test_refs_are_not_supported() -> None:
    assert not isinstance(plait.numpy.ones(3), plait.Ref)
    assert not isinstance(plait.typeof(plait.numpy.ones(3)), (hjx.AbstractRef, hjx.TransformedRef))
    with pytest.raises(NotImplementedError, match=r"new_ref: not supported: plait has no mutable array references"):
        plait.new_ref(plait.numpy.ones(3))
    with pytest.raises(NotImplementedError, match="not supported: plait has no mutable array references"):
        plait.Ref()
    with pytest.raises(NotImplementedError, match="no TransformedRef to make"):
        hjx.TransformedRef()


def test_typeof_a_typed_key_array_is_its_key_aval() -> None:
    keys = plait.random.split(plait.random.key(0), 3)
    aval = plait.typeof(keys)
    assert repr(aval) == "ShapedArray(key<fry>[3])" and aval.shape == (3,) and str(aval.dtype) == "key<fry>"
    assert repr(plait.typeof(keys[0])) == "ShapedArray(key<fry>[])"
    seen = []
    plait.jit(lambda k: seen.append(repr(plait.typeof(k))))(keys)
    assert seen == ["ShapedArray(key<fry>[3])"]
