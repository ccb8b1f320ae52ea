"""Run several corpus programs in one process and report each one's output.

``python -m plait.compat tests/programs/_driver.py PROG.py ...`` runs them on
plait (the compat hook answers ``import jax``); ``JAX_PYTHON tests/programs/_driver.py
PROG.py ...`` runs the same files on JAX.  Each program runs as ``__main__`` with
its stdout captured; the report is one JSON object per program on lines starting
with ``@@ ``: name, ok, seconds, output, error.
"""

from __future__ import annotations

import contextlib
import io
import json
import runpy
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(paths: list[str]) -> None:
    """Run each program and print its report line."""
    sys.path.insert(0, str(HERE))
    for path in paths:
        out = io.StringIO()
        start = time.perf_counter()
        error = None
        try:
            with contextlib.redirect_stdout(out):
                runpy.run_path(path, run_name="__main__")
        except BaseException as err:  # report every failure, including SystemExit
            error = "".join(traceback.format_exception_only(type(err), err)).strip()[-2000:]
        report = {"name": Path(path).stem, "ok": error is None, "seconds": round(time.perf_counter() - start, 3),
                  "output": out.getvalue(), "error": error}
        print("@@ " + json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
