"""Tests of plait_core.dims: symbolic dimensions and the shape helpers."""

from __future__ import annotations

import copy
import importlib
import importlib.util
import operator
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


def _load_dims() -> ModuleType:
    # Prefer the package; fall back to loading the file directly while the
    # rest of plait_core is incomplete or does not import.
    try:
        return importlib.import_module("plait_core.dims")
    except Exception:  # any failure of the package import: load the file itself
        path = Path(__file__).resolve().parents[1] / "src" / "plait_core" / "dims.py"
        name = "_plait_core_dims_under_test"
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module


dims = _load_dims()
SymbolicDim = dims.SymbolicDim
Inconclusive = dims.InconclusiveDimensionOperation

n, m, k = dims.symbolic_dims("n m k")


# ---------------------------------------------------------------------------
# Construction and normalisation
# ---------------------------------------------------------------------------


def test_var_and_const() -> None:
    assert str(SymbolicDim.var("batch_len")) == "batch_len"
    assert SymbolicDim.var("n") == n
    c = SymbolicDim.const(3)
    assert isinstance(c, SymbolicDim)
    assert c.is_constant and int(c) == 3 and c == 3
    assert hash(c) == hash(3)
    assert dims.simplify(c) == 3 and type(dims.simplify(c)) is int
    assert dims.simplify(SymbolicDim.const(0)) == 0
    assert c + 0 == 3 and type(c + 0) is int


@pytest.mark.parametrize("bad", ["", "2n", "a-b", "for", "n m"])
def test_var_rejects_non_identifiers(bad: str) -> None:
    with pytest.raises(ValueError, match="Python identifier"):
        SymbolicDim.var(bad)


def test_var_rejects_non_strings() -> None:
    with pytest.raises(TypeError, match="must be a string"):
        SymbolicDim.var(3)
    with pytest.raises(TypeError, match="expects an integer"):
        SymbolicDim.const(1.5)


def test_constructor_normalises() -> None:
    p = SymbolicDim(
        [
            ((("n", 1), ("m", 1)), 2),
            ((("m", 1), ("n", 1)), -1),
            ((("n", 2), ("k", 0)), 3),
            ((("n", 2),), -3),
            ((), 0),
            ((("n", 1), ("n", 1)), 1),
        ]
    )
    # m*n merged (2 - 1), n^2 cancelled, n*n merged into n^2, zero constant dropped.
    assert p.terms == (((("m", 1), ("n", 1)), 1), ((("n", 2),), 1))
    assert str(p) == "m*n + n^2"
    assert p == m * n + n * n
    assert SymbolicDim({(("n", 1),): 2, (): 1}) == 2 * n + 1


def test_constructor_rejects_bad_terms() -> None:
    with pytest.raises(TypeError, match="coefficients must be integers"):
        SymbolicDim([((("n", 1),), 1.5)])
    with pytest.raises(TypeError, match="power in a monomial"):
        SymbolicDim([((("n", -1),), 1)])
    with pytest.raises(TypeError, match="tuple of"):
        SymbolicDim([("n", 1)])


