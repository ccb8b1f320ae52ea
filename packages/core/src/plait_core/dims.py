"""Array dimensions that may be symbolic.

A dimension (:data:`Dim`) is either a plain ``int`` or a :class:`SymbolicDim`:
a polynomial with integer coefficients in named sizes such as ``n``, ``m`` or
``batch_len``.  Masking uses symbolic dimensions for shape-polymorphic sizes
(``n``, ``2*n``, ``m*n - 1``) and batching uses them for ragged lengths.

Shape rules compute with dimensions generically, so a :class:`SymbolicDim`
behaves like an ``int`` wherever the answer is decidable:

* ``+``, ``-``, ``*`` and ``**`` (by a non-negative int) always work, and a
  result that is constant is a plain ``int`` (``n - n + 3`` is ``3``).
* ``//`` and ``%`` work when the division is exact as polynomials.
* ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` and ``bool()`` answer when the
  answer is the same for every value of the sizes.  Every size is an integer
  ``>= 1``.  When the answer may depend on the sizes they raise
  :class:`InconclusiveDimensionOperation`.
* ``int()``, ``operator.index()`` (and so ``range``, indexing, NumPy shapes)
  raise :class:`InconclusiveDimensionOperation` for a dimension that is not a
  constant.

Decisions are sound but not complete: a comparison that is true for every
value of the sizes may still be reported as inconclusive, never the reverse.

The module helpers (:func:`dims_equal`, :func:`shape_size`,
:func:`canonicalize_shape`, ...) have a fast path for plain ``int`` values,
which are by far the most common dimensions.
"""

from __future__ import annotations

import functools
import keyword
import math
import numbers
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final, NoReturn, TypeAlias, cast, overload

__all__ = [
    "Dim",
    "InconclusiveDimensionOperation",
    "Monomial",
    "Shape",
    "SymbolicDim",
    "UnboundDimensionError",
    "canonicalize_shape",
    "definitely_equal",
    "definitely_equal_shapes",
    "dim_as_int",
    "dims_equal",
    "evaluate_dim",
    "evaluate_shape",
    "free_names",
    "is_constant_dim",
    "is_symbolic",
    "max_dim",
    "min_dim",
    "parse_dim",
    "shape_size",
    "simplify",
    "symbolic_dims",
]

Monomial: TypeAlias = tuple[tuple[str, int], ...]
"""A product of named sizes: ``(name, power)`` pairs sorted by name, powers ``>= 1``.
The empty monomial ``()`` is the constant ``1``."""

_Terms: TypeAlias = tuple[tuple[Monomial, int], ...]
_ONE: Final[Monomial] = ()


class InconclusiveDimensionOperation(TypeError):
    """An operation on symbolic dimensions whose result depends on the values
    of the sizes (``n == m``, ``int(n)``, ``(2*n + 1) // 2``, ...).

    It subclasses ``TypeError`` so a failed shape check on symbolic shapes
    surfaces as the same kind of error as any other shape mismatch."""


class UnboundDimensionError(ValueError):
    """A symbolic dimension was evaluated without a value for one of its sizes."""


# ---------------------------------------------------------------------------
# Monomials and term tuples
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _mono_key(mono: Monomial) -> tuple[int, tuple[tuple[tuple[int, ...], int], ...]]:
    """Key of the graded lexicographic order (larger key = larger monomial).

    Monomials are compared by total degree, then lexicographically by their
    exponent vectors with variables ordered by name.  Within a pair, a name
    that sorts earlier must compare *larger*; encoding it as negated code
    points plus a sentinel above every negated code point achieves that
    (``"a"`` > ``"ab"`` > ``"b"``)."""
    degree = 0
    entries = []
    for name, power in mono:
        degree += power
        entries.append((tuple(-ord(ch) for ch in name) + (1,), power))
    return degree, tuple(entries)


def _term_key(term: tuple[Monomial, int]) -> tuple[int, tuple[tuple[tuple[int, ...], int], ...]]:
    return _mono_key(term[0])


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    if not a:
        return b
    if not b:
        return a
    powers = dict(a)
    for name, power in b:
        powers[name] = powers.get(name, 0) + power
    return tuple(sorted(powers.items()))


def _mono_div(a: Monomial, b: Monomial) -> Monomial | None:
    """``a / b`` if ``b`` divides ``a``, else ``None``."""
    if not b:
        return a
    powers = dict(a)
    for name, power in b:
        left = powers.get(name, 0) - power
        if left < 0:
            return None
        if left:
            powers[name] = left
        else:
            del powers[name]
    return tuple(sorted(powers.items()))


def _mono_divides(b: Monomial, a: Monomial) -> bool:
    """Whether ``b`` divides ``a``."""
    powers = dict(a)
    return all(powers.get(name, 0) >= power for name, power in b)


