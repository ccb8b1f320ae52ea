"""``jnp.array(x)`` and ``jnp.copy(x)`` of an Array return a new Array (as JAX
0.10.2's: flax.nnx's ``clone(arrays=True)`` checks ``is not``), while
``asarray`` and ``array(copy=False)`` return ``x`` itself (issue 25)."""

from __future__ import annotations

import numpy as np

import plait
from plait import numpy as jnp


def test_copies_are_new_arrays_with_the_same_values() -> None:
    x = jnp.arange(6.0).reshape(2, 3)
    for y in (jnp.array(x), jnp.copy(x), jnp.array(x, dtype=x.dtype)):
        assert y is not x
        np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
        assert y.dtype == x.dtype and y.sharding == x.sharding
    assert jnp.asarray(x) is x and jnp.array(x, copy=False) is x
    assert jnp.array(x, dtype=jnp.int32).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_copy_under_jit_is_the_value() -> None:
    x = jnp.arange(3.0)
    np.testing.assert_array_equal(np.asarray(plait.jit(lambda a: jnp.copy(a) + 1)(x)), [1.0, 2.0, 3.0])