def test_constant_results_are_ints() -> None:
    r = n - n + 3
    assert r == 3 and type(r) is int
    assert type(n * 0) is int and n * 0 == 0
    assert type((2 * n) // n) is int and (2 * n) // n == 2
    assert type(n - n) is int
    assert type(+(n - n + 1)) is int
    assert type(-(n - n + 1)) is int


def test_immutable() -> None:
    with pytest.raises(AttributeError, match="immutable"):
        n._terms = ()
    with pytest.raises(AttributeError, match="immutable"):
        del n._terms


def test_pickle_and_copy() -> None:
    p = m * n - 2 * n + 1
    q = pickle.loads(pickle.dumps(p))
    assert q == p and hash(q) == hash(p) and str(q) == str(p)
    assert copy.copy(p) is p and copy.deepcopy(p) is p


def test_accessors() -> None:
    p = 3 * m * n**2 - n + 4
    assert p.free_names() == frozenset({"m", "n"})
    assert p.degree == 3
    assert p.leading_term == ((("m", 1), ("n", 2)), 3)
    assert p.constant_term == 4
    assert p.coefficients == {(("m", 1), ("n", 2)): 3, (("n", 1),): -1, (): 4}
    assert not p.is_constant
    assert dims.free_names(p) == {"m", "n"} and dims.free_names(3) == frozenset()


# ---------------------------------------------------------------------------
# Formatting and parsing
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (n, "n"),
        (2 * n + 1, "2*n + 1"),
        (m * n - 1, "m*n - 1"),
        (n * n, "n^2"),
        (1 - n, "-n + 1"),
        (-2 * n, "-2*n"),
        (n + m + k, "k + m + n"),
        ((m + n) ** 2, "m^2 + 2*m*n + n^2"),
        (n**3 - m * n + k * n - 7, "n^3 + k*n - m*n - 7"),
        (3 + n * m * k, "k*m*n + 3"),
    ],
)
def test_str(value: Any, text: str) -> None:
    assert str(value) == text
    assert repr(value) == text
    assert dims.parse_dim(text) == value


def test_str_in_tuples() -> None:
    assert str((n, 3, 2 * n)) == "(n, 3, 2*n)"


def test_parse_dim() -> None:
    assert dims.parse_dim("  2 * (n + 1) - 2 ") == 2 * n
    assert dims.parse_dim("n**2 - n^2 + 5") == 5
    assert dims.parse_dim("(6*n) // 3 + 7 % 4") == 2 * n + 3
    assert dims.parse_dim("-(-n)") == n
    assert dims.parse_dim("+n") == n
    assert dims.parse_dim("12") == 12


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("", "it is empty"),
        ("n +", "unexpected end"),
        ("n $ 2", r"unexpected '\$ 2'"),
        ("(n", "unexpected end"),
        ("n)", r"unexpected '\)'"),
        ("n ^ m", "exponent m is not a non-negative integer"),
        ("n ^ -1", "exponent -1"),
        ("*n", r"unexpected '\*'"),
        ("(n m)", "missing"),
    ],
)
def test_parse_dim_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        dims.parse_dim(text)


def test_parse_dim_inexact_division() -> None:
    with pytest.raises(Inconclusive, match="cannot divide 2\\*n \\+ 1 by 2"):
        dims.parse_dim("(2*n + 1) // 2")


# ---------------------------------------------------------------------------
# Arithmetic
# ---------------------------------------------------------------------------


def test_add_sub_mul_both_orders() -> None:
    assert n + 1 == 1 + n
    assert str(1 + n) == "n + 1"
    assert str(5 - n) == "-n + 5"
    assert str(n - 5) == "n - 5"
    assert str(3 * n) == "3*n" and 3 * n == n * 3
    assert (n + m) * (n - m) == n * n - m * m
    assert -(n - m) == m - n
    assert n + True == n + 1


def test_numpy_integers_interoperate() -> None:
    two = np.int64(2)
    assert str(two * n) == "2*n" and isinstance(two * n, SymbolicDim)
    assert str(n * two) == "2*n"
    assert str(two + n) == "n + 2"
    assert str(np.int32(7) - n) == "-n + 7"
    assert (n - n + 2) == two
    assert (np.int64(3) < n + 3) is True
    assert n + np.int8(0) == n


def test_unsupported_operands() -> None:
    with pytest.raises(TypeError):
        _ = n + 1.5
    with pytest.raises(TypeError):
        _ = n * "a"
    with pytest.raises(TypeError):
        _ = n / 2
    with pytest.raises(TypeError):
        _ = 2**n
    assert (n == "n") is False
    assert (n != None) is True  # noqa: E711
    assert (n == 1.0) is False
    with pytest.raises(TypeError):
        _ = n < 1.5