def _mono_str(mono: Monomial) -> str:
    return "*".join(name if power == 1 else f"{name}^{power}" for name, power in mono)


def _canonical(terms: Mapping[Monomial, int]) -> _Terms:
    """Drop zero coefficients and sort by decreasing graded lexicographic order."""
    return tuple(sorted(((m, c) for m, c in terms.items() if c), key=_term_key, reverse=True))


def _const_of(terms: _Terms) -> int:
    """The constant term."""
    if terms and not terms[-1][0]:
        return terms[-1][1]
    return 0


def _lower_bound(terms: _Terms) -> int | None:
    """A lower bound of the polynomial over integer sizes ``>= 1``, or ``None``.

    Every non-constant monomial is ``>= 1`` and unbounded above.  A positive
    term ``b*M`` contributes at least ``b``.  A negative term ``-a*m`` is only
    bounded if it can be paid for by positive terms ``b*M`` with ``m``
    dividing ``M``: then ``b*M - b*m = b*m*(M/m - 1) >= 0``.  Negative terms
    are matched greedily, highest degree first; a negative term that cannot
    be paid for in full makes the polynomial unbounded below as far as this
    routine can tell."""
    const = 0
    positive: dict[Monomial, int] = {}
    negative: list[tuple[Monomial, int]] = []
    for mono, coeff in terms:
        if not mono:
            const = coeff
        elif coeff > 0:
            positive[mono] = coeff
        else:
            negative.append((mono, -coeff))
    for mono, owed in negative:
        for big, available in positive.items():
            if available and _mono_divides(mono, big):
                paid = min(available, owed)
                positive[big] = available - paid
                owed -= paid
                if not owed:
                    break
        if owed:
            return None
    return const + sum(positive.values())


def _negate_terms(terms: _Terms) -> _Terms:
    return tuple((m, -c) for m, c in terms)


def _upper_bound(terms: _Terms) -> int | None:
    low = _lower_bound(_negate_terms(terms))
    return None if low is None else -low


def _is_integral(value: object) -> bool:
    return isinstance(value, numbers.Integral)


_dimension_as_value: list[Callable[[Any], Any]] = []
"""``dimension_as_value`` (a size as an integer scalar value), registered by the
primitives' layer, which defines the primitive it binds."""


def register_dimension_as_value(fn: Callable[[Any], Any]) -> None:
    """Install ``dimension_as_value`` for the arithmetic of dimensions with values."""
    _dimension_as_value[:] = [fn]


def _value_op(
    op: Callable[[Any, Any], Any], dim: SymbolicDim, other: Any, *, reflected: bool, any_number: bool = False
) -> Dim:
    """``dim op other`` (or ``other op dim``) computed on values, for an operand
    that is not a dimension (``n * 0.5``) or an operator whose result is not
    one (``n / 2``): the dimension becomes its integer scalar value
    (``dimension_as_value``, bound on the current trace), as JAX's symbolic
    dimensions do.  Other operands (tracers, arrays) answer ``NotImplemented``,
    so that their own reflected operator decides; so does every operand when
    no transformation is active, since no size has a value there."""
    from plait_core.trace import is_eager  # lazy: trace imports this module

    dimension_as_value = _dimension_as_value[0]

    # Typed as Dim for the operators that declare it: their annotations admit
    # only dimensions, for which this function is never called.
    result: Dim = NotImplemented
    number = isinstance(other, numbers.Number) and not isinstance(other, bool)
    takes = (number and (any_number or not _is_integral(other))) or (any_number and isinstance(other, SymbolicDim))
    if takes and not is_eager():
        value = dimension_as_value(dim)
        result = op(other, value) if reflected else op(value, other)
    return result


def _names_text(names: Iterable[str]) -> str:
    ordered = sorted(names)
    if len(ordered) == 1:
        return f"the size {ordered[0]}"
    return "the sizes " + ", ".join(ordered)


# ---------------------------------------------------------------------------
# SymbolicDim
# ---------------------------------------------------------------------------


