"""``Lowered.compile(compiler_options=...)`` as JAX 0.10.2's: XLA option overrides by
name (a GPU option changes nothing on CPU), an unknown name is jaxlib's runtime error
("No such compile option"), a value of another type a TypeError; each set of options
compiles once (equinox's ``filter_jit(...).lower(...).compile(compiler_options=...)``)."""

from __future__ import annotations

import numpy as np
import pytest

import plait_dispatch as pd
from plait_dispatch import _jaxlib


def _lowered() -> object:
    return pd.jit(lambda x, y: 2 * x + y).lower(np.int32(3), np.int32(4))


@pytest.mark.parametrize(
    "options", [None, {}, {"xla_gpu_autotune_level": "0"}, {"xla_cpu_enable_fast_math": True},
                {"xla_backend_optimization_level": 1}],
)  # fmt: skip
def test_known_options_compile_and_run(options: dict[str, object] | None) -> None:
    compiled = _lowered().compile(compiler_options=options)  # type: ignore[attr-defined]
    assert int(compiled(np.int32(3), np.int32(4))) == 10


def test_an_unknown_option_is_a_jax_runtime_error() -> None:
    with pytest.raises(_jaxlib.XlaRuntimeError, match="No such compile option: 'an option that does not make sense'"):
        _lowered().compile(compiler_options={"an option that does not make sense": "bad value"})  # type: ignore[attr-defined]


def test_a_value_of_another_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"compiler_options entry 'xla_gpu_autotune_level': \[1\]"):
        _lowered().compile(compiler_options={"xla_gpu_autotune_level": [1]})  # type: ignore[attr-defined]
    with pytest.raises(TypeError, match="compiler_options must be a dict"):
        _lowered().compile(compiler_options=[("a", "b")])  # type: ignore[attr-defined]


def test_each_set_of_options_compiles_once() -> None:
    lowered = pd.jit(lambda x: x * 5 - 1).lower(np.float32(2.0))
    a = lowered.compile(compiler_options={"xla_cpu_enable_fast_math": False})
    b = lowered.compile(compiler_options={"xla_cpu_enable_fast_math": False})
    c = lowered.compile()
    assert float(a(np.float32(2.0))) == float(b(np.float32(2.0))) == float(c(np.float32(2.0))) == 9.0
    assert a._call is b._call and a._call is not c._call
