"""``python -m plait.compat``: an unmodified JAX program runs on plait, and a
name plait lacks fails with an error that names it (never a fall-back to JAX)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

TIMEOUT_S = 120


def _run(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent(source))
    return subprocess.run(
        [sys.executable, "-m", "plait.compat", str(program), *args],
        capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path,
    )


def test_a_jax_program_runs_on_plait(tmp_path: Path) -> None:
    done = _run(tmp_path, """
        import sys
        import jax
        import jax.numpy as jnp
        from jax import grad, jit, vmap
        from jax.scipy.special import logsumexp
        import plait

        f = jit(lambda x: jnp.sum(jnp.tanh(x) ** 2))
        x = jnp.arange(3.0)
        print("argv", sys.argv[1:])
        print("grad", [round(float(v), 5) for v in grad(f)(x)])
        print("vmap", [float(v) for v in vmap(lambda r: r @ r)(jnp.ones((2, 3)))])
        print("lse", round(float(logsumexp(x)), 5))
        print("same", jax.numpy is jnp, jnp.sum is plait.numpy.sum, jax.jit is plait.jit)
    """, "a", "--flag")
    assert done.returncode == 0, done.stderr
    x = np.arange(3.0)
    expected_grad = [round(float(v), 5) for v in 2 * np.tanh(x) * (1 - np.tanh(x) ** 2)]
    lines = done.stdout.splitlines()
    assert lines[0] == "argv ['a', '--flag']"
    assert lines[1] == f"grad {expected_grad}"
    assert lines[2] == "vmap [3.0, 3.0]"
    assert lines[3] == f"lse {round(float(np.log(np.exp(x).sum())), 5)}"
    assert lines[4] == "same True True True"


@pytest.mark.parametrize(
    ("source", "error", "says"),
    [
        ("from jax.numpy import not_a_name\n", "ImportError", "plait does not have jax.numpy.not_a_name"),
        ("import jax\njax.not_a_name\n", "AttributeError", "plait does not have jax.not_a_name"),
        ("import jax.not_a_module\n", "ModuleNotFoundError", "plait does not have the module jax.not_a_module"),
    ],
)
def test_a_missing_name_is_named(tmp_path: Path, source: str, error: str, says: str) -> None:
    done = _run(tmp_path, source)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{error}: {says}"), last
    assert "never falls back to JAX" in last


def test_usage_without_a_program() -> None:
    done = subprocess.run([sys.executable, "-m", "plait.compat"], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 2
    assert "usage: python -m plait.compat PROGRAM.py" in done.stderr