class SymbolicDim:
    """An immutable polynomial with integer coefficients in named sizes.

    Sizes are integers ``>= 1``.  Build one with :meth:`var` (or
    :func:`symbolic_dims`, :func:`parse_dim`) and combine with ``+ - * //
    % **``; results that are constant come back as plain ``int``.  Inside
    a transformation that binds the sizes (``mask``, ``vmap`` over piles),
    ``/`` and ``+ - *`` with a non-integer number compute on the size's
    value instead, as JAX's symbolic dimensions do (``n / 2`` and
    ``0.5 * n`` are scalar arrays); with no transformation active they are a
    ``TypeError``.

    The constructor takes ``(monomial, coefficient)`` pairs (or a mapping
    from monomials to coefficients) and normalises them.  It does not
    simplify: ``SymbolicDim([((), 3)])`` and :meth:`const` give a constant
    ``SymbolicDim``, which compares and hashes like the ``int`` it equals.
    Use :func:`simplify` to get the ``int``.
    """

    __slots__ = ("_hash", "_terms")

    # NumPy scalars defer binary operators to us (``np.int64(2) * n``).
    __array_ufunc__ = None

    _terms: _Terms
    _hash: int

    def __init__(self, terms: Mapping[Monomial, int] | Iterable[tuple[Monomial, int]] = ()) -> None:
        items = terms.items() if isinstance(terms, Mapping) else terms
        merged: dict[Monomial, int] = {}
        for mono, coeff in items:
            if not _is_integral(coeff) or isinstance(coeff, bool):
                raise TypeError(f"SymbolicDim coefficients must be integers, got {coeff!r}")
            key = _normalize_monomial(mono)
            merged[key] = merged.get(key, 0) + operator.index(coeff)
        self._set(_canonical(merged))

    def _set(self, terms: _Terms) -> None:
        object.__setattr__(self, "_terms", terms)
        if not terms or (len(terms) == 1 and not terms[0][0]):
            h = hash(_const_of(terms))
        else:
            h = hash(terms)
        object.__setattr__(self, "_hash", h)

    @classmethod
    def _from_canonical(cls, terms: _Terms) -> SymbolicDim:
        self = object.__new__(cls)
        self._set(terms)
        return self

    # -- constructors --------------------------------------------------------

    @classmethod
    def var(cls, name: str) -> SymbolicDim:
        """The dimension made of the single size ``name`` (a Python identifier)."""
        _check_name(name)
        return cls._from_canonical(((((name, 1),), 1),))

    @classmethod
    def const(cls, value: int) -> SymbolicDim:
        """A constant polynomial (mostly useful as a starting point for sums)."""
        if not _is_integral(value) or isinstance(value, bool):
            raise TypeError(f"SymbolicDim.const expects an integer, got {value!r}")
        v = operator.index(value)
        return cls._from_canonical((((), v),) if v else ())

    # -- immutability, pickling ----------------------------------------------

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError(f"SymbolicDim is immutable; cannot set {name!r}")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError(f"SymbolicDim is immutable; cannot delete {name!r}")

    def __reduce__(self) -> tuple[type[SymbolicDim], tuple[_Terms]]:
        return (SymbolicDim, (self._terms,))

    def __copy__(self) -> SymbolicDim:
        return self

    def __deepcopy__(self, memo: object) -> SymbolicDim:
        return self

    # -- accessors -----------------------------------------------------------

    @property
    def terms(self) -> tuple[tuple[Monomial, int], ...]:
        """``(monomial, coefficient)`` pairs, highest degree first, no zero coefficients."""
        return self._terms

    @property
    def coefficients(self) -> dict[Monomial, int]:
        """A fresh dict from each monomial to its (nonzero) coefficient."""
        return dict(self._terms)

    @property
    def is_constant(self) -> bool:
        """Whether the polynomial has no size in it (only :meth:`const` builds such)."""
        return not self._terms or (len(self._terms) == 1 and not self._terms[0][0])

    @property
    def constant_term(self) -> int:
        """The coefficient of the empty monomial."""
        return _const_of(self._terms)

    @property
    def leading_term(self) -> tuple[Monomial, int]:
        """The largest ``(monomial, coefficient)`` in graded lexicographic order."""
        return self._terms[0] if self._terms else (_ONE, 0)

    @property
    def degree(self) -> int:
        """Total degree (0 for a constant)."""
        return _mono_key(self._terms[0][0])[0] if self._terms else 0

    def free_names(self) -> frozenset[str]:
        """The names of the sizes the polynomial mentions."""
        return frozenset(name for mono, _ in self._terms for name, _ in mono)

    def lower_bound(self) -> int | None:
        """A lower bound over all sizes ``>= 1`` (``None``: none found).  Sound, not tight."""
        return _lower_bound(self._terms)

    def upper_bound(self) -> int | None:
        """An upper bound over all sizes ``>= 1`` (``None``: none found).  Sound, not tight."""
        return _upper_bound(self._terms)

    # -- evaluation ----------------------------------------------------------

    @overload
    def evaluate(self, env: Mapping[str, int]) -> int: ...

    @overload
    def evaluate(self, env: Mapping[str, Any]) -> Any: ...

    def evaluate(self, env: Mapping[str, Any]) -> Any:
        """Substitute ``env[name]`` for every size.

        Only ``+``, ``*`` and Python ``int`` constants are applied to the
        values of ``env``, so they may be any number-like objects (NumPy
        scalars, traced values, other dimensions).  With ``int`` values the
        result is an ``int``.  A missing size raises
        :class:`UnboundDimensionError`."""
        total: Any = None
        for mono, coeff in self._terms:
            value: Any = None
            for name, power in mono:
                try:
                    base = env[name]
                except KeyError:
                    raise UnboundDimensionError(
                        f"cannot evaluate the dimension {self}: no value for the size {name!r}"
                    ) from None
                for _ in range(power):
                    value = base if value is None else value * base
            if value is None:
                value = coeff
            elif coeff != 1:
                value = value * coeff
            total = value if total is None else total + value
        return 0 if total is None else total

    # -- formatting ----------------------------------------------------------

    def __str__(self) -> str:
        if not self._terms:
            return "0"
        parts: list[str] = []
        for mono, coeff in self._terms:
            magnitude = abs(coeff)
            if not mono:
                body = str(magnitude)
            elif magnitude == 1:
                body = _mono_str(mono)
            else:
                body = f"{magnitude}*{_mono_str(mono)}"
            if not parts:
                parts.append(f"-{body}" if coeff < 0 else body)
            else:
                parts.append(f" - {body}" if coeff < 0 else f" + {body}")
        return "".join(parts)

    __repr__ = __str__

    # -- hashing and conversions --------------------------------------------

    def __hash__(self) -> int:
        return self._hash

    def _not_constant(self, what: str) -> InconclusiveDimensionOperation:
        return InconclusiveDimensionOperation(
            f"the dimension {self} is not a constant (it depends on "
            f"{_names_text(self.free_names())}), so it cannot be {what}"
        )

    def __int__(self) -> int:
        if self.is_constant:
            return _const_of(self._terms)
        raise self._not_constant("converted by int()")

    def __index__(self) -> int:
        if self.is_constant:
            return _const_of(self._terms)
        raise self._not_constant("used as an index or a concrete integer size")

    def __float__(self) -> float:
        if self.is_constant:
            return float(_const_of(self._terms))
        raise self._not_constant("converted by float()")

    def __bool__(self) -> bool:
        result = _decide_eq(self._terms)
        if result is None:
            raise InconclusiveDimensionOperation(
                f"the truth value of the dimension {self} is inconclusive: it may be zero "
                f"for some values of {_names_text(self.free_names())} (all sizes are >= 1)"
            )
        return not result

    # -- arithmetic ----------------------------------------------------------

    def __add__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return _value_op(operator.add, self, other, reflected=False)
        return _add_terms(self._terms, o, 1)

    def __radd__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return _value_op(operator.add, self, other, reflected=True)
        return _add_terms(o, self._terms, 1)

    def __sub__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return _value_op(operator.sub, self, other, reflected=False)
        return _add_terms(self._terms, o, -1)

    def __rsub__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return _value_op(operator.sub, self, other, reflected=True)
        return _add_terms(o, self._terms, -1)

    def __neg__(self) -> Dim:
        return simplify(SymbolicDim._from_canonical(_negate_terms(self._terms)))

    def __pos__(self) -> Dim:
        return simplify(self)

    def __abs__(self) -> Dim:
        if _decide_ge(self._terms, 0):
            return simplify(self)
        if _decide_ge(_negate_terms(self._terms), 0):
            return -self
        raise InconclusiveDimensionOperation(
            f"abs({self}) is inconclusive: the sign of {self} may depend on {_names_text(self.free_names())}"
        )

    def __mul__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return _value_op(operator.mul, self, other, reflected=False)
        return _mul_terms(self._terms, o)

    def __rmul__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return _value_op(operator.mul, self, other, reflected=True)
        return _mul_terms(o, self._terms)

    def __truediv__(self, other: Any) -> Any:
        # "/" is never a dimension (it would not be an integer): a value, as in JAX.
        return _value_op(operator.truediv, self, other, reflected=False, any_number=True)

    def __rtruediv__(self, other: Any) -> Any:
        return _value_op(operator.truediv, self, other, reflected=True, any_number=True)

    def __pow__(self, exponent: int) -> Dim:
        if not _is_integral(exponent) or isinstance(exponent, bool):
            return NotImplemented
        e = operator.index(exponent)
        if e < 0:
            raise InconclusiveDimensionOperation(
                f"cannot raise the dimension {self} to the negative power {e}"
            )
        result: Dim = 1
        base: Dim = self
        while e:
            if e & 1:
                result = result * base
            e >>= 1
            if e:
                base = base * base
        return result

    def __floordiv__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return _floordiv_terms(self._terms, o, self, other, "//")

    def __rfloordiv__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return _floordiv_terms(o, self._terms, other, self, "//")

    def __mod__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        _floordiv_terms(self._terms, o, self, other, "%")
        return 0

    def __rmod__(self, other: Dim) -> Dim:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        _floordiv_terms(o, self._terms, other, self, "%")
        return 0

    def __divmod__(self, other: Dim) -> tuple[Dim, Dim]:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return _floordiv_terms(self._terms, o, self, other, "divmod"), 0

    def __rdivmod__(self, other: Dim) -> tuple[Dim, Dim]:
        o = _coerce(other)
        if o is None:
            return NotImplemented  # type: ignore[no-any-return]
        return _floordiv_terms(o, self._terms, other, self, "divmod"), 0

    # -- comparisons ---------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        diff = _sum_terms(self._terms, o, -1)
        result = _decide_eq(diff)
        if result is None:
            raise _inconclusive(self, "==", other)
        return result

    def __ne__(self, other: object) -> bool:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        diff = _sum_terms(self._terms, o, -1)
        result = _decide_eq(diff)
        if result is None:
            raise _inconclusive(self, "!=", other)
        return not result

    def __ge__(self, other: Dim) -> bool:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return self._compare(o, other, ">=", False, 0)

    def __gt__(self, other: Dim) -> bool:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return self._compare(o, other, ">", False, 1)

    def __le__(self, other: Dim) -> bool:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return self._compare(o, other, "<=", True, 0)

    def __lt__(self, other: Dim) -> bool:
        o = _coerce(other)
        if o is None:
            return NotImplemented
        return self._compare(o, other, "<", True, 1)

    def _compare(self, o: _Terms, other: object, op: str, flip: bool, at_least: int) -> bool:
        # ``self - other >= at_least`` (or ``other - self`` when ``flip``).
        diff = _sum_terms(o, self._terms, -1) if flip else _sum_terms(self._terms, o, -1)
        result = _decide_ge(diff, at_least)
        if result is None:
            raise _inconclusive(self, op, other)
        return result