def test_pow() -> None:
    assert n**0 == 1 and type(n**0) is int
    assert n**1 == n
    assert n**3 == n * n * n
    assert (n + 1) ** 2 == n * n + 2 * n + 1
    with pytest.raises(Inconclusive, match="negative power"):
        _ = n**-1


def test_abs() -> None:
    assert abs(n) == n
    assert abs(-n) == n
    assert abs(1 - n - m) == n + m - 1
    with pytest.raises(Inconclusive, match=r"abs\(-m \+ n\) is inconclusive"):
        abs(n - m)


# ---------------------------------------------------------------------------
# Division
# ---------------------------------------------------------------------------


def test_exact_division_by_int() -> None:
    assert (6 * n + 4) // 2 == 3 * n + 2
    assert (6 * n + 4) % 2 == 0
    assert (6 * n) // -3 == -2 * n
    assert divmod(4 * n, 4) == (n, 0)
    assert (n * m) // 1 == n * m


def test_exact_division_by_polynomial() -> None:
    assert (n * m) // n == m
    assert (2 * n * m + 4 * n) // (2 * n) == m + 2
    assert (n * n - m * m) // (n - m) == n + m
    assert (n * n * n - 1) // (n - 1) == n * n + n + 1
    assert (n + 1) // (n + 1) == 1
    assert (n * m + n + m + 1) % (m + 1) == 0
    assert 0 // n == 0 and 0 % n == 0
    assert divmod(n * m, m) == (n, 0)
    assert divmod(0, n) == (0, 0)


@pytest.mark.parametrize(
    ("num", "den", "text"),
    [
        (2 * n + 1, 2, "2*n + 1 by 2"),
        (n, 2, "n by 2"),
        (n, m, "n by m"),
        (n + 1, n, "n + 1 by n"),
        (6, n, "6 by n"),
        (n * n + 1, n + 1, "n^2 + 1 by n + 1"),
    ],
)
def test_inexact_division(num: Any, den: Any, text: str) -> None:
    with pytest.raises(Inconclusive) as info:
        _ = num // den
    assert str(info.value) == (
        f"cannot divide {text}: the result is not a polynomial with integer coefficients"
    )
    with pytest.raises(Inconclusive, match="is not known to be a multiple of"):
        _ = num % den
    with pytest.raises(Inconclusive, match="divmod"):
        divmod(num, den)


def test_modulo_message() -> None:
    with pytest.raises(Inconclusive) as info:
        _ = (2 * n + 1) % 2
    assert str(info.value) == (
        "cannot compute (2*n + 1) % 2: 2*n + 1 is not known to be a multiple of 2 "
        "(only exact division of dimensions is supported)"
    )


def test_division_by_zero() -> None:
    with pytest.raises(ZeroDivisionError):
        _ = n // 0
    with pytest.raises(ZeroDivisionError):
        _ = n % (n - n)


# ---------------------------------------------------------------------------
# Comparisons, truth values, conversions
# ---------------------------------------------------------------------------

RAISE = object()


