"""Record the dtype-promotion table from JAX, for CI machines without JAX.

Run it with an interpreter that has JAX 0.10.2 (never with plait in the same
process)::

    /path/to/jax-venv/bin/python tools/record_promotion_table.py [OUT.json]

It writes the result of every case of ``tests/promotion_cases.py``, staged
with ``jax.eval_shape``, with x64 off and on, to
``tests/data/promotion_table.json`` by default (or to ``OUT.json``): per
section, one line per operation listing its results in case order.  ``tests/test_promotion_table.py`` compares
plait with this file, or with a fresh run of this script when
``PLAIT_JAX_PYTHON`` names such an interpreter.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "promotion_table.json"


def main(argv: list[str]) -> None:
    """Record the table (JAX must be importable)."""
    import jax

    sys.path.insert(0, str(ROOT / "tests"))
    import promotion_cases

    out = Path(argv[0]) if argv else DEFAULT_OUT
    sections = {
        key: promotion_cases.by_op(promotion_cases.table(jax, x64=on, staged=True))
        for key, on in (("x64_off", False), ("x64_on", True))
    }
    lines = [f'{{"jax_version": {json.dumps(jax.__version__)},']
    for k, (key, ops) in enumerate(sections.items()):
        lines.append(f'"{key}": {{')
        rows = [f"{json.dumps(op)}: {json.dumps(results)}" for op, results in ops.items()]
        lines.append(",\n".join(rows))
        lines.append("}," if k == 0 else "}}")
    out.write_text("\n".join(lines) + "\n")  # one operation per line


if __name__ == "__main__":
    main(sys.argv[1:])