Dim: TypeAlias = int | SymbolicDim
"""A dimension of an abstract array: a non-negative ``int`` or a :class:`SymbolicDim`."""

Shape: TypeAlias = tuple[Dim, ...]
"""An abstract array shape."""


# ---------------------------------------------------------------------------
# Helpers for SymbolicDim
# ---------------------------------------------------------------------------


def _check_name(name: object) -> None:
    if not isinstance(name, str):
        raise TypeError(f"a size name must be a string, got {name!r}")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ValueError(f"a size name must be a Python identifier, got {name!r}")


def _normalize_monomial(mono: object) -> Monomial:
    if not isinstance(mono, tuple):
        raise TypeError(f"a monomial must be a tuple of (name, power) pairs, got {mono!r}")
    powers: dict[str, int] = {}
    for entry in mono:
        if not (isinstance(entry, tuple) and len(entry) == 2):
            raise TypeError(f"a monomial must be a tuple of (name, power) pairs, got {mono!r}")
        name, power = entry
        _check_name(name)
        if not _is_integral(power) or isinstance(power, bool) or power < 0:
            raise TypeError(f"a power in a monomial must be an integer >= 0, got {power!r}")
        if power:
            powers[name] = powers.get(name, 0) + int(power)
    return tuple(sorted(powers.items()))