@pytest.mark.parametrize(
    ("left", "op", "right", "expected"),
    [
        (n, "==", n, True),
        (2 * n, "==", n + n, True),
        (n, "==", n + 1, False),
        (n, "==", 0, False),
        (2 * n, "==", n, False),
        (n * m, "==", 0, False),
        (n, "==", m, RAISE),
        (n, "==", 3, RAISE),
        (n * n, "==", n, RAISE),
        (n, "!=", n, False),
        (n, "!=", n + 1, True),
        (n, "!=", m, RAISE),
        (n, "!=", 1, RAISE),
        (2 * n, ">=", n, True),
        (n + 1, ">", n, True),
        (n, ">", n, False),
        (n, ">=", n, True),
        (n, ">=", 1, True),
        (n, ">", 0, True),
        (n, ">", 1, RAISE),
        (n, "<", 1, False),
        (n, "<=", 0, False),
        (n, "<", 0, False),
        (n, "<=", n * n, True),
        (n * n - n, ">=", 0, True),
        (m * n, ">=", n, True),
        (m * n - m - n, ">=", -1, RAISE),
        (n, ">=", m, RAISE),
        (n, "<", m, RAISE),
        (n, "<=", m, RAISE),
        (n, ">", m, RAISE),
        (-n, "<", 0, True),
        (1 - n, "<=", 0, True),
        (1 - n, "<", 0, RAISE),
        (3, "<", n + 3, True),
        (3, ">=", n + 3, False),
        (3, "==", n + 3, False),
        (n * n + m, ">", m * n - n, RAISE),
        (2 * n * m + 3, ">", n * m, True),
        (n * m * k - k, ">=", 0, True),
    ],
)
def test_comparisons(left: Any, op: str, right: Any, expected: object) -> None:
    fn = _OPS[op]
    if expected is RAISE:
        with pytest.raises(Inconclusive, match="is inconclusive"):
            fn(left, right)
    else:
        result = fn(left, right)
        assert type(result) is bool
        assert result is expected


def test_inconclusive_messages() -> None:
    with pytest.raises(Inconclusive) as info:
        _ = n == m
    assert str(info.value) == (
        "n == m is inconclusive: the answer may depend on the values of the sizes m, n "
        "(all sizes are integers >= 1)"
    )
    with pytest.raises(Inconclusive) as info:
        _ = n >= m
    assert str(info.value).startswith("n >= m is inconclusive: ")
    with pytest.raises(Inconclusive) as info:
        _ = n > 2
    assert str(info.value) == (
        "n > 2 is inconclusive: the answer may depend on the values of the size n "
        "(all sizes are integers >= 1)"
    )


def test_inconclusive_is_type_error() -> None:
    assert issubclass(Inconclusive, TypeError)
    with pytest.raises(TypeError):
        _ = n == m


def test_bool() -> None:
    assert bool(n) is True
    assert bool(n - n + 0) is False
    assert bool(-n) is True
    assert bool(n * n - n + 1) is True
    with pytest.raises(Inconclusive) as info:
        bool(n - 1)
    assert str(info.value) == (
        "the truth value of the dimension n - 1 is inconclusive: it may be zero for "
        "some values of the size n (all sizes are >= 1)"
    )


def test_int_index_float() -> None:
    for convert in (int, operator.index, float):
        with pytest.raises(Inconclusive, match=r"^the dimension 2\*n \+ 1 is not a constant"):
            convert(2 * n + 1)
    with pytest.raises(Inconclusive) as info:
        int(n)
    assert str(info.value) == (
        "the dimension n is not a constant (it depends on the size n), so it cannot be converted by int()"
    )
    with pytest.raises(Inconclusive, match="used as an index"):
        range(m * n)
    with pytest.raises(Inconclusive, match="used as an index"):
        [1, 2, 3][n]
    with pytest.raises(TypeError):
        np.zeros((n, 2))
    assert operator.index(SymbolicDim.const(4)) == 4
    assert float(SymbolicDim.const(4)) == 4.0


# ---------------------------------------------------------------------------
# Hashing
# ---------------------------------------------------------------------------


def test_hash_and_containers() -> None:
    table = {n: "n", 2 * n: "2n", m * n - 1: "mn-1", 3: "three"}
    assert table[SymbolicDim.var("n")] == "n"
    assert table[n + n] == "2n"
    assert table[dims.parse_dim("n*m - 1")] == "mn-1"
    assert table[n - n + 3] == "three"
    assert table[SymbolicDim.const(3)] == "three"
    assert hash(n * m) == hash(m * n)
    assert {n, n + 0, 1 * n, dims.parse_dim("n")} == {n}
    assert len({n, m, n + m, m + n}) == 3


