"""The persistent compilation cache: a second process loads what the first
compiled (asserted through the dispatch counters), thresholds, bad entries,
option checks."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import plait_dispatch as pd
from plait_core import config
from plait_core import numpy as pnp
from plait_dispatch import persistent_cache
from plait_dispatch.cache import clear_caches

PROGRAM = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    import plait_dispatch as pd
    from plait_core import config, numpy as pnp

    config.update("jax_compilation_cache_dir", sys.argv[1])
    config.update("jax_persistent_cache_min_compile_time_secs", 0)

    @pd.jit
    def f(x, y):
        return pnp.tanh(x @ y).sum(axis=0)

    out = f(np.arange(12.0, dtype=np.float32).reshape(3, 4), np.ones((4, 2), np.float32)) + 1
    print(json.dumps({"out": np.asarray(out).tolist(), "stats": pd.stats.snapshot()}))
    """
)


def _run(tmp_path: Path, cache_dir: Path) -> dict[str, Any]:
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    env = {k: v for k, v in os.environ.items() if k != "PLAIT_COMPILATION_CACHE_DIR"}
    done = subprocess.run(
        [sys.executable, str(script), str(cache_dir)], capture_output=True, text=True, timeout=180, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_second_process_compiles_nothing(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    first = _run(tmp_path, cache_dir)
    assert first["stats"]["xla_compiles"] >= 2  # the jitted f and the eager + 1
    assert first["stats"]["persistent_cache_writes"] == first["stats"]["xla_compiles"]
    assert first["stats"]["persistent_cache_hits"] == 0
    assert len(list(cache_dir.iterdir())) == first["stats"]["persistent_cache_writes"]
    second = _run(tmp_path, cache_dir)
    assert second["stats"]["xla_compiles"] == 0
    assert second["stats"]["xla_compile_seconds"] == 0.0
    assert second["stats"]["persistent_cache_hits"] == first["stats"]["xla_compiles"]
    want = np.tanh(np.arange(12.0).reshape(3, 4) @ np.ones((4, 2))).sum(axis=0) + 1
    np.testing.assert_allclose(second["out"], want, rtol=1e-6)
    assert second["out"] == first["out"]


@pytest.fixture
def cache_options() -> Iterator[None]:
    saved = (
        config.compilation_cache_dir,
        config.persistent_cache_min_compile_time_secs,
        config.persistent_cache_min_entry_size_bytes,
    )
    yield
    config.update("jax_compilation_cache_dir", saved[0])
    config.update("jax_persistent_cache_min_compile_time_secs", saved[1])
    config.update("jax_persistent_cache_min_entry_size_bytes", saved[2])
    clear_caches()


def _fresh_program(scale: float) -> Any:
    # A constant of its own, so no in-memory cache of an earlier test answers.
    return pd.jit(lambda x: pnp.sin(x) * scale)


def test_in_process_hit_after_the_in_memory_cache_is_cleared(tmp_path: Path, cache_options: None) -> None:
    config.update("jax_compilation_cache_dir", str(tmp_path))
    config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    x = np.linspace(0, 1, 5, dtype=np.float32)
    before = pd.stats.snapshot()
    first = np.asarray(_fresh_program(3.25)(x))
    mid = pd.stats.snapshot()
    assert mid["persistent_cache_writes"] - before["persistent_cache_writes"] == 1
    clear_caches()
    second = np.asarray(_fresh_program(3.25)(x))
    after = pd.stats.snapshot()
    assert after["xla_compiles"] == mid["xla_compiles"]
    assert after["persistent_cache_hits"] - mid["persistent_cache_hits"] == 1
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(second, np.sin(x) * 3.25, rtol=1e-6)


def test_thresholds_keep_cheap_programs_out(tmp_path: Path, cache_options: None) -> None:
    config.update("jax_compilation_cache_dir", str(tmp_path))
    config.update("jax_persistent_cache_min_compile_time_secs", 3600)
    _fresh_program(1.75)(np.ones(4, np.float32))
    assert list(tmp_path.iterdir()) == []
    config.update("jax_persistent_cache_min_compile_time_secs", 0)
    config.update("jax_persistent_cache_min_entry_size_bytes", 10**12)
    _fresh_program(1.5)(np.ones(4, np.float32))
    assert list(tmp_path.iterdir()) == []
    config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    _fresh_program(1.25)(np.ones(4, np.float32))
    assert len(list(tmp_path.iterdir())) == 1


def test_an_unreadable_entry_is_reported_and_replaced(
    tmp_path: Path, cache_options: None, caplog: pytest.LogCaptureFixture
) -> None:
    config.update("jax_compilation_cache_dir", str(tmp_path))
    config.update("jax_persistent_cache_min_compile_time_secs", 0)
    x = np.ones(3, np.float32)
    _fresh_program(2.5)(x)
    (entry,) = list(tmp_path.iterdir())
    entry.write_bytes(b"not an executable")
    clear_caches()
    before = pd.stats.snapshot()
    with caplog.at_level(logging.WARNING, logger="plait_dispatch.persistent_cache"):
        out = _fresh_program(2.5)(x)
    np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2.5, rtol=1e-6)
    assert any("cannot load" in r.getMessage() and entry.name in r.getMessage() for r in caplog.records)
    after = pd.stats.snapshot()
    assert after["xla_compiles"] - before["xla_compiles"] == 1
    assert after["persistent_cache_writes"] - before["persistent_cache_writes"] == 1
    assert entry.read_bytes() != b"not an executable"


def test_the_key_names_the_module_and_the_compiler(tmp_path: Path) -> None:
    dev = pd.devices()[0]
    a = persistent_cache.entry_path(str(tmp_path), "module @a {}", dev)
    b = persistent_cache.entry_path(str(tmp_path), "module @b {}", dev)
    assert a != b and a == persistent_cache.entry_path(str(tmp_path), "module @a {}", dev)
    assert os.path.dirname(a) == str(tmp_path) and a.endswith(".plait-xla")


def test_option_values_are_checked(cache_options: None) -> None:
    with pytest.raises(TypeError, match="jax_compilation_cache_dir must be a path"):
        config.update("jax_compilation_cache_dir", 3)
    with pytest.raises(ValueError, match="jax_persistent_cache_min_compile_time_secs must be >= 0, got -1"):
        config.update("jax_persistent_cache_min_compile_time_secs", -1)
    with pytest.raises(TypeError, match="jax_persistent_cache_min_entry_size_bytes must be an integer, got a value of type float"):
        config.update("jax_persistent_cache_min_entry_size_bytes", 1.5)
    with pytest.raises(TypeError, match="min_compile_time_secs must be a number, got a value of type str"):
        config.update("jax_persistent_cache_min_compile_time_secs", "1")
    config.update("jax_compilation_cache_dir", "")
    assert config.read("jax_compilation_cache_dir") is None
