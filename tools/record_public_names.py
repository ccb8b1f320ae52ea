"""Record JAX 0.10.2's public names, for the name-coverage test on machines without JAX.

Run it with an interpreter that has JAX 0.10.2 (never with plait in the same
process)::

    /path/to/jax-venv/bin/python tools/record_public_names.py [OUT.json]

For each module of ``MODULES`` (and every ``jax.scipy.stats.<distribution>``
sub-module) it records the names that ``dir()`` lists without a leading
underscore, leaving out sub-modules (each is a module of its own) and, in
``jax.lax``, the ``*_p`` primitive objects.  It writes them to
``tests/data/jax_public_names_0.10.2.json`` by default (or to ``OUT.json``).
``tests/test_public_names.py`` compares plait's modules with that file, or with
a fresh run of this script when ``PLAIT_JAX_PYTHON`` names such an interpreter.
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "jax_public_names_0.10.2.json"

MODULES = [
    "jax",
    "jax.numpy",
    "jax.lax",
    "jax.random",
    "jax.nn",
    "jax.nn.initializers",
    "jax.scipy.special",
    "jax.scipy.stats",
    "jax.tree_util",
    "jax.tree",
    "jax.debug",
    "jax.example_libraries.stax",
    "jax.example_libraries.optimizers",
    "jax.test_util",
    "jax.typing",
    "jax.core",
    "jax.ops",
    "jax.image",
    "jax.dlpack",
    "jax.profiler",
    "jax.stages",
    "jax.custom_batching",
    "jax.custom_derivatives",
    "jax.experimental.checkify",
]


def public_names(module: types.ModuleType) -> list[str]:
    """The public, non-module names of ``module`` (``*_p`` left out of ``jax.lax``)."""
    names = []
    for name in dir(module):
        if name.startswith("_") or isinstance(getattr(module, name), types.ModuleType):
            continue
        if module.__name__ == "jax.lax" and name.endswith("_p"):
            continue
        names.append(name)
    return sorted(names)


def record() -> dict[str, object]:
    """The table: JAX's version and, per module, its public names."""
    import jax

    modules = list(MODULES)
    stats = importlib.import_module("jax.scipy.stats")
    for name in sorted(dir(stats)):
        value = getattr(stats, name)
        if isinstance(value, types.ModuleType) and value.__name__.startswith("jax.scipy.stats."):
            modules.append(value.__name__)
    return {
        "jax_version": jax.__version__,
        "modules": {name: public_names(importlib.import_module(name)) for name in modules},
    }


def main(argv: list[str]) -> None:
    """Write the table to ``argv[0]`` (default: the committed data file); ``-`` prints it."""
    table = record()
    text = json.dumps(table, indent=1, sort_keys=True) + "\n"
    out = argv[0] if argv else str(DEFAULT_OUT)
    if out == "-":
        sys.stdout.write(text)
    else:
        Path(out).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
