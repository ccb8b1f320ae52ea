"""The promotion lattice, weak types and canonicalisation."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from plait_core import dtypes as d
from plait_core.config import enable_x64

WEAK_INT, WEAK_FLOAT, WEAK_COMPLEX = int, float, complex

# (a, b, expected dtype, expected weak) with x64 on, from the lattice's definition.
TABLE: list[tuple[Any, Any, Any, bool]] = [
    (d.bool_, d.bool_, d.bool_, False),
    (d.bool_, WEAK_INT, d.int64, True),
    (d.bool_, WEAK_FLOAT, d.float64, True),
    (d.uint8, d.int8, d.int16, False),
    (d.uint16, d.int8, d.int32, False),
    (d.uint32, d.int8, d.int64, False),
    (d.uint64, d.int8, d.float64, True),
    (d.uint32, d.uint8, d.uint32, False),
    (d.int8, d.int64, d.int64, False),
    (d.bfloat16, d.float16, d.float32, False),
    (d.bfloat16, d.int32, d.bfloat16, False),
    (d.float16, d.int64, d.float16, False),
    (d.float32, d.complex64, d.complex64, False),
    (d.float64, d.complex64, d.complex128, False),
    (WEAK_INT, d.uint8, d.uint8, False),
    (WEAK_INT, d.int8, d.int8, False),
    (WEAK_INT, d.bfloat16, d.bfloat16, False),
    (WEAK_FLOAT, d.int32, d.float64, True),
    (WEAK_FLOAT, d.float16, d.float16, False),
    (WEAK_FLOAT, WEAK_INT, d.float64, True),
    (WEAK_COMPLEX, d.float64, d.complex128, False),
    (WEAK_COMPLEX, d.bfloat16, d.complex64, False),
    (WEAK_COMPLEX, WEAK_FLOAT, d.complex128, True),
]


def _arg(x: Any) -> Any:
    return x(0) if x is int or x is float or x is complex else x


@pytest.mark.parametrize("a,b,expected,weak", TABLE)
def test_promotion_table_x64(a: Any, b: Any, expected: Any, weak: bool) -> None:
    with enable_x64():
        assert d.result_type_and_weakness(_arg(a), _arg(b)) == (np.dtype(expected), weak)
        assert d.result_type_and_weakness(_arg(b), _arg(a)) == (np.dtype(expected), weak)


def test_without_x64_64_bit_results_are_narrowed() -> None:
    assert d.result_type_and_weakness(1, 2.0) == (d.float32, True)
    assert d.result_type_and_weakness(np.zeros(1, np.uint32), np.zeros(1, np.int8)) == (d.int32, False)
    assert d.canonicalize_dtype(np.float64) == d.float32
    assert d.canonicalize_dtype(np.complex128) == d.complex64


NODES = [d.bool_, d.uint8, d.uint16, d.uint32, d.uint64, d.int8, d.int16, d.int32, d.int64,
         d.bfloat16, d.float16, d.float32, d.float64, d.complex64, d.complex128, 1, 1.0, 1j]


def test_promotion_is_commutative_and_associative() -> None:
    with enable_x64():
        for a, b in itertools.product(NODES, NODES):
            assert d.result_type_and_weakness(a, b) == d.result_type_and_weakness(b, a)
        for a, b, c in itertools.product(NODES, NODES, NODES):
            ab = d.result_type_and_weakness(a, b)
            bc = d.result_type_and_weakness(b, c)
            left = d._join_typed(*ab, *d.dtype_and_weakness(c))
            right = d._join_typed(*d.dtype_and_weakness(a), *bc)
            assert left == right, (a, b, c)


def test_promote_types_strong() -> None:
    assert d.promote_types(np.int8, np.uint8) == d.int16
    assert d.promote_types(d.bfloat16, np.float16) == d.float32
    with pytest.raises(TypeError, match="promote_types: plait does not support the dtype <U1"):
        d.promote_types(np.dtype("U1"), np.int8)


def test_unsupported_dtype_is_rejected() -> None:
    with pytest.raises(TypeError, match="plait does not support the dtype object"):
        d.canonicalize_dtype(object)


def test_predicates_know_bfloat16() -> None:
    assert d.is_float(d.bfloat16) and d.is_inexact(d.bfloat16) and not d.is_int(d.bfloat16)
    assert d.issubdtype(d.bfloat16, np.floating)
    assert d.dtype_short_name(d.bfloat16) == "bf16"
    assert float(d.finfo(d.bfloat16).eps) == 2.0**-7
