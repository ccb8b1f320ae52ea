"""An array operator's other operand that defines ``__jax_array__`` (flax.nnx's
Variables) stands for the array it gives, as in JAX 0.10.2 (``x @ variable``
failed in plait when the operator's eager program was staged) (issue 25)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
from plait import numpy as jnp


class Holder:
    """Not an array and not a pytree: only ``__jax_array__`` says what it is."""

    def __init__(self, value: Any) -> None:
        self._value = value

    def __jax_array__(self) -> Any:
        return jnp.asarray(self._value)


@pytest.mark.parametrize(("op", "expected"), [
    (lambda x, h: x + h, [2.0, 4.0]),
    (lambda x, h: h + x, [2.0, 4.0]),
    (lambda x, h: x @ h, 5.0),
    (lambda x, h: h @ x, 5.0),
    (lambda x, h: x ** h, [1.0, 4.0]),
    (lambda x, h: x - h, [0.0, 0.0]),
    (lambda x, h: x < h, [False, False]),
])
def test_operators_take_jax_array_objects(op: Any, expected: Any) -> None:
    x = jnp.asarray([1.0, 2.0])
    h = Holder(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(op(x, h)), expected)
    # the same under jit, with the holder around a traced value
    traced = plait.jit(lambda v: op(x, Holder(v)))(np.array([1.0, 2.0], np.float32))
    np.testing.assert_array_equal(np.asarray(traced), expected)


def test_objects_without_it_are_still_refused() -> None:
    with pytest.raises(TypeError, match="unsupported operand"):
        jnp.ones(2) @ object()  # type: ignore[operator]
