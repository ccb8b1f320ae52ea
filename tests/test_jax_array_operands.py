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


class TreeHolder:
    """As a flax.nnx Variable: a pytree node over its value that also defines ``__jax_array__``."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __jax_array__(self) -> Any:
        return self.value


plait.tree_util.register_pytree_node(TreeHolder, lambda h: ((h.value,), None), lambda _, c: TreeHolder(c[0]))


def test_numpy_functions_take_jax_array_objects() -> None:
    h = TreeHolder(jnp.arange(6.0).reshape(2, 3))
    assert float(jnp.mean(h)) == 2.5
    np.testing.assert_array_equal(np.asarray(jnp.reshape(h, (3, 2))), np.arange(6.0).reshape(3, 2))
    assert float(jnp.max(h)) == 5.0 and jnp.transpose(h).shape == (3, 2)
    # under grad the holder is rebuilt around the traced value, and the function still reads it
    grads = plait.grad(lambda t: jnp.mean(t))(h)
    assert type(grads) is TreeHolder
    np.testing.assert_allclose(np.asarray(grads.value), np.full((2, 3), 1 / 6), rtol=1e-6)
