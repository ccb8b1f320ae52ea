"""An unknown backend's error ends in JAX's words, "Unknown backend: 'gpu' requested",
which libraries match (chex's device tests) (issue 25)."""

from __future__ import annotations

import pytest

from plait_dispatch import devices, local_devices


@pytest.mark.parametrize("backend", ["gpu", "tpu"])
def test_unknown_backend_error_has_jax_words(backend: str) -> None:
    with pytest.raises(RuntimeError, match=f"devices: unknown backend '{backend}'; plait runs on: cpu") as e:
        devices(backend)
    assert f"Unknown backend: '{backend}' requested, but no platforms that are instances of {backend}" in str(e.value)
    with pytest.raises(RuntimeError, match=f"Unknown backend: '{backend}' requested"):
        local_devices(backend=backend)
