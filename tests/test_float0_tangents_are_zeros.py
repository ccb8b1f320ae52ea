"""A ``float0`` tangent or cotangent (of an integer or boolean value) is a zero, as in
JAX 0.10.2: a library primitive without a JVP rule applied to an integer input of a
differentiated ``jit`` call runs (diffrax's adjoints: equinox's ``unvmap_max`` of a
step count), and a transpose rule never meets a ``float0`` cotangent as a value."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
import plait.numpy as jnp
from plait.extend.core import Primitive
from plait.interpreters import ad, mlir
from plait_core import ShapedArray, dtypes

max_p = Primitive("int_max_no_jvp")
max_p.def_impl(lambda n: np.asarray(n))
max_p.def_abstract_eval(lambda n: ShapedArray(n.shape, n.dtype))
mlir.register_lowering(max_p, mlir.lower_fun(lambda n: n, multiple_results=False))

seen: list[Any] = []
ident_p = Primitive("ident_checks_cotangents")
ident_p.def_impl(lambda x: x)
ident_p.def_abstract_eval(lambda x: ShapedArray(x.shape, x.dtype))
mlir.register_lowering(ident_p, mlir.lower_fun(lambda x: x, multiple_results=False))
ad.primitive_jvps[ident_p] = lambda primals, tangents: (ident_p.bind(*primals), ident_p.bind(*tangents))


def _transpose(ct: Any, x: Any) -> list[Any]:
    seen.append(ct if isinstance(ct, ad.Zero) else np.asarray(ct).dtype)
    assert isinstance(ct, ad.Zero) or np.asarray(ct).dtype != dtypes.float0, "a float0 cotangent as a value"
    return [ct]


ad.primitive_transposes[ident_p] = _transpose


def _f(x: Any, n: Any) -> Any:
    return x * max_p.bind(n).astype(jnp.float32)


def test_jvp_with_a_float0_tangent_value_needs_no_rule() -> None:
    zero = np.zeros((), dtypes.float0)
    out, t = plait.jvp(_f, (2.0, jnp.int32(3)), (1.0, zero))
    assert (float(out), float(t)) == (6.0, 3.0)
    out, t = plait.jvp(plait.jit(_f), (2.0, jnp.int32(3)), (1.0, zero))
    assert (float(out), float(t)) == (6.0, 3.0)


def test_grad_through_jit_with_an_integer_operand() -> None:
    g = plait.grad(lambda x: plait.jit(_f)(x, jnp.int32(4)))(2.0)
    assert float(g) == 4.0
    g = plait.jit(plait.grad(lambda x: plait.jit(lambda y, n: _f(y, ident_p.bind(n)))(x, jnp.int32(5))))(2.0)
    assert float(g) == 5.0
    assert all(isinstance(s, ad.Zero) or s != dtypes.float0 for s in seen)


def test_a_rule_still_runs_for_a_real_tangent() -> None:
    with pytest.raises(NotImplementedError, match="no JVP rule was registered for the primitive int_max_no_jvp"):
        plait.jvp(lambda x: max_p.bind(x), (2.0,), (1.0,))
