"""Sessions: one test session per package (each installs only that package and
its declared dependencies), the meta-package's integration tests, typecheck,
lint, and the opt-in bench, demo and fuzz sessions.  Plain ``nox`` runs all
but bench, demo and fuzz."""

from __future__ import annotations

import nox

nox.options.sessions = ["tests", "typecheck", "lint"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
TEST_TOOLS = ["pytest>=8", "hypothesis>=6"]

# A package's local dependencies, installed from this tree (none is on PyPI).
LOCAL_DEPS = {
    "core": [],
    "autodiff": ["core"],
    "batching": ["core"],
    "masking": ["core"],
    "dispatch": ["core"],
}
PACKAGES = list(LOCAL_DEPS)


def _paths(*names: str) -> list[str]:
    return [f"./packages/{n}" for n in names]


@nox.session(python=PYTHON)
@nox.parametrize("package", [nox.param(p, id=p) for p in [*PACKAGES, "plait"]])
def tests(session: nox.Session, package: str) -> None:
    """Run one package's tests in an environment holding only what it declares."""
    session.install(*TEST_TOOLS)
    if package == "plait":
        session.install(".")
        session.run("pytest", "tests", *session.posargs)
        return
    session.install(*_paths(*LOCAL_DEPS[package], package))
    session.run("pytest", f"packages/{package}/tests", *session.posargs)


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict, package by package."""
    session.install("mypy>=1.10", *TEST_TOOLS, ".")
    for package in PACKAGES:
        session.run("mypy", "--strict", f"packages/{package}/src/plait_{package}")
    session.run("mypy", "--strict", "src/plait")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over the whole tree, and the import contracts (``[tool.importlinter]`` in
    pyproject.toml: the interpreters independent of each other, core importing none of
    them, core's layers)."""
    session.install("ruff>=0.6", "import-linter>=2.1", ".")
    session.run("ruff", "check", ".")
    session.run("lint-imports")


@nox.session(python=PYTHON)
def demo(session: nox.Session) -> None:
    """Install plait and run the demo."""
    session.install(".")
    session.run("python", "-m", "plait.demo")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Benchmarks, side by side with JAX 0.10.2 when it installs."""
    session.install(".")
    session.install("jax==0.10.2", success_codes=[0, 1])
    session.run("python", "-m", "benchmarks.run", *session.posargs)


@nox.session(python=PYTHON)
def fuzz(session: nox.Session) -> None:
    """The long differential fuzz run (``tests/fuzz``; ``nox -s fuzz -- --seconds 1800``).

    The oracle is JAX 0.10.2 when ``PLAIT_FUZZ_JAX_PYTHON`` names an interpreter
    that imports it (JAX runs in that separate process), NumPy float64 otherwise.
    Then the multi-device differential check (``fuzz.multidevice``: shard_map,
    pmap and jit with shardings on 8 CPU devices against one device), as long."""
    session.install(".")
    session.run("python", "-m", "fuzz", *session.posargs, env={"PYTHONPATH": "tests"})
    session.run("python", "-m", "fuzz.multidevice", *session.posargs,
                env={"PYTHONPATH": "tests", "PLAIT_NUM_CPU_DEVICES": "8"})
