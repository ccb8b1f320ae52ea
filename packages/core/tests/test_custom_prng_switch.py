"""``enable_custom_prng`` (JAX's ``jax_enable_custom_prng``): while on,
``random.PRNGKey`` returns a typed key array over the same data; off by
default, as in JAX 0.10.2."""

from __future__ import annotations

import numpy as np

from plait_core import random
from plait_core.config import config, enable_custom_prng
from plait_core.prng import PRNGKeyArray


def test_prng_key_is_raw_by_default_and_typed_under_the_switch() -> None:
    assert config.read("jax_enable_custom_prng") is False and enable_custom_prng.value is False
    raw = random.PRNGKey(42)
    assert not isinstance(raw, PRNGKeyArray) and np.shape(raw) == (2,)
    with enable_custom_prng():
        assert config.jax_enable_custom_prng is True
        key = random.PRNGKey(42)
        assert isinstance(key, PRNGKeyArray) and key.shape == ()
        np.testing.assert_array_equal(np.asarray(random.key_data(key)), np.asarray(raw))
        keys = random.split(key, 2)
        assert isinstance(keys, PRNGKeyArray) and keys.shape == (2,)
        with enable_custom_prng(False):
            assert not isinstance(random.PRNGKey(0), PRNGKeyArray)
    assert not isinstance(random.PRNGKey(0), PRNGKeyArray)
    config.update("jax_enable_custom_prng", True)
    try:
        assert isinstance(random.PRNGKey(0), PRNGKeyArray)
    finally:
        config.update("jax_enable_custom_prng", False)
