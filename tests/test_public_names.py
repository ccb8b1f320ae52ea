"""Every public name of the JAX modules plait mirrors is implemented or listed.

``tests/data/jax_public_names_0.10.2.json`` holds JAX 0.10.2's public names
per module (recorded by ``tools/record_public_names.py``; the test compares it
with a live run when ``PLAIT_JAX_PYTHON`` names an interpreter with JAX
0.10.2).  A name must exist in plait's module of the same path, or stand in
``plait._not_supported.NOT_SUPPORTED`` with the reason (a listed name plait
has is an error, except for work owned by another part of the project, which
may land at any time).  The coverage (share implemented) is printed and must
not fall below the floor.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plait._not_supported import NOT_SUPPORTED

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "jax_public_names_0.10.2.json"
GENERATOR = ROOT / "tools" / "record_public_names.py"
RECORDED: dict[str, Any] = json.loads(DATA.read_text())
MODULES: dict[str, list[str]] = RECORDED["modules"]

# Coverage of implemented names may only go up (raise it as names land).  0.958 since the walk took in ten
# more modules (jax.typing, core, ops, image, dlpack, profiler, stages, custom_batching, custom_derivatives,
# experimental.checkify: 93 names, of which plait lacks profiler's data and server functions and remat_opt_p).
COVERAGE_FLOOR = 0.958


def _plait_module(jax_name: str) -> Any:
    return importlib.import_module("plait" + jax_name[len("jax"):])


def _missing(jax_name: str) -> list[str]:
    try:
        module = _plait_module(jax_name)
    except ImportError:
        return list(MODULES[jax_name])
    return [n for n in MODULES[jax_name] if not hasattr(module, n)]


@pytest.mark.parametrize("jax_name", sorted(MODULES))
def test_every_name_implemented_or_listed(jax_name: str) -> None:
    listed = NOT_SUPPORTED.get(jax_name, {})
    unlisted = [n for n in _missing(jax_name) if n not in listed]
    assert unlisted == [], f"{jax_name}: neither in plait nor in plait._not_supported: {unlisted}"


@pytest.mark.parametrize("jax_name", sorted(NOT_SUPPORTED))
def test_not_supported_list_is_current(jax_name: str) -> None:
    assert jax_name in MODULES, f"{jax_name} is not a module the coverage test walks"
    missing = set(_missing(jax_name))
    stale = [n for n, why in NOT_SUPPORTED[jax_name].items() if n not in missing and not why.startswith("owned by")]
    assert stale == [], f"{jax_name}: listed as not supported but plait has them: {stale}"
    unknown = [n for n in NOT_SUPPORTED[jax_name] if n not in MODULES[jax_name]]
    assert unknown == [], f"{jax_name}: listed names JAX 0.10.2 does not have: {unknown}"
    assert all(isinstance(why, str) and len(why) > 10 for why in NOT_SUPPORTED[jax_name].values())


def coverage() -> tuple[int, int, dict[str, tuple[int, int]]]:
    """(implemented, total, per module) over the recorded names."""
    per: dict[str, tuple[int, int]] = {}
    for jax_name, names in MODULES.items():
        per[jax_name] = (len(names) - len(_missing(jax_name)), len(names))
    return sum(h for h, _ in per.values()), sum(t for _, t in per.values()), per


def test_coverage_report_and_floor(capsys: pytest.CaptureFixture[str]) -> None:
    have, total, per = coverage()
    with capsys.disabled():
        print(f"\nplait implements {have} of JAX 0.10.2's {total} public names ({have / total:.1%})")
        for jax_name, (h, t) in sorted(per.items()):
            if h < t:
                print(f"  {jax_name}: {h}/{t}")
    assert total == sum(len(v) for v in MODULES.values()) and total > 1000
    assert have / total >= COVERAGE_FLOOR


def test_missing_name_under_compat_says_plait_lacks_it() -> None:
    jax_name, name = next((m, n) for m, names in NOT_SUPPORTED.items() for n in names)
    code = (
        "import importlib, plait.compat as c; c.install(); "
        f"m = importlib.import_module({jax_name!r}); getattr(m, {name!r})"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "AttributeError" in out.stderr and f"plait does not have {jax_name}.{name}" in out.stderr


def _jax_python() -> str | None:
    path = os.environ.get("PLAIT_JAX_PYTHON")
    if not path:
        return None
    probe = subprocess.run([path, "-c", "import jax; print(jax.__version__)"], capture_output=True, text=True)
    return path if probe.returncode == 0 and probe.stdout.strip() == "0.10.2" else None


@pytest.mark.skipif(_jax_python() is None, reason="PLAIT_JAX_PYTHON does not name a JAX 0.10.2 interpreter")
def test_recorded_names_are_what_jax_has() -> None:
    python = _jax_python()
    assert python is not None
    out = subprocess.run([python, str(GENERATOR), "-"], capture_output=True, text=True, check=True, timeout=300)
    assert json.loads(out.stdout) == RECORDED

