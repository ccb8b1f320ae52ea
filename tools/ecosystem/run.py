"""Run one library's own tests on plait (through ``plait.compat``) or on JAX.

``python -m tools.ecosystem.run LIBRARY --backend plait|jax --python PY --out FILE``
runs the library's tests from its unpacked sdist with interpreter ``PY`` (one
where plait, resp. JAX 0.10.2, and the library's non-JAX dependencies are
installed) and writes each test's outcome to ``FILE`` (see ``record``).  The run
is bounded: after ``--budget`` seconds no new test starts, and the process is
killed ``--grace`` seconds later if a test hangs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from tools.ecosystem.libraries import LIBRARIES, Library
from tools.ecosystem.sources import fetch_tests, find_test_paths

REPO = Path(__file__).resolve().parents[2]
NOT_RUN = 3
"""Exit status of a run whose tests could not be fetched."""


def pytest_command(lib: Library, backend: str, python: str, paths: list[str]) -> list[str]:
    """The command line running ``paths`` of ``lib`` with ``python`` on ``backend``."""
    if backend == "plait":
        head = [python, "-m", "plait.compat", "-m", "pytest"]
    elif backend == "jax":
        head = [python, "-m", "pytest"]
    else:
        raise ValueError(f"backend must be 'plait' or 'jax', got {backend!r}")
    ignores = [f"--ignore={p}" for p in lib.deselect]
    return [*head, "-q", "-p", "no:cacheprovider", "-p", "tools.ecosystem.record", "--tb=no",
            "-o", "console_output_style=classic", "--continue-on-collection-errors", *ignores, *paths]


def run_suite(lib: Library, backend: str, python: str, out: Path, sources: Path,
              budget_s: float, grace_s: float, ci: bool, tests_from: Path | None = None,
              sample: int | None = None, only: list[str] | None = None) -> int:
    """Run the suite once, appending outcomes to ``out``; returns pytest's exit status.
    ``only``: these test paths (under the tests' root) instead of the library's."""
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        root = tests_from if tests_from is not None else fetch_tests(lib, sources)
    except (subprocess.CalledProcessError, OSError) as e:
        # No tests to run (no git, no network to the repository): said in the record, not fatal
        # to the other libraries of the session.
        out.write_text(json.dumps({"id": "<run>", "outcome": "not-run", "error": f"tests not fetched: {e}"}) + "\n")
        return NOT_RUN
    if only:
        missing = [p for p in only if not (root / p).exists()]
        if missing:
            raise FileNotFoundError(f"{lib.name}: no {missing} under {root}")
        paths = list(only)
    else:
        paths = find_test_paths(lib, root, ci)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["ECOSYSTEM_RECORD"] = str(out.resolve())
    env["ECOSYSTEM_BUDGET_S"] = str(budget_s)
    env["ECOSYSTEM_SAMPLE"] = str(lib.sample if sample is None else sample)
    env.setdefault("JAX_PLATFORMS", "cpu")
    cmd = pytest_command(lib, backend, python, paths)
    try:
        done = subprocess.run(cmd, cwd=root, env=env, timeout=budget_s + grace_s,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        with out.open("a", encoding="utf-8") as f:
            f.write('{"id": "<run>", "outcome": "killed", "error": "a test outlived the time budget"}\n')
        return -9
    return done.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", choices=sorted(LIBRARIES))
    parser.add_argument("--backend", required=True, choices=["plait", "jax"])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--sources", type=Path, default=REPO / ".ecosystem" / "sources")
    parser.add_argument("--tests-from", type=Path, default=None,
                        help="a source checkout holding the tests (default: the sdist, or a clone of the release tag)")
    parser.add_argument("--budget", type=float, default=900.0, help="seconds before no new test starts")
    parser.add_argument("--grace", type=float, default=120.0)
    parser.add_argument("--ci", action="store_true", help="the fixed fast subset")
    parser.add_argument("--sample", type=int, default=None,
                        help="run one test in N (the same ones on both backends); default: the library's")
    parser.add_argument("--paths", nargs="+", default=None,
                        help="run these test paths (files or folders under the tests' root) instead of the library's")
    args = parser.parse_args(argv)
    return run_suite(LIBRARIES[args.library], args.backend, args.python, args.out, args.sources,
                     args.budget, args.grace, args.ci, args.tests_from, args.sample, args.paths)


if __name__ == "__main__":
    sys.exit(main())
