"""Record JAX's results of the narrow-dtype cases, for machines without JAX.

Run it with an interpreter that has JAX 0.10.2 (never with plait in the same
process)::

    /path/to/jax-venv/bin/python tools/record_narrow_dtypes.py [OUT.json]

It writes the result of every case of ``tests/narrow_cases.py`` (x64 off) to
``tests/data/narrow_dtypes_0.10.2.json`` by default, one case per line.
``tests/test_narrow_dtypes.py`` compares plait with this file, or with a fresh
run of this script when ``PLAIT_JAX_PYTHON`` names such an interpreter.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "narrow_dtypes_0.10.2.json"


def main(argv: list[str]) -> None:
    """Record the table (JAX must be importable)."""
    import jax

    sys.path.insert(0, str(ROOT / "tests"))
    import narrow_cases

    out = Path(argv[0]) if argv else DEFAULT_OUT
    results = narrow_cases.table(jax)
    rows = [f"{json.dumps(name)}: {json.dumps(result)}" for name, result in results.items()]
    out.write_text(f'{{"jax_version": {json.dumps(jax.__version__)}, "cases": {{\n' + ",\n".join(rows) + "\n}}\n")


if __name__ == "__main__":
    main(sys.argv[1:])
