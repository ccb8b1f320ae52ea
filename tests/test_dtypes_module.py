"""``plait.dtypes`` is a module (``import jax.dtypes`` works under
``plait.compat``) with ``jax.dtypes``' names (issue 25)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np

import plait

JAX_DTYPES_NAMES = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo", "float0", "iinfo",
                    "issubdtype", "itemsize_bits", "prng_key", "result_type", "scalar_type_of"]


def test_plait_dtypes_is_an_importable_module_with_jax_s_names() -> None:
    module = importlib.import_module("plait.dtypes")
    assert plait.dtypes is module
    assert sorted(module.__all__) == JAX_DTYPES_NAMES
    assert module.issubdtype(plait.random.key(0).dtype, module.prng_key)
    assert module.float0 == np.dtype([("float0", np.void, 0)])


def test_import_jax_dtypes_under_compat(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(
        "import jax\nimport jax.dtypes\nimport jax.numpy as jnp\nimport numpy as np\n"
        "from jax.dtypes import prng_key\n"
        "print(jnp.issubdtype(jax.random.key(0).dtype, prng_key), jax.dtypes.canonicalize_dtype(np.float64),\n"
        "      np.int32 in {jnp.int32}, jnp.dtype is np.dtype, isinstance(jax.random.key(1), jax.Array))\n"
    )
    done = subprocess.run([sys.executable, "-m", "plait.compat", str(program)], capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "float32", "True", "True", "True"]
