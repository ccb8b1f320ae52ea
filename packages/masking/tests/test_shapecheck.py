"""``shapecheck``: symbolic shape checking and its errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core.numpy as pnp
from plait_core import lax
from plait_masking import ShapeError, shapecheck


def test_a_correct_function_is_returned_unchanged() -> None:
    def f(x: Any, y: Any) -> Any:
        return pnp.concatenate([x, y]) @ pnp.ones((x.shape[0] + y.shape[0], 3))

    assert shapecheck(["n", "m"], "3")(f) is f


@pytest.mark.parametrize(
    "in_shapes, out_shape, fun",
    [
        (["(n, 3)"], "3*n", lambda x: pnp.reshape(x, (-1,))),
        (["(n, k)", "(k, m)"], "(n, m)", lambda a, b: a @ b),
        (["n"], "n + 2", lambda x: pnp.pad(x, (1, 1))),
        (["2*n"], "(n, 2)", lambda x: x.reshape((x.shape[0] // 2, 2))),
        (["n"], "", pnp.mean),
        (["(n, _)"], "(_, n)", lambda x: x.T),
        (["n", "n"], ("n", ""), lambda x, y: (x * y, pnp.dot(x, y))),
        ([{"a": "n", "b": "(n, 2)"}], "2", lambda p: p["a"] @ p["b"]),
        (["(n, 3)", "3"], ("3", "(n, 3)"), lambda xs, h: lax.scan(lambda c, x: (c + x, c * x), h, xs)),
    ],
)
def test_shapes_that_agree(in_shapes: list[Any], out_shape: Any, fun: Any) -> None:
    assert shapecheck(in_shapes, out_shape)(fun) is fun


@pytest.mark.parametrize(
    "in_shapes, out_shape, fun, message",
    [
        (["n", "m"], "n", lambda x, y: lax.add(x, y),
         r"shapecheck\(<lambda>\): add: cannot tell whether the operand shapes \(n,\) and \(m,\) are equal"),
        (["n", "2*n"], "n", lambda x, y: lax.add(x, y),
         r"shapecheck\(<lambda>\): add requires operands of equal shapes .* got \(n,\) and \(2\*n,\)"),
        (["(n, k)", "(m, 3)"], "(n, 3)", lambda a, b: a @ b,
         r"shapecheck\(<lambda>\): .*\(n, k\).*\(m, 3\)"),
        (["n"], "2*n", lambda x: x,
         r"shapecheck\(<lambda>\): the output has the shape \(n,\) but out_shape says \(2\*n,\): dimension 0 is n, "
         r"not 2\*n"),
        (["n"], "(n, 1)", lambda x: x,
         r"the output has the shape \(n,\) of rank 1, but out_shape says \(n, 1\) of rank 2"),
        (["n"], ("n", "n"), lambda x: x,
         r"the function returned a tree PyTreeDef\(\*\), which does not match out_shape's PyTreeDef\(\(\*, \*\)\)"),
        (["_", "_"], "_", lambda x, y: lax.add(x, y),
         r"add: cannot tell whether the operand shapes \(_1,\) and \(_2,\) are equal"),
        (["n"], "m", lambda x: x, r"dimension 0 is n, not m"),
    ],
)
def test_mismatches_raise_shape_error(in_shapes: list[Any], out_shape: Any, fun: Any, message: str) -> None:
    with pytest.raises(ShapeError, match=message):
        shapecheck(in_shapes, out_shape)(fun)


def test_shape_error_is_a_type_error() -> None:
    assert issubclass(ShapeError, TypeError)
    with pytest.raises(TypeError):
        shapecheck(["n", "m"], "n")(lambda x, y: lax.add(x, y))


def test_inputs_take_the_given_dtype() -> None:
    seen: list[Any] = []
    shapecheck(["n"], "n", dtype=np.int32)(lambda x: seen.append(x.dtype) or x)
    assert seen == [np.dtype(np.int32)]


def test_spec_errors() -> None:
    with pytest.raises(ValueError, match=r"cannot parse the shape spec '\(n,, m\)': dimension 1 is empty"):
        shapecheck(["(n,, m)"], "n")(lambda x: x)
    with pytest.raises(TypeError, match=r"shapecheck\(<lambda>\): out_shape is required"):
        shapecheck(["n"], None)(lambda x: x)
