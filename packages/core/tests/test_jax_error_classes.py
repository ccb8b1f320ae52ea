"""Errors a JAX program can catch: plait raises JAX's exception classes (or
subclasses of them) with plait's messages."""

from __future__ import annotations

import numpy as np
import pytest

import plait_core
import plait_core.numpy as pnp
from plait_core import lax
from plait_core.errors import (
    ConcretizationTypeError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    TracerLeakError,
)


def test_bool_and_int_of_a_tracer_raise_the_conversion_subclasses() -> None:
    with pytest.raises(TracerBoolConversionError, match=r"bool\(\) needs a concrete value, but got a traced value bool\[\]"):
        plait_core.make_jaxpr(lambda x: 1.0 if x > 0 else 0.0)(np.float32(1))
    with pytest.raises(TracerIntegerConversionError, match=r"int\(\) needs a concrete value"):
        plait_core.make_jaxpr(lambda x: int(x))(np.float32(1))
    with pytest.raises(TracerIntegerConversionError, match=r"an index \(operator.index\) needs a concrete value"):
        plait_core.make_jaxpr(lambda i: [1, 2, 3][i])(np.int32(1))
    assert issubclass(TracerBoolConversionError, ConcretizationTypeError)
    assert issubclass(TracerIntegerConversionError, ConcretizationTypeError)
    assert issubclass(ConcretizationTypeError, TypeError)


def test_a_leaked_tracer_is_a_type_error_too() -> None:
    leaked: list[object] = []

    def f(x: object) -> object:
        leaked.append(x)
        return x

    plait_core.make_jaxpr(f)(np.float32(1))
    with pytest.raises(TypeError, match=r"after that transformation ended: the tracer leaked") as info:
        pnp.add(leaked[0], 1.0)
    assert isinstance(info.value, TracerLeakError) and isinstance(info.value, RuntimeError)


@pytest.mark.parametrize("op", [
    lambda a, b: pnp.dot(a, b),
    lambda a, b: pnp.matmul(a, b),
    lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
])
def test_contraction_size_mismatch_is_a_type_error(op: object) -> None:
    with pytest.raises(TypeError, match=r"(not aligned: 3 \(dim 1\) != 4 \(dim 0\))|(contracting dimension 1 of lhs "
                                        r"\(size 3\) and 0 of rhs \(size 4\) differ)"):
        op(np.ones((2, 3), np.float32), np.ones((4, 5), np.float32))  # type: ignore[operator]
