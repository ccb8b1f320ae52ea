"""``python -m fuzz``: a fuzzing session from the command line (``nox -s fuzz``)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from .compare import Checks
from .runner import ALL_MODES, JAX_PYTHON_ENV, Fuzzer


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__)
    parser.add_argument("--seconds", type=float, default=600.0, help="stop after this long (default 600)")
    parser.add_argument("--programs", type=int, default=1_000_000, help="stop after this many programs")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: from the clock)")
    parser.add_argument("--jax-python", default=os.environ.get(JAX_PYTHON_ENV),
                        help=f"an interpreter that imports jax 0.10.2 (default ${JAX_PYTHON_ENV}; else NumPy oracle)")
    parser.add_argument("--modes", default=",".join(ALL_MODES), help="comma-separated modes")
    parser.add_argument("--no-dtypes", action="store_true", help="do not compare dtypes")
    parser.add_argument("--no-weak-types", action="store_true", help="do not compare weak types")
    parser.add_argument("--repro-dir", default="fuzz-repros", help="where repro scripts go")
    parser.add_argument("--no-shrink", action="store_true")
    args = parser.parse_args(argv)
    first = args.seed if args.seed is not None else int(time.time()) % 1_000_000 * 1000
    checks = Checks(dtypes=not args.no_dtypes, weak_types=not args.no_weak_types)
    oracle = f"JAX ({args.jax_python})" if args.jax_python else "NumPy float64"
    print(f"fuzz: seeds from {first}, oracle {oracle}, {checks}", flush=True)
    with Fuzzer(args.jax_python, checks, args.modes.split(","), Path(args.repro_dir), shrink_failures=not args.no_shrink) as fz:
        report = fz.run(range(first, first + args.programs), seconds=args.seconds, progress=True)
    print(report.summary())
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
