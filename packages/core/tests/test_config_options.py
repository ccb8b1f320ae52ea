"""JAX's configuration options the ecosystem's test suites set (issue 25):
``jax_numpy_rank_promotion``, ``jax_numpy_dtype_promotion``,
``jax_num_cpu_devices``, options read as attributes, the absl hooks."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from plait_core import dtypes
from plait_core import numpy as pnp
from plait_core.config import config


@pytest.fixture
def option() -> Iterator[Any]:
    saved = {name: config.read(name) for name in ("numpy_rank_promotion", "numpy_dtype_promotion")}

    def set_option(name: str, value: Any) -> None:
        config.update(name, value)

    yield set_option
    for name, value in saved.items():
        config.update(name, value)


A, B = np.ones(3, np.float32), np.ones((2, 3), np.float32)


def test_rank_promotion_raise_warn_allow(option: Any) -> None:
    assert config.jax_numpy_rank_promotion == "allow" and pnp.add(A, B).shape == (2, 3)
    option("jax_numpy_rank_promotion", "raise")
    for fn in (pnp.add, pnp.maximum, pnp.arctan2, pnp.logaddexp, pnp.equal):
        with pytest.raises(ValueError, match=rf"{fn.__name__}: operands of shapes \(3,\) \(2, 3\) have different "
                           r"ranks, and implicit rank promotion is off \(numpy_rank_promotion='raise'\)"):
            fn(A, B)
    # Same ranks (size-1 axes broadcast), scalars and rank-0 arrays are not rank promotion.
    assert pnp.add(np.ones((1, 3), np.float32), B).shape == (2, 3)
    assert pnp.add(A, 1.0).shape == (3,) and pnp.multiply(B, np.float32(2)).shape == (2, 3)
    assert pnp.add(A, np.ones((), np.float32)).shape == (3,)
    option("jax_numpy_rank_promotion", "warn")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert pnp.subtract(A, B).shape == (2, 3)
    assert [str(w.message)[:59] for w in caught] == ["subtract: operands of shapes (3,) (2, 3) are broadcast to a"]
    assert caught[0].category is UserWarning
    with pytest.raises(ValueError, match=r"jax_numpy_rank_promotion must be one of 'allow', 'warn', 'raise'; got 'no'"):
        config.update("jax_numpy_rank_promotion", "no")


def _promoted(x: Any, y: Any) -> str:
    try:
        out = pnp.add(x, y)
    except dtypes.TypePromotionError:
        return "error"
    return str(out.dtype)


def test_strict_dtype_promotion_lets_only_weak_types_promote(option: Any) -> None:
    f32, f16, i32 = np.ones(2, np.float32), np.ones(2, np.float16), np.ones(2, np.int32)
    b, u8, c64 = np.ones(2, bool), np.ones(2, np.uint8), np.ones(2, np.complex64)
    assert _promoted(f32, f16) == "float32"
    option("jax_numpy_dtype_promotion", "strict")
    cases = [
        (f32, f16, "error"), (i32, f32, "error"), (b, i32, "error"), (i32, np.ones(2, np.int8), "error"),
        (f32, 1, "float32"), (f32, 1.0, "float32"), (f16, 1.5, "float16"), (u8, 1, "uint8"),
        (c64, 1.5, "complex64"), (i32, 1.5, "error"), (b, 1, "error"), (f32, 1j, "error"), (f32, f32, "float32"),
        (b, True, "bool"), (1, 1.5, "float32"),
    ]
    assert [_promoted(x, y) for x, y, _ in cases] == [want for _, _, want in cases]
    with pytest.raises(dtypes.TypePromotionError, match=r"no implicit promotion between float32 and float16 under "
                       r"numpy_dtype_promotion='strict'; convert one explicitly"):
        pnp.promote_types(np.float32, np.float16)
    assert pnp.sin(i32).dtype == np.float32 and pnp.mean(i32).dtype == np.float32  # no implicit promotion there
    with pytest.raises(ValueError, match=r"jax_numpy_dtype_promotion must be one of 'standard', 'strict'; got 'lax'"):
        config.update("jax_numpy_dtype_promotion", "lax")


def test_options_read_as_attributes_and_values() -> None:
    assert config.jax_enable_x64 is config.x64_enabled and config.plait_disable_jit is config.jit_disabled
    assert config.values["jax_enable_x64"] is config.x64_enabled
    assert config.values["jax_numpy_dtype_promotion"] == "standard" and config.jax_num_cpu_devices == -1
    with pytest.raises(AttributeError, match=r"'Config' object has no attribute 'jax_nope'"):
        config.jax_nope  # noqa: B018
    assert not hasattr(config, "no_such_thing")
    assert config.config_with_absl() is None and config.parse_flags_with_absl() is None


def test_num_cpu_devices_is_checked() -> None:
    for bad in ("4", 0, -2, 2.0, True):
        with pytest.raises(ValueError, match=r"jax_num_cpu_devices must be a positive int \(or -1 for the default\)"):
            config.update("jax_num_cpu_devices", bad)
