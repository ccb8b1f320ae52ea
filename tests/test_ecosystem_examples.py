"""The examples that are plain JAX programs using JAX libraries
(``examples/optax_flax_nnx_mlp.py``: flax.nnx + optax; ``examples/equinox_cnn.py``:
equinox + optax) run unchanged under ``python -m plait.compat``: their losses are
finite and fall, and, when ``PLAIT_JAX_PYTHON`` names a JAX 0.10.2 interpreter
that has the same libraries, they are JAX's losses to 1e-5.

The libraries are not plait's dependencies: each test skips, saying which library
is missing, in an environment without them (the main test sessions install none).
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NEEDS = {"optax_flax_nnx_mlp": ("flax", "optax"), "equinox_cnn": ("equinox", "optax")}
LOSS = re.compile(r"^step +(\d+): loss ([-+0-9.eE]+|nan|inf)$", flags=re.M)


def _missing(name: str) -> list[str]:
    return [lib for lib in NEEDS[name] if importlib.util.find_spec(lib) is None]


def _losses(out: str) -> list[float]:
    found = LOSS.findall(out)
    assert [int(step) for step, _ in found] == list(range(len(found))), out
    return [float(v) for _, v in found]


@cache
def _run(command: tuple[str, ...], name: str) -> list[float]:
    proc = subprocess.run([*command, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{name}.py: all checks passed" in proc.stdout, proc.stdout
    return _losses(proc.stdout)


def _jax_python(name: str) -> str | None:
    """``PLAIT_JAX_PYTHON`` if it names a JAX 0.10.2 interpreter that has ``name``'s libraries."""
    path = os.environ.get("PLAIT_JAX_PYTHON")
    if not path:
        return None
    code = "import jax, " + ", ".join(NEEDS[name]) + "; print(jax.__version__)"
    probe = subprocess.run([path, "-c", code], capture_output=True, text=True)
    return path if probe.returncode == 0 and probe.stdout.strip() == "0.10.2" else None


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_example_trains_under_plait_compat(name: str) -> None:
    missing = _missing(name)
    if missing:
        pytest.skip(f"{name}.py needs {', '.join(missing)} (not installed here; not a plait dependency)")
    losses = _run((sys.executable, "-m", "plait.compat"), name)
    assert len(losses) >= 20
    assert all(math.isfinite(v) for v in losses), losses
    assert losses[-1] < 0.8 * losses[0], losses
    assert sum(b < a for a, b in itertools.pairwise(losses)) >= len(losses) - 3, losses  # falls almost every step


@pytest.mark.parametrize("name", sorted(NEEDS))
def test_example_losses_are_jaxs(name: str) -> None:
    missing = _missing(name)
    if missing:
        pytest.skip(f"{name}.py needs {', '.join(missing)} (not installed here; not a plait dependency)")
    python = _jax_python(name)
    if python is None:
        pytest.skip(f"PLAIT_JAX_PYTHON does not name a JAX 0.10.2 interpreter with {', '.join(NEEDS[name])}")
    ours = _run((sys.executable, "-m", "plait.compat"), name)
    theirs = _run((python,), name)
    assert len(ours) == len(theirs)
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert abs(a - b) <= 1e-5, f"step {step}: plait {a} vs JAX {b}"
