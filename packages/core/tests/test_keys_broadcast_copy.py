"""Typed key arrays as flax.nnx's Rngs use them, as JAX 0.10.2's: ``jnp.broadcast_to``
of a key array, ``key.copy()``; ``random.bernoulli(..., out_sharding=None)`` (issue 25)."""

from __future__ import annotations

import numpy as np
import pytest

from plait_core import numpy as pnp
from plait_core import random


def test_broadcast_to_a_key_array_repeats_its_keys() -> None:
    keys = random.split(random.key(1), 2)
    out = pnp.broadcast_to(keys, (3, 2))
    assert out.shape == (3, 2) and str(out.dtype) == "key<fry>"
    data = np.asarray(random.key_data(out))
    np.testing.assert_array_equal(data, np.broadcast_to(np.asarray(random.key_data(keys)), (3, 2, 2)))
    with pytest.raises(ValueError, match="broadcast_to: cannot broadcast"):
        pnp.broadcast_to(keys, (3,))


def test_key_copy_is_the_same_keys() -> None:
    key = random.key(7)
    copy = key.copy()
    assert copy is not key and copy.shape == () and str(copy.dtype) == "key<fry>"
    np.testing.assert_array_equal(np.asarray(random.key_data(copy)), np.asarray(random.key_data(key)))


def test_bernoulli_takes_out_sharding_none() -> None:
    key = random.key(0)
    np.testing.assert_array_equal(np.asarray(random.bernoulli(key, 0.3, (50,), out_sharding=None)),
                                  np.asarray(random.bernoulli(key, 0.3, (50,))))


def test_indexing_everything_returns_the_key_array_itself() -> None:
    # As JAX 0.10.2 (flax.nnx's Rngs tests check `key[...] is key`).
    keys = random.split(random.key(0), 3)
    key = random.key(5)
    assert keys[:] is keys and keys[...] is keys
    assert key[...] is key and key[()] is key
    first = keys[1]
    assert first is not keys and first.shape == ()
    np.testing.assert_array_equal(np.asarray(random.key_data(first)), np.asarray(random.key_data(keys))[1])
    assert keys[None].shape == (1, 3)
