"""``numpy.array_equal`` of typed key arrays, as JAX 0.10.2's (flax.nnx's Rngs tests
compare keys with it): equal when their key data are, never equal to a plain array."""

from __future__ import annotations

import numpy as np

from plait_core import numpy as pnp
from plait_core import random
from plait_core.staging import make_jaxpr


def test_array_equal_compares_key_data() -> None:
    key = random.key(0)
    keys = random.split(key, 3)
    assert bool(pnp.array_equal(key, random.key(0)))
    assert bool(pnp.array_equal(keys, random.split(random.key(0), 3)))
    assert not bool(pnp.array_equal(keys[0], keys[1]))
    assert not bool(pnp.array_equal(keys, keys[:2]))  # shapes differ


def test_a_key_never_equals_a_plain_array() -> None:
    key = random.key(0)
    data = np.asarray(random.key_data(key))
    assert not bool(pnp.array_equal(key, data))
    assert not bool(pnp.array_equal(data, key))


def test_array_equal_of_keys_stages() -> None:
    keys = random.split(random.key(2), 2)
    jaxpr = make_jaxpr(pnp.array_equal)(keys, keys)
    assert str(jaxpr.out_avals[0].dtype) == "bool"
