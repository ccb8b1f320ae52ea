"""Parsing polymorphic shape specs."""

from __future__ import annotations

import pytest

from plait_core.dims import SymbolicDim, symbolic_dims
from plait_masking import WILDCARD, parse_spec
from plait_masking.specs import spec_names, spec_str

n, m = symbolic_dims("n m")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("n", (n,)),
        ("(n)", (n,)),
        ("(n,)", (n,)),
        ("n,", (n,)),
        ("(m, n)", (m, n)),
        ("m, n", (m, n)),
        ("(n + 1, 3)", (n + 1, 3)),
        ("2 * n", (2 * n,)),
        ("m * n - 1", (m * n - 1,)),
        ("(n + 1) * 2", (2 * n + 2,)),
        ("((n + 1) * 2, m)", (2 * n + 2, m)),
        ("n^2", (n * n,)),
        ("_", (WILDCARD,)),
        ("(_, n, _)", (WILDCARD, n, WILDCARD)),
        ("", ()),
        ("()", ()),
        ("  ", ()),
        ("3", (3,)),
        ("n - n + 4", (4,)),
    ],
)
def test_parse_spec(text: str, expected: tuple[object, ...]) -> None:
    got = parse_spec(text)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if e is WILDCARD:
            assert g is WILDCARD
        else:
            assert type(g) is type(e)
            assert g == e


def test_constant_dims_are_ints() -> None:
    (d,) = parse_spec("n - n + 4")
    assert type(d) is int and d == 4
    (d,) = parse_spec("n")
    assert isinstance(d, SymbolicDim)


@pytest.mark.parametrize(
    "text, message",
    [
        ("(n, , m)", r"cannot parse the shape spec '\(n, , m\)': dimension 1 is empty"),
        ("n +", r"cannot parse the shape spec 'n \+'"),
        ("n $ 2", r"cannot parse the shape spec 'n \$ 2'"),
        ("-3", r"the shape spec '-3' has the negative dimension -3 at position 0"),
        ("(2, n - 5 - n)", r"the shape spec '\(2, n - 5 - n\)' has the negative dimension -5 at position 1"),
        ("(n + 1) // 2", r"cannot parse the shape spec '\(n \+ 1\) // 2'"),
        ("(n", r"cannot parse the shape spec '\(n'"),
    ],
)
def test_malformed_specs(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_spec(text)


@pytest.mark.parametrize("bad", [3, None, ("n",), b"n"])
def test_spec_must_be_a_string(bad: object) -> None:
    with pytest.raises(TypeError, match="a shape spec must be a string such as"):
        parse_spec(bad)  # type: ignore[arg-type]


def test_spec_names_and_str() -> None:
    specs = [parse_spec("(m, n + 1)"), parse_spec("_"), parse_spec("k*n")]
    assert spec_names(specs) == ["k", "m", "n"]
    assert spec_str(parse_spec("(m, n + 1)")) == "(m, n + 1)"
    assert spec_str(parse_spec("2*n")) == "(2*n,)"
    assert spec_str(parse_spec("")) == "()"