def _coerce(value: object) -> _Terms | None:
    """Terms of a dimension-like value, or ``None`` for anything else."""
    if type(value) is SymbolicDim:
        return value._terms
    if type(value) is int:
        return (((), value),) if value else ()
    if isinstance(value, SymbolicDim):
        return value._terms
    if _is_integral(value):
        v = operator.index(value)  # type: ignore[arg-type]
        return (((), v),) if v else ()
    return None


def _sum_terms(a: _Terms, b: _Terms, sign: int) -> _Terms:
    acc = dict(a)
    for mono, coeff in b:
        acc[mono] = acc.get(mono, 0) + sign * coeff
    return _canonical(acc)


def _add_terms(a: _Terms, b: _Terms, sign: int) -> Dim:
    return _simplify_terms(_sum_terms(a, b, sign))


def _mul_terms(a: _Terms, b: _Terms) -> Dim:
    acc: dict[Monomial, int] = {}
    for ma, ca in a:
        for mb, cb in b:
            m = _mono_mul(ma, mb)
            acc[m] = acc.get(m, 0) + ca * cb
    return _simplify_terms(_canonical(acc))


def _exact_quotient(num: _Terms, den: _Terms) -> _Terms | None:
    """``num / den`` as a polynomial with integer coefficients, or ``None``.

    Polynomial long division in graded lexicographic order.  For one divisor
    it is complete: if ``num == q * den`` then the leading term of every
    remainder is the leading term of ``den`` times a term of ``q`` with an
    integer coefficient, so the division never gets stuck."""
    lead_mono, lead_coeff = den[0]
    remainder = dict(num)
    quotient: dict[Monomial, int] = {}
    while remainder:
        mono = max(remainder, key=_mono_key)
        coeff = remainder[mono]
        q_mono = _mono_div(mono, lead_mono)
        if q_mono is None or coeff % lead_coeff:
            return None
        q_coeff = coeff // lead_coeff
        quotient[q_mono] = quotient.get(q_mono, 0) + q_coeff
        for d_mono, d_coeff in den:
            m = _mono_mul(q_mono, d_mono)
            left = remainder.get(m, 0) - q_coeff * d_coeff
            if left:
                remainder[m] = left
            else:
                remainder.pop(m, None)
    return _canonical(quotient)