# ---------------------------------------------------------------------------
# Bounds
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "low", "high"),
    [
        (n, 1, None),
        (-n, None, -1),
        (2 * n + 3, 5, None),
        (n - 1, 0, None),
        (n * n - n, 0, None),
        (n * m - n - m, None, None),
        (n * n - 3 * n, None, None),
        (5 - n * m, None, 4),
        (SymbolicDim.const(7), 7, 7),
    ],
)
def test_bounds(value: Any, low: int | None, high: int | None) -> None:
    assert value.lower_bound() == low
    assert value.upper_bound() == high


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------


def test_evaluate_ints() -> None:
    p = m * n * n - 3 * n + 2
    assert p.evaluate({"n": 2, "m": 5}) == 5 * 4 - 6 + 2
    assert type(p.evaluate({"n": 2, "m": 5, "extra": 1})) is int
    assert (1 - n).evaluate({"n": 4}) == -3
    assert dims.evaluate_dim(7, {}) == 7
    assert dims.evaluate_dim(2 * n, {"n": 3}) == 6
    assert dims.evaluate_shape((n, 3, n * m), {"n": 2, "m": 4}) == (2, 3, 8)
    assert SymbolicDim.const(0).evaluate({}) == 0


def test_evaluate_missing_size() -> None:
    with pytest.raises(dims.UnboundDimensionError) as info:
        (m * n).evaluate({"n": 1})
    assert isinstance(info.value, ValueError)
    assert str(info.value) == "cannot evaluate the dimension m*n: no value for the size 'm'"


def test_evaluate_numpy_and_substitution() -> None:
    value = (2 * n + 1).evaluate({"n": np.int32(3)})
    assert value == 7 and isinstance(value, np.integer)
    arr = (n * n - 1).evaluate({"n": np.array([1, 2, 3])})
    assert arr.tolist() == [0, 3, 8]
    # Dimensions substitute for sizes.
    assert (n * n + n).evaluate({"n": m + 1}) == m * m + 3 * m + 2


