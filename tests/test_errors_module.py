"""``plait.errors`` and ``plait.lib`` as JAX 0.10.2's ``jax.errors`` / ``jax.lib``:
``JaxRuntimeError`` is jaxlib's runtime error (a host callback failing inside
``jit`` raises it, its message naming the callback's exception), distinct from
checkify's ``JaxRuntimeError`` as in JAX; ``lib.__version__`` is jaxlib's version."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import jaxlib
import numpy as np
import pytest

import plait
import plait.numpy as pnp
import plait_core.errors
from plait import errors, lib
from plait.experimental import checkify


class _CallbackError(RuntimeError):
    pass


def _raises(x: np.ndarray) -> np.ndarray:
    raise _CallbackError(f"bad value {float(x)}")


def test_a_callback_failing_inside_jit_is_a_jax_runtime_error_naming_it() -> None:
    f = plait.jit(lambda x: plait.pure_callback(_raises, plait.ShapeDtypeStruct((), pnp.float32), x))
    with pytest.raises(errors.JaxRuntimeError, match=r"_CallbackError: bad value 2\.0"):
        plait.block_until_ready(f(pnp.float32(2.0)))


def test_jax_runtime_error_is_a_runtime_error_and_not_checkifys() -> None:
    assert issubclass(errors.JaxRuntimeError, RuntimeError)
    # As in JAX 0.10.2: checkify's error is a ValueError of its own, not jax.errors.JaxRuntimeError.
    assert issubclass(checkify.JaxRuntimeError, ValueError)
    assert not issubclass(checkify.JaxRuntimeError, errors.JaxRuntimeError)
    with pytest.raises(checkify.JaxRuntimeError, match=r"x must be positive \(`check` failed\)"):
        checkify.check(pnp.array(-1.0) > 0, "x must be positive")


def test_errors_re_exports_cores_tracing_errors() -> None:
    assert errors.ConcretizationTypeError is plait_core.errors.ConcretizationTypeError
    assert errors.UnexpectedTracerError is plait_core.errors.UnexpectedTracerError
    assert plait.errors is errors
    with pytest.raises(errors.TracerBoolConversionError, match="bool"):
        plait.jit(lambda x: 1 if x > 0 else 0)(1.0)


def test_lib_version_is_jaxlibs() -> None:
    assert lib.__version__ == jaxlib.__version__
    assert [int(p) for p in lib.__version__.split(".")[:2]] >= [0, 4]


def test_under_compat_jax_errors_and_jax_lib_import(tmp_path: Path) -> None:
    program = tmp_path / "program.py"
    program.write_text(textwrap.dedent("""
        import jax
        import jax.lib
        from jax.errors import JaxRuntimeError
        import jaxlib
        print(jax.lib.__version__ == jaxlib.__version__, JaxRuntimeError.__name__)
    """))
    done = subprocess.run([sys.executable, "-m", "plait.compat", str(program)],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "JaxRuntimeError"]