def _floordiv_terms(num: _Terms, den: _Terms, num_obj: object, den_obj: object, op: str) -> Dim:
    if not den:
        raise ZeroDivisionError(f"the dimension {num_obj} is divided by zero")
    quotient = _exact_quotient(num, den)
    if quotient is None:
        if op == "//":
            raise InconclusiveDimensionOperation(
                f"cannot divide {num_obj} by {den_obj}: the result is not a polynomial "
                "with integer coefficients"
            )
        what = (
            f"divmod({num_obj}, {den_obj})"
            if op == "divmod"
            else f"{_operand(num_obj)} % {_operand(den_obj)}"
        )
        raise InconclusiveDimensionOperation(
            f"cannot compute {what}: {num_obj} is not known to be a multiple of {den_obj} "
            "(only exact division of dimensions is supported)"
        )
    return _simplify_terms(quotient)


def _operand(value: object) -> str:
    """``value`` as an operand of a binary operator in a message."""
    if isinstance(value, SymbolicDim) and len(value.terms) > 1:
        return f"({value})"
    return str(value)


def _decide_ge(terms: _Terms, at_least: int) -> bool | None:
    """Whether the polynomial is ``>= at_least`` for all sizes; ``None`` if unsure."""
    if not terms or (len(terms) == 1 and not terms[0][0]):
        return _const_of(terms) >= at_least
    low = _lower_bound(terms)
    if low is not None and low >= at_least:
        return True
    high = _upper_bound(terms)
    if high is not None and high < at_least:
        return False
    return None


def _decide_eq(terms: _Terms) -> bool | None:
    """Whether the polynomial is zero for all sizes; ``None`` if unsure."""
    if not terms or (len(terms) == 1 and not terms[0][0]):
        return _const_of(terms) == 0
    # A nonzero polynomial is not identically zero; it is never zero if it is
    # bounded away from zero.
    if _decide_ge(terms, 1) or _decide_ge(_negate_terms(terms), 1):
        return False
    return None


def _inconclusive(left: object, op: str, right: object) -> InconclusiveDimensionOperation:
    names: set[str] = set()
    for side in (left, right):
        if isinstance(side, SymbolicDim):
            names |= side.free_names()
    return InconclusiveDimensionOperation(
        f"{left} {op} {right} is inconclusive: the answer may depend on the values of "
        f"{_names_text(names)} (all sizes are integers >= 1)"
    )


def _simplify_terms(terms: _Terms) -> Dim:
    if not terms:
        return 0
    if len(terms) == 1 and not terms[0][0]:
        return terms[0][1]
    return SymbolicDim._from_canonical(terms)


# ---------------------------------------------------------------------------
# Public helpers
# ---------------------------------------------------------------------------


def simplify(d: Dim) -> Dim:
    """``d`` as an ``int`` if it is constant, else unchanged."""
    if type(d) is int:
        return d
    if isinstance(d, SymbolicDim):
        return _simplify_terms(d._terms)
    if _is_integral(d):
        return operator.index(d)
    raise TypeError(f"expected a dimension (int or SymbolicDim), got {d!r}")


def symbolic_dims(names: str | Iterable[str]) -> tuple[SymbolicDim, ...]:
    """One :class:`SymbolicDim` per name: ``n, m = symbolic_dims("n m")``.

    A string is split on whitespace and commas."""
    if isinstance(names, str):
        names = [part for part in re.split(r"[\s,]+", names) if part]
    return tuple(SymbolicDim.var(name) for name in names)


def is_symbolic(d: object) -> bool:
    """Whether ``d`` is a :class:`SymbolicDim` (constant ones included)."""
    return isinstance(d, SymbolicDim)


def is_constant_dim(d: object) -> bool:
    """Whether ``d`` is a dimension with a known integer value."""
    if type(d) is int:
        return True
    if isinstance(d, SymbolicDim):
        return d.is_constant
    return _is_integral(d) and not isinstance(d, bool)


def free_names(d: Dim) -> frozenset[str]:
    """The sizes ``d`` mentions (empty for an ``int``)."""
    if isinstance(d, SymbolicDim):
        return d.free_names()
    return frozenset()


