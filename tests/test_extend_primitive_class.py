"""``plait.extend.core.Primitive`` is, for ``isinstance``, the class of every
primitive, as JAX's ``jax.extend.core.Primitive`` (equinox type-checks plait's own
primitives against it); its ``get_bind_params`` returns the params dict as JAX
0.10.2's; plait's own primitives still cannot be given a lowering."""

from __future__ import annotations

import numpy as np
import pytest

from plait.extend._primitive import is_extension
from plait.extend.core import Primitive, primitives
from plait.interpreters import mlir
from plait_core import ShapedArray


class _MyPrimitive(Primitive):
    pass


def test_every_primitive_is_an_instance() -> None:
    ext = Primitive("ext_isinstance")
    sub = _MyPrimitive("sub_isinstance")
    for p in (primitives.add_p, primitives.sin_p, ext, sub):
        assert isinstance(p, Primitive), p
    assert not isinstance("add", Primitive) and not isinstance(3, Primitive)
    assert isinstance(sub, _MyPrimitive) and not isinstance(primitives.add_p, _MyPrimitive)
    assert not isinstance(ext, _MyPrimitive)
    assert [is_extension(p) for p in (primitives.add_p, ext, sub)] == [False, True, True]


def test_get_bind_params_is_the_params_dict() -> None:
    p = Primitive("bind_params_dict")
    params = {"axis": 1, "name": "x"}
    got = p.get_bind_params(params)
    assert got == params and type(got) is dict and got is not params
    assert primitives.add_p.get_bind_params({}) == {}


def test_plaits_own_primitives_still_refuse_a_lowering() -> None:
    with pytest.raises(TypeError, match=r"not a primitive made with plait\.extend\.core\.Primitive"):
        mlir.register_lowering(primitives.sin_p, mlir.lower_fun(np.sin))
    p = Primitive("lowered_ext")
    p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
    assert mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False)) is p.lowerings[None]