class _Recorder:
    """Supports only ``+`` and ``*`` (with ints or other recorders)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _wrap(self, other: object) -> str:
        return other.text if isinstance(other, _Recorder) else repr(other)

    def __add__(self, other: object) -> _Recorder:
        return _Recorder(f"({self.text} + {self._wrap(other)})")

    def __mul__(self, other: object) -> _Recorder:
        return _Recorder(f"({self.text} * {self._wrap(other)})")


def test_evaluate_uses_only_add_and_mul() -> None:
    result = (2 * m * n - n + 3).evaluate({"n": _Recorder("N"), "m": _Recorder("M")})
    assert result.text == "((((M * N) * 2) + (N * -1)) + 3)"
    result = (n * n).evaluate({"n": _Recorder("N")})
    assert result.text == "(N * N)"


# ---------------------------------------------------------------------------
# Module helpers
# ---------------------------------------------------------------------------


def test_is_symbolic_and_constant() -> None:
    assert dims.is_symbolic(n) and dims.is_symbolic(SymbolicDim.const(1))
    assert not dims.is_symbolic(3) and not dims.is_symbolic(np.int64(3))
    assert dims.is_constant_dim(3) and dims.is_constant_dim(np.int64(3))
    assert dims.is_constant_dim(SymbolicDim.const(2))
    assert not dims.is_constant_dim(n) and not dims.is_constant_dim(2.0)
    assert not dims.is_constant_dim(True)


def test_dim_as_int() -> None:
    assert dims.dim_as_int(4) == 4
    assert dims.dim_as_int(np.int16(4)) == 4 and type(dims.dim_as_int(np.int16(4))) is int
    assert dims.dim_as_int(SymbolicDim.const(5)) == 5
    assert dims.dim_as_int(n - n + 2) == 2
    with pytest.raises(Inconclusive) as info:
        dims.dim_as_int(2 * n, what="the size of a reshape")
    assert str(info.value) == (
        "the size of a reshape needs a concrete integer, but got the symbolic dimension "
        "2*n (it depends on the size n)"
    )
    with pytest.raises(Inconclusive, match=r"^this operation needs a concrete integer"):
        dims.dim_as_int(m * n)
    with pytest.raises(TypeError, match=r"reshape needs an integer dimension, got 2\.5"):
        dims.dim_as_int(2.5, what="reshape")


def test_dims_equal() -> None:
    assert dims.dims_equal(3, 3) is True
    assert dims.dims_equal(3, 4) is False
    assert dims.dims_equal(n, n) is True
    assert dims.dims_equal(n + 1, n) is False
    assert dims.dims_equal(np.int64(3), 3) is True
    assert dims.dims_equal(SymbolicDim.const(3), 3) is True
    with pytest.raises(Inconclusive, match="n == m is inconclusive"):
        dims.dims_equal(n, m)
    with pytest.raises(Inconclusive, match="3 == n is inconclusive"):
        dims.dims_equal(3, n)
    with pytest.raises(TypeError, match="expects dimensions"):
        dims.dims_equal(n, "n")


def test_definitely_equal() -> None:
    assert dims.definitely_equal(3, 3)
    assert not dims.definitely_equal(3, 4)
    assert dims.definitely_equal(n + m, m + n)
    assert not dims.definitely_equal(n, m)
    assert not dims.definitely_equal(n, 3)
    assert not dims.definitely_equal(n, n + 1)
    assert dims.definitely_equal(n - n + 3, SymbolicDim.const(3))
    assert not dims.definitely_equal(n, None)
    assert not dims.definitely_equal(3, 3.0)
    assert dims.definitely_equal_shapes((n, 3), [n, 3])
    assert not dims.definitely_equal_shapes((n, 3), (m, 3))
    assert not dims.definitely_equal_shapes((n,), (n, 1))


def test_shape_size() -> None:
    assert dims.shape_size(()) == 1
    assert dims.shape_size((2, 3, 4)) == 24 and type(dims.shape_size((2, 3, 4))) is int
    assert dims.shape_size((n, 3, m)) == 3 * m * n
    assert dims.shape_size([n, 0]) == 0 and type(dims.shape_size([n, 0])) is int
    assert dims.shape_size((n, n - n + 2)) == 2 * n


def test_canonicalize_shape() -> None:
    shape = (2, 3)
    assert dims.canonicalize_shape(shape, "zeros") is shape
    assert dims.canonicalize_shape([2, 3], "zeros") == (2, 3)
    out = dims.canonicalize_shape((np.int64(2), n, SymbolicDim.const(4)), "zeros")
    assert out == (2, n, 4)
    assert [type(d) for d in out] == [int, SymbolicDim, int]
    assert dims.canonicalize_shape(5, "zeros") == (5,)
    assert dims.canonicalize_shape(np.int32(5), "zeros") == (5,)
    assert dims.canonicalize_shape(n, "zeros") == (n,)
    assert dims.canonicalize_shape(np.array([2, 3]), "zeros") == (2, 3)
    assert dims.canonicalize_shape((), "zeros") == ()
    assert dims.canonicalize_shape((n - m,), "zeros") == (n - m,)


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        (
            (3, -1),
            (
                "zeros: shape (3, -1) has the negative dimension -1 at position 1; "
                "dimensions must be non-negative"
            ),
        ),
        (
            (2.0, 3),
            (
                "zeros: shape (2.0, 3) has the entry 2.0 at position 0 of type float; "
                "dimensions must be non-negative integers or symbolic dimensions"
            ),
        ),
        (
            (None,),
            (
                "zeros: shape (None,) has the entry None at position 0 of type NoneType; "
                "dimensions must be non-negative integers or symbolic dimensions"
            ),
        ),
        (
            (True, 2),
            (
                "zeros: shape (True, 2) has the entry True at position 0 of type bool; "
                "dimensions must be non-negative integers or symbolic dimensions"
            ),
        ),
        (
            [np.int64(-2)],
            (
                "zeros: shape [np.int64(-2)] has the negative dimension np.int64(-2) at position 0; "
                "dimensions must be non-negative"
            ),
        ),
        (
            (-n,),
            (
                "zeros: shape (-n,) has the negative dimension -n at position 0; "
                "dimensions must be non-negative"
            ),
        ),
        ("ab", "zeros: a shape must be a sequence of dimensions, got 'ab'"),
        (None, "zeros: a shape must be a sequence of dimensions, got None"),
        (2.5, "zeros: a shape must be a sequence of dimensions, got 2.5"),
    ],
)
def test_canonicalize_shape_errors(shape: object, message: str) -> None:
    if "np.int64(-2)" in message and not repr(np.int64(-2)).startswith("np."):
        message = message.replace("np.int64(-2)", repr(np.int64(-2)))
    with pytest.raises(TypeError) as info:
        dims.canonicalize_shape(shape, "zeros")
    assert str(info.value) == message


def test_max_min_dim() -> None:
    assert dims.max_dim(3, 5) == 5 and dims.min_dim(3, 5) == 3
    assert dims.max_dim(4) == 4 and dims.min_dim(n) == n
    assert dims.max_dim(n, 2 * n, 1) == 2 * n
    assert dims.min_dim(n, 2 * n, n * n) == n
    assert dims.max_dim(n, n) == n and dims.min_dim(n, n) == n
    assert dims.min_dim(n, 1) == 1 and type(dims.min_dim(n, 1)) is int
    assert dims.max_dim(n, 0) == n
    assert dims.max_dim(np.int64(2), n - n + 1) == 2
    with pytest.raises(Inconclusive) as info:
        dims.max_dim(2 * n, 3)
    assert str(info.value) == (
        "max_dim(2*n, 3) is inconclusive: which one is larger may depend on the values of the size n"
    )
    with pytest.raises(Inconclusive, match="min_dim\\(n, m\\) is inconclusive: which one is smaller"):
        dims.min_dim(n, m)
    with pytest.raises(TypeError, match="max_dim expects dimensions"):
        dims.max_dim(n, "x")


def test_int_fast_paths_are_fast() -> None:
    import timeit

    calls: list[Callable[[], object]] = [
        lambda: dims.dims_equal(3, 3),
        lambda: dims.definitely_equal(3, 4),
        lambda: dims.shape_size((3, 4, 5)),
        lambda: dims.canonicalize_shape((3, 4, 5), "x"),
        lambda: dims.dim_as_int(3),
        lambda: dims.max_dim(3, 4),
    ]
    for call in calls:
        best = min(timeit.repeat(call, number=2000, repeat=5)) / 2000
        assert best < 2e-6, call  # generous: typically 50-150 ns


# ---------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------

NAMES = ("k", "m", "n")

_monomials = st.lists(st.tuples(st.sampled_from(NAMES), st.integers(0, 2)), max_size=3).map(tuple)
_polys = st.one_of(
    st.integers(-6, 6),
    st.lists(st.tuples(_monomials, st.integers(-4, 4)), max_size=4).map(
        lambda terms: dims.simplify(SymbolicDim(terms))
    ),
)
_envs = st.fixed_dictionaries({name: st.integers(1, 7) for name in NAMES})
_env_lists = st.lists(_envs, min_size=1, max_size=6).map(lambda envs: [*envs, dict.fromkeys(NAMES, 1)])

_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def ev(d: Any, env: dict[str, int]) -> int:
    result = dims.evaluate_dim(d, env)
    assert type(result) is int
    return result


def _check_form(d: Any) -> None:
    # Constant results are ints; symbolic ones are never constant.
    if isinstance(d, SymbolicDim):
        assert not d.is_constant
    else:
        assert type(d) is int


@settings(max_examples=300, deadline=None)
@given(_polys, _polys, _env_lists)
def test_arithmetic_agrees_with_evaluation(p: Any, q: Any, envs: list[dict[str, int]]) -> None:
    results = {"+": p + q, "-": p - q, "*": p * q, "neg": -p, "sq": p**2}
    for value in results.values():
        _check_form(value)
    for env in envs:
        a, b = ev(p, env), ev(q, env)
        assert ev(results["+"], env) == a + b
        assert ev(results["-"], env) == a - b
        assert ev(results["*"], env) == a * b
        assert ev(results["neg"], env) == -a
        assert ev(results["sq"], env) == a * a


@settings(max_examples=300, deadline=None)
@given(_polys, _polys, _env_lists)
def test_comparisons_agree_with_evaluation(p: Any, q: Any, envs: list[dict[str, int]]) -> None:
    for op, fn in _OPS.items():
        try:
            result = fn(p, q)
        except Inconclusive:
            assert isinstance(p, SymbolicDim) or isinstance(q, SymbolicDim)
            continue
        assert type(result) is bool, op
        for env in envs:
            assert fn(ev(p, env), ev(q, env)) is result, (p, op, q, env)
    # definitely_equal never raises and implies equality everywhere.
    if dims.definitely_equal(p, q):
        assert all(ev(p, env) == ev(q, env) for env in envs)
        assert hash(p) == hash(q)


@settings(max_examples=300, deadline=None)
@given(_polys, _env_lists)
def test_bounds_and_truth_are_sound(p: Any, envs: list[dict[str, int]]) -> None:
    if not isinstance(p, SymbolicDim):
        return
    low, high = p.lower_bound(), p.upper_bound()
    for env in envs:
        value = ev(p, env)
        assert low is None or low <= value
        assert high is None or value <= high
    try:
        truth = bool(p)
    except Inconclusive:
        return
    assert all(bool(ev(p, env)) is truth for env in envs)


@settings(max_examples=300, deadline=None)
@given(_polys, _polys, _env_lists)
def test_division_of_products_is_exact(p: Any, q: Any, envs: list[dict[str, int]]) -> None:
    if isinstance(q, int) and q == 0:
        return
    product = p * q
    if isinstance(product, int) and isinstance(q, int):
        return  # plain int arithmetic
    assert dims.definitely_equal(product // q, p)
    assert product % q == 0
    assert divmod(product, q) == (product // q, 0)


@settings(max_examples=300, deadline=None)
@given(_polys, _polys, _env_lists)
def test_division_when_it_succeeds_agrees(p: Any, q: Any, envs: list[dict[str, int]]) -> None:
    if isinstance(p, int) and isinstance(q, int):
        return
    try:
        quotient = p // q
    except (Inconclusive, ZeroDivisionError):
        return
    _check_form(quotient)
    for env in envs:
        b = ev(q, env)
        if b:
            assert ev(p, env) == ev(quotient, env) * b
            assert ev(p, env) // b == ev(quotient, env)


@settings(max_examples=300, deadline=None)
@given(_polys)
def test_str_round_trips(p: Any) -> None:
    parsed = dims.parse_dim(str(p))
    assert dims.definitely_equal(parsed, p)
    assert type(parsed) is type(p)
    assert str(parsed) == str(p)
    assert hash(parsed) == hash(p)
    assert {p: 1}[parsed] == 1


@settings(max_examples=200, deadline=None)
@given(_polys, _polys)
def test_max_min_when_decided(p: Any, q: Any) -> None:
    for fn, pick in ((dims.max_dim, max), (dims.min_dim, min)):
        try:
            result = fn(p, q)
        except Inconclusive:
            continue
        for env in (dict.fromkeys(NAMES, 1), {"k": 2, "m": 5, "n": 3}, dict.fromkeys(NAMES, 9)):
            assert ev(result, env) == pick(ev(p, env), ev(q, env))
