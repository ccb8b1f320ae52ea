"""Sessions: one test session per package (each installs only that package and
its declared dependencies), the meta-package's integration tests, typecheck,
lint, the JAX ecosystem's test suites, and the opt-in bench, demo and fuzz
sessions.  Plain ``nox`` (what CI runs) runs the tests, typecheck, lint and
ecosystem_ci (the ecosystem's fixed fast subset, a few minutes); bench, demo,
fuzz and the full ecosystem run are opt-in."""

from __future__ import annotations

import glob
import os

import nox

nox.options.sessions = ["tests", "typecheck", "lint", "ecosystem_ci"]
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
        # The pile tests again with every operation packed where it can be (by default plait chooses per
        # operation, padded for those that mix positions, so the default run covers the padded rules under
        # jit and grad; packages/batching/tests runs every pile test under each forced layout).  Not the
        # buckets' files: each bucket is an ordinary vmap, and their programs (a copy of the function per
        # bucket) are the slowest to compile.  (CI's budget: the forced padded rerun took 1.7 minutes.)
        piles = sorted(set(glob.glob("tests/test_pile_*.py")) - set(glob.glob("tests/test_pile_buckets*.py")))
        for layout in ("packed",):
            session.run("pytest", *piles, *session.posargs, env={"PLAIT_PILE_LAYOUT": layout})
        return
    session.install(*_paths(*LOCAL_DEPS[package], package))
    session.run("pytest", f"packages/{package}/tests", *session.posargs)


@nox.session(python=PYTHON)
def buckets(session: nox.Session) -> None:
    """Opt-in: the meta-package's pile tests again with every pile built from concrete lengths carrying
    them statically (``PLAIT_PILE_STATIC_LENGTHS=1``), so that ``vmap`` computes them in buckets of similar
    lengths (``plait_batching.buckets``).  Not in CI, to which it would add minutes: there the pile tests
    of packages/batching/tests run in the buckets mode (their conftest)."""
    session.install(*TEST_TOOLS, ".")
    piles = sorted(glob.glob("tests/test_pile_*.py"))
    session.run("pytest", *piles, *session.posargs, env={"PLAIT_PILE_STATIC_LENGTHS": "1"})


