"""Record JAX 0.10.2's ``jax.image`` results on fixed inputs, for plait's tests.

Run it with an interpreter that has JAX 0.10.2 (never with plait in the same
process)::

    /path/to/jax-venv/bin/python tools/record_image_resize.py [OUT.npz]

It resizes one fixed 5x7 float32 image (``numpy.random.RandomState(0)``) with
every method, to larger, smaller and mixed shapes, with and without
antialiasing, resizes an int32 image, and calls ``scale_and_translate`` twice.
The arrays go to ``tests/data/jax_image_0.10.2.npz`` by default, keyed by
:func:`cases`' names; ``tests/test_public_modules.py`` compares plait's
``plait.image`` with them.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "tests" / "data" / "jax_image_0.10.2.npz"

METHODS = ["nearest", "linear", "cubic", "lanczos3", "lanczos5"]
SHAPES = [(9, 4), (3, 11), (2, 2)]


def image() -> np.ndarray:
    """The fixed input image."""
    return np.random.RandomState(0).rand(5, 7).astype(np.float32)


def cases(im: Any, jnp: Any) -> dict[str, np.ndarray]:
    """Every case, computed with the ``image`` module ``im`` and its ``numpy`` ``jnp``."""
    x = image()
    out: dict[str, np.ndarray] = {}
    for method in METHODS:
        for shape in SHAPES:
            for antialias in (True, False):
                out[f"{method}{shape}{antialias}"] = np.asarray(im.resize(x, shape, method, antialias=antialias))
    out["int"] = np.asarray(im.resize((x * 100).astype(np.int32), (8, 3), "linear"))
    out["st"] = np.asarray(im.scale_and_translate(x, (6, 6), (0, 1), jnp.array([1.3, 0.7]),
                                                  jnp.array([0.4, -1.0]), "cubic"))
    out["st2"] = np.asarray(im.scale_and_translate(x[None], (1, 6, 6), (1, 2), jnp.array([1.3, 0.7]),
                                                   jnp.array([0.4, -1.0]), "linear", antialias=False))
    return out


def main(argv: list[str]) -> None:
    """Write the cases to ``argv[0]`` (default: the committed data file)."""
    import jax
    import jax.image
    import jax.numpy

    assert jax.__version__ == "0.10.2", jax.__version__
    np.savez(argv[0] if argv else str(DEFAULT_OUT), **cases(jax.image, jax.numpy))


if __name__ == "__main__":
    main(sys.argv[1:])