def dim_as_int(d: Dim, what: str = "this operation") -> int:
    """``d`` as an ``int``; raises :class:`InconclusiveDimensionOperation`
    naming ``d`` and ``what`` (e.g. ``"the size of a reshape"``) if it is symbolic."""
    if type(d) is int:
        return d
    if isinstance(d, SymbolicDim):
        if d.is_constant:
            return d.constant_term
        raise InconclusiveDimensionOperation(
            f"{what} needs a concrete integer, but got the symbolic dimension {d} "
            f"(it depends on {_names_text(d.free_names())})"
        )
    if _is_integral(d) and not isinstance(d, bool):
        return operator.index(d)
    raise TypeError(f"{what} needs an integer dimension, got {d!r}")


def dims_equal(a: Dim, b: Dim) -> bool:
    """``a == b`` for dimensions; raises :class:`InconclusiveDimensionOperation`
    when the answer depends on the sizes."""
    if type(a) is int and type(b) is int:
        return a == b
    ta, tb = _coerce(a), _coerce(b)
    if ta is None or tb is None:
        raise TypeError(f"dims_equal expects dimensions, got {a!r} and {b!r}")
    result = _decide_eq(_sum_terms(ta, tb, -1))
    if result is None:
        raise _inconclusive(a, "==", b)
    return result


def definitely_equal(a: object, b: object) -> bool:
    """Whether ``a`` and ``b`` are provably the same dimension.  Never raises:
    returns ``False`` when unsure or when either is not a dimension."""
    if type(a) is int and type(b) is int:
        return a == b
    ta, tb = _coerce(a), _coerce(b)
    if ta is None or tb is None:
        return False
    return not _sum_terms(ta, tb, -1)


def definitely_equal_shapes(a: Iterable[object], b: Iterable[object]) -> bool:
    """Whether two shapes have the same rank and provably equal dimensions.
    Never raises (unlike ``tuple ==`` on shapes holding distinct symbolic dims)."""
    ta, tb = tuple(a), tuple(b)
    if len(ta) != len(tb):
        return False
    return all(definitely_equal(x, y) for x, y in zip(ta, tb))


def shape_size(shape: Iterable[Dim]) -> Dim:
    """The number of elements of ``shape``: the product of its dimensions."""
    return math.prod(shape)


def canonicalize_shape(shape: object, context: str = "shape") -> Shape:
    """``shape`` as a tuple of non-negative ``int`` and :class:`SymbolicDim` entries.

    Accepts any sequence (or a single integer or dimension) whose entries
    are ints, NumPy integers or symbolic dimensions; constant symbolic
    dimensions become ints.  Anything else (negative sizes, floats, bools,
    ``None``, strings, ...) raises ``TypeError`` naming ``context`` and the
    offending entry."""
    if type(shape) is tuple:
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            return shape
    if isinstance(shape, (str, bytes)) or shape is None:
        raise TypeError(f"{context}: a shape must be a sequence of dimensions, got {shape!r}")
    if isinstance(shape, SymbolicDim) or _is_integral(shape):
        entries: tuple[object, ...] = (shape,)
    else:
        try:
            entries = tuple(cast(Iterable[object], shape))
        except TypeError:
            raise TypeError(f"{context}: a shape must be a sequence of dimensions, got {shape!r}") from None
    out: list[Dim] = []
    for i, d in enumerate(entries):
        out.append(_canonical_dim(d, i, shape, context))
    return tuple(out)


def _canonical_dim(d: object, i: int, shape: object, context: str) -> Dim:
    if type(d) is int:
        if d >= 0:
            return d
    elif isinstance(d, SymbolicDim):
        if d.is_constant:
            value = d.constant_term
            if value >= 0:
                return value
        elif _decide_ge(d._terms, 0) is not False:
            return d
    elif _is_integral(d) and not isinstance(d, bool):
        value = operator.index(d)  # type: ignore[arg-type]
        if value >= 0:
            return value
    else:
        raise TypeError(
            f"{context}: shape {shape!r} has the entry {d!r} at position {i} of type "
            f"{type(d).__name__}; dimensions must be non-negative integers or symbolic dimensions"
        )
    raise TypeError(
        f"{context}: shape {shape!r} has the negative dimension {d!r} at position {i}; "
        "dimensions must be non-negative"
    )


def _extreme(dims: tuple[Dim, ...], want_max: bool, name: str) -> Dim:
    best = dims[0]
    for d in dims[1:]:
        if type(best) is int and type(d) is int:
            if (d > best) if want_max else (d < best):
                best = d
            continue
        tb, td = _coerce(best), _coerce(d)
        if tb is None or td is None:
            raise TypeError(f"{name} expects dimensions, got {best!r} and {d!r}")
        diff = _sum_terms(td, tb, -1)  # d - best
        d_ge = _decide_ge(diff, 0) is True
        d_le = _decide_ge(_negate_terms(diff), 0) is True
        if d_ge or d_le:
            if d_ge if want_max else d_le:
                best = d
        else:
            raise InconclusiveDimensionOperation(
                f"{name}({best}, {d}) is inconclusive: which one is "
                f"{'larger' if want_max else 'smaller'} may depend on the "
                f"values of {_names_text(free_names(best) | free_names(d))}"
            )
    return simplify(best)