@nox.session(python=PYTHON)
def typecheck(session: nox.Session) -> None:
    """mypy --strict, package by package."""
    session.install("mypy>=1.10", *TEST_TOOLS, ".")
    for package in PACKAGES:
        session.run("mypy", "--strict", f"packages/{package}/src/plait_{package}")
    session.run("mypy", "--strict", "src/plait")


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff over the whole tree, the import contracts (``[tool.importlinter]`` in
    pyproject.toml: the interpreters independent of each other, core importing none of
    them, core's layers), and no import cycle among the modules of any package
    (``tools/check_import_cycles.py``: imports run at import time; its allow-list
    names the cycles left, each with why)."""
    session.install("ruff>=0.6", "import-linter>=2.1", ".")
    session.run("ruff", "check", ".")
    session.run("lint-imports")
    session.run("python", "tools/check_import_cycles.py")


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


# The JAX libraries whose own test suites run on plait (tools/ecosystem/libraries.py
# holds the same pins and says which tests run).  They are installed --no-deps next
# to plait, so JAX never enters plait's environment; their non-JAX needs go in normally.
ECOSYSTEM_PINS = ["optax==0.2.8", "chex==0.1.92", "flax==0.12.8", "equinox==0.13.8",
                  "dm-haiku==0.0.17", "diffrax==0.7.2", "jmp==0.0.4", "lineax==0.1.1", "optimistix==0.1.0"]
ECOSYSTEM_DEPS = ["absl-py", "typing_extensions", "toolz", "msgpack", "rich", "PyYAML", "treescope",
                  "tabulate", "six", "decorator", "cloudpickle", "gast", "dm-tree", "opt_einsum", "scipy",
                  "jaxtyping", "wadler-lindig", "beartype", "scikit-learn", "mock", "dill", *TEST_TOOLS]
ECOSYSTEM_LIBRARIES = ["optax", "chex", "haiku", "flax.linen", "flax.nnx"]
"""The CI subset's libraries; the full session adds equinox and diffrax (tests cloned from their tags)."""
ECOSYSTEM_FULL = [*ECOSYSTEM_LIBRARIES, "equinox", "diffrax"]


def _ecosystem(session: nox.Session, libraries: list[str], budget: str, ci: bool, out: str) -> str:
    """Run ``libraries``' suites on both sides and write the table; returns the JAX environment's python."""
    session.install(".", *ECOSYSTEM_DEPS)
    session.install("--no-deps", *ECOSYSTEM_PINS)
    # Absolute paths: each suite runs from its unpacked sdist's directory.
    tmp = os.path.abspath(session.create_tmp())
    jax_env = f"{tmp}/jax-env"
    session.run("python", "-m", "venv", "--clear", jax_env)
    jax_python = f"{jax_env}/bin/python"
    session.run(jax_python, "-m", "pip", "install", "-q", "jax==0.10.2", *ECOSYSTEM_DEPS, external=True)
    session.run(jax_python, "-m", "pip", "install", "-q", "--no-deps", *ECOSYSTEM_PINS, external=True)
    results = f"{tmp}/results"
    sources = os.environ.get("ECOSYSTEM_SOURCES", f"{tmp}/sources")
    flags = ["--ci", "--sample", "1"] if ci else []
    for lib in libraries:
        for backend, python in (("jax", jax_python), ("plait", "python")):
            session.run("python", "-m", "tools.ecosystem.run", lib, "--backend", backend, "--python", python,
                        "--out", f"{results}/{lib}-{backend}.jsonl", "--sources", sources,
                        "--budget", budget, *flags, success_codes=[0, 1, 3, -9])
    session.run("python", "-m", "tools.ecosystem.report", results, "--out", out,
                *(["--min-rate", "0.95"] if ci else []))
    return jax_python


@nox.session(python=PYTHON)
def ecosystem(session: nox.Session) -> None:
    """The JAX ecosystem's own test suites on plait (via plait.compat) and, in an
    environment of their own, on JAX 0.10.2; writes benchmarks/ECOSYSTEM.md.

    ``nox -s ecosystem -- optax chex`` runs only those; each run stops starting
    tests after 15 minutes, and the largest suites run one test in N (a stable
    sample, the same tests on both; tools/ecosystem/libraries.py says which).
    equinox's and diffrax's sdists ship no tests: theirs are cloned from their
    release tags (git and GitHub needed; without them the run records why and
    the other libraries go on).  Offline, set ``ECOSYSTEM_SOURCES`` to a folder
    holding ``equinox-v0.13.8-checkout`` and ``diffrax-v0.7.2-checkout``."""
    libraries = session.posargs or ECOSYSTEM_FULL
    _ecosystem(session, libraries, "900", ci=False, out="benchmarks/ECOSYSTEM.md")


@nox.session(python=PYTHON)
def ecosystem_ci(session: nox.Session) -> None:
    """The fixed fast subset of ``ecosystem`` (a few test files of optax, chex, haiku,
    flax.linen and flax.nnx, ``libraries.py``'s ``ci``): fails when plait passes fewer than
    95% of the tests that pass on JAX 0.10.2."""
    session.install(".", *TEST_TOOLS)
    session.run("python", "-m", "pytest", "-p", "no:cacheprovider", "tools/ecosystem")
    jax_python = _ecosystem(session, ECOSYSTEM_LIBRARIES, "120", ci=True, out=f"{session.create_tmp()}/ECOSYSTEM-ci.md")
    # The examples built on the libraries (optax + flax.nnx MLP, equinox CNN), run unchanged
    # through plait.compat, their losses compared step by step with the same scripts on JAX.
    session.run("python", "-m", "pytest", "-p", "no:cacheprovider", "tests/test_ecosystem_examples.py",
                env={"PLAIT_JAX_PYTHON": jax_python})
