"""Each script in ``examples/`` runs, checks its own results and says so."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = ["mlp", "revnet", "ragged_transformer", "masked_rnn", "data_parallel", "cross_attention_piles"]
# Plain JAX programs using JAX libraries, run under plait.compat by test_ecosystem_examples.py.
ECOSYSTEM_NAMES = ["optax_flax_nnx_mlp", "equinox_cnn"]


def run(name: str) -> str:
    proc = subprocess.run([sys.executable, str(EXAMPLES / f"{name}.py")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{name}.py: all checks passed" in proc.stdout
    return proc.stdout


def test_the_examples_are_there_and_documented() -> None:
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == sorted(NAMES + ECOSYSTEM_NAMES)
    for name in NAMES + ECOSYSTEM_NAMES:
        doc = ast.get_docstring(ast.parse((EXAMPLES / f"{name}.py").read_text()))
        assert doc and len(doc.split()) > 40, f"{name}.py needs a module docstring that explains it"


@pytest.mark.parametrize("name", NAMES)
def test_example_runs_and_checks_itself(name: str) -> None:
    out = run(name)
    if name == "mlp":
        assert float(re.search(r"held-out accuracy: ([\d.]+)%", out).group(1)) > 90  # type: ignore[union-attr]
        assert re.search(r"the first state was donated: (\d+) of \1 arrays deleted", out)
    elif name == "revnet":
        assert float(re.search(r"grad\(ordinary\)\| = ([\d.e+-]+)", out).group(1)) < 1e-4  # type: ignore[union-attr]
        rows = re.findall(r"^ +(\d+) +([\d,]+) +([\d,]+)$", out, flags=re.M)
        assert [int(r[0]) for r in rows] == [4, 16, 64]
        assert len({r[2] for r in rows}) == 1  # invertible: the same bytes at every depth
    elif name == "ragged_transformer":
        assert float(re.search(r"each sequence alone\| = ([\d.e+-]+)", out).group(1)) < 1e-4  # type: ignore[union-attr]
    elif name == "cross_attention_piles":
        assert float(re.search(r"each pair alone\| = ([\d.e+-]+)", out).group(1)) < 1e-5  # type: ignore[union-attr]
        assert float(re.search(r"per-pair grads\| = ([\d.e+-]+)", out).group(1)) < 1e-5  # type: ignore[union-attr]
    elif name == "data_parallel":
        assert "1 process(es), 8 devices, batch 64 split 8 ways here" in out
        assert len(re.findall(r"^step \d: loss [\d.]+$", out, flags=re.M)) == 5
    else:
        assert "masked:    traced 1 time(s)" in out and "plain jit: traced 22 time(s)" in out