def max_dim(first: Dim, *rest: Dim) -> Dim:
    """The largest of the dimensions; :class:`InconclusiveDimensionOperation` if
    which one is largest depends on the sizes."""
    if len(rest) == 1 and type(first) is int and type(rest[0]) is int:
        return max(first, rest[0])
    if not rest:
        return simplify(first)
    return _extreme((first, *rest), True, "max_dim")


def min_dim(first: Dim, *rest: Dim) -> Dim:
    """The smallest of the dimensions; :class:`InconclusiveDimensionOperation` if
    which one is smallest depends on the sizes."""
    if len(rest) == 1 and type(first) is int and type(rest[0]) is int:
        return min(first, rest[0])
    if not rest:
        return simplify(first)
    return _extreme((first, *rest), False, "min_dim")


def evaluate_dim(d: Dim, env: Mapping[str, Any]) -> Any:
    """``d`` with every size replaced by its value in ``env`` (see :meth:`SymbolicDim.evaluate`)."""
    if isinstance(d, SymbolicDim):
        return d.evaluate(env)
    return d


def evaluate_shape(shape: Iterable[Dim], env: Mapping[str, Any]) -> tuple[Any, ...]:
    """Every dimension of ``shape`` evaluated in ``env``."""
    return tuple(d.evaluate(env) if isinstance(d, SymbolicDim) else d for d in shape)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\*\*|//|[-+*^%()]))")


def parse_dim(text: str) -> Dim:
    """Parse a dimension written like its ``str`` form: ``"2*n + 1"``, ``"m*n - 1"``,
    ``"n^2"`` (``**`` works too), with parentheses, ``//`` and ``%``.

    Raises ``ValueError`` for malformed text and
    :class:`InconclusiveDimensionOperation` for an inexact division."""
    if not isinstance(text, str):
        raise TypeError(f"parse_dim expects a string, got {text!r}")
    tokens: list[tuple[str, str]] = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        match = _TOKEN.match(stripped, pos)
        if match is None:
            raise ValueError(f"cannot parse the dimension {text!r}: unexpected {stripped[pos:].lstrip()!r}")
        number, name, op = match.groups()
        if number is not None:
            tokens.append(("int", number))
        elif name is not None:
            tokens.append(("name", name))
        else:
            tokens.append(("op", op))
        pos = match.end()
    return _Parser(text, tokens).parse()


class _Parser:
    def __init__(self, text: str, tokens: list[tuple[str, str]]) -> None:
        self.text = text
        self.tokens = tokens
        self.pos = 0

    def fail(self, why: str) -> NoReturn:
        raise ValueError(f"cannot parse the dimension {self.text!r}: {why}")

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        if self.pos >= len(self.tokens):
            self.fail("unexpected end of text")
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def parse(self) -> Dim:
        if not self.tokens:
            self.fail("it is empty")
        value = self.sum()
        if self.pos != len(self.tokens):
            self.fail(f"unexpected {self.tokens[self.pos][1]!r}")
        return value

    def sum(self) -> Dim:
        value = self.product()
        while self.peek() in ("+", "-"):
            op = self.take()[1]
            rhs = self.product()
            value = value + rhs if op == "+" else value - rhs
        return value

    def product(self) -> Dim:
        ops: dict[str, Callable[[Dim, Dim], Dim]] = {
            "*": operator.mul,
            "//": operator.floordiv,
            "%": operator.mod,
        }
        value = self.unary()
        while (op := self.peek()) in ops:
            self.take()
            value = ops[op](value, self.unary())
        return value

    def unary(self) -> Dim:
        if self.peek() == "-":
            self.take()
            return -self.unary()
        if self.peek() == "+":
            self.take()
            return self.unary()
        return self.power()

    def power(self) -> Dim:
        base = self.atom()
        if self.peek() in ("^", "**"):
            self.take()
            exponent = self.unary()
            if type(exponent) is not int or exponent < 0:
                self.fail(f"the exponent {exponent} is not a non-negative integer")
            return base**exponent
        return base

    def atom(self) -> Dim:
        kind, value = self.take()
        if kind == "int":
            return int(value)
        if kind == "name":
            _check_name(value)
            return SymbolicDim.var(value)
        if value == "(":
            inner = self.sum()
            if self.take()[1] != ")":
                self.fail("missing ')'")
            return inner
        self.fail(f"unexpected {value!r}")
