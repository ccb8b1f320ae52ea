"""``einsum``: Einstein summation lowered to ``lax.dot_general``.

The subscripts are parsed (``'ij,jk->ik'``, implicit outputs, ``...`` for
broadcast dimensions, repeated labels for diagonals), then:

1. in each operand, a repeated label takes the diagonal, and a label that no
   other operand and not the output uses is summed out;
2. operands are contracted two at a time, left to right: labels shared by the
   pair and needed later (by the output or a later operand) become batch
   dimensions of ``dot_general``, the other shared labels are contracted;
3. labels not in the output are summed and the result is transposed to the
   output order.

Size-1 dimensions broadcast against their label's size, as in NumPy.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.dims import Dim, definitely_equal
from plait_core.explicit_sharding import with_out_sharding
from plait_core.lax import _lenient
from plait_core.numpy._util import Array, ArrayLike, as_array, convert, dtype_of, promote_dtypes
from plait_core.numpy.dots import dot_general_promoted
from plait_core.numpy.shape import diagonal

Label = str | int
"""A subscript letter, or the position (0-based, from the left of the broadcast
dimensions) of a dimension covered by ``...``."""


def _parse_term(term: str, ndim: int, n_broadcast: int, name: str) -> list[Label]:
    if term.count("...") > 1:
        raise ValueError(f"{name}: a term may hold a single ellipsis, got {term!r}")
    if "..." in term:
        head, tail = term.split("...")
        _check_letters(head + tail, term, name)
        k = ndim - len(head) - len(tail)
        if k < 0:
            raise ValueError(f"{name}: the term {term!r} has more labels than its operand has dimensions ({ndim})")
        return [*head, *range(n_broadcast - k, n_broadcast), *tail]
    _check_letters(term, term, name)
    if len(term) != ndim:
        raise ValueError(f"{name}: the term {term!r} has {len(term)} labels but its operand has "
                         f"{ndim} dimensions")
    return list(term)


def _check_letters(letters: str, term: str, name: str) -> None:
    for ch in letters:
        if not ch.isalpha() or not ch.isascii():
            raise ValueError(f"{name}: invalid subscript {ch!r} in {term!r}; subscripts are letters and '...'")


def parse_subscripts(subscripts: str, ndims: Sequence[int]) -> tuple[list[list[Label]], list[Label]]:
    """The labels of each operand's dimensions and of the output's."""
    name = "einsum"
    spec = subscripts.replace(" ", "")
    if "->" in spec:
        lhs, out = spec.split("->", 1)
        if "->" in out:
            raise ValueError(f"{name}: subscripts {subscripts!r} hold more than one '->'")
    else:
        lhs, out = spec, None
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"{name}: {len(terms)} terms in the subscripts {subscripts!r} but "
                         f"{len(ndims)} operands")
    n_broadcast = 0
    for term, nd in zip(terms, ndims):
        if "..." in term:
            n_broadcast = builtins.max(n_broadcast, nd - (len(term) - 3))
    inputs = [_parse_term(t, nd, n_broadcast, name) for t, nd in zip(terms, ndims)]
    if out is None:
        counts: dict[Label, int] = {}
        for labels in inputs:
            for lab in labels:
                counts[lab] = counts.get(lab, 0) + 1
        letters = sorted(lab for lab, c in counts.items() if isinstance(lab, str) and c == 1)
        return inputs, [*range(n_broadcast), *letters]
    # An output without '...' sums the broadcast dimensions out, as JAX (NumPy refuses it).
    if "..." in out:
        head, tail = out.split("...", 1)
        _check_letters(head + tail, out, name)
        output: list[Label] = [*head, *range(n_broadcast), *tail]
    else:
        _check_letters(out, out, name)
        output = list(out)
    seen: set[Label] = set()
    present = {lab for labels in inputs for lab in labels}
    for lab in output:
        if lab in seen:
            raise ValueError(f"{name}: the output label {lab!r} appears more than once in {subscripts!r}")
        if lab not in present:
            raise ValueError(f"{name}: the output label {lab!r} does not appear in any input of {subscripts!r}")
        seen.add(lab)
    return inputs, output


def _interleaved(args: Sequence[Any]) -> tuple[str, list[Any]]:
    """``einsum(op0, sublist0, op1, sublist1, ..., [sublistout])`` as a string spec."""
    ops = list(args[0::2])
    subs = list(args[1::2])
    out = None
    if len(ops) > len(subs):
        out = ops.pop()
    names: dict[Any, str] = {}
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

    def term(sub: Sequence[Any]) -> str:
        """One sublist as letters."""
        parts = []
        for s in sub:
            if s is Ellipsis:
                parts.append("...")
                continue
            if s not in names:
                if len(names) >= len(alphabet):
                    raise ValueError("einsum: too many distinct subscripts")
                names[s] = alphabet[len(names)]
            parts.append(names[s])
        return "".join(parts)

    spec = ",".join(term(s) for s in subs)
    if out is not None:
        spec += "->" + term(out)
    return spec, ops


class _Term:
    """An intermediate: an array and the label of each of its dimensions."""

    __slots__ = ("labels", "value")

    def __init__(self, value: Array, labels: list[Label]) -> None:
        self.value = value
        self.labels = labels

    @property
    def sizes(self) -> dict[Label, Dim]:
        """The size of each label."""
        shape = get_aval(self.value).shape
        return dict(zip(self.labels, shape))

    def sum_out(self, drop: Sequence[Label]) -> _Term:
        """Sum over the dimensions labelled by ``drop``."""
        axes = tuple(i for i, lab in enumerate(self.labels) if lab in drop)
        if not axes:
            return self
        return _Term(lax.reduce_sum(self.value, axes), [lab for lab in self.labels if lab not in drop])

    def broadcast_label(self, label: Label, size: Dim) -> _Term:
        """Broadcast the (size-1) dimension of ``label`` to ``size``."""
        shape = list(get_aval(self.value).shape)
        i = self.labels.index(label)
        if definitely_equal(shape[i], size):
            return self
        shape[i] = size
        return _Term(lax.broadcast_in_dim(self.value, tuple(shape), tuple(range(len(shape)))), self.labels)


def _take_diagonals(t: _Term) -> _Term:
    while True:
        dup = next((lab for lab in t.labels if t.labels.count(lab) > 1), None)
        if dup is None:
            return t
        i = t.labels.index(dup)
        j = t.labels.index(dup, i + 1)
        shape = get_aval(t.value).shape
        if not definitely_equal(shape[i], shape[j]):
            raise ValueError(f"einsum: the repeated label {dup!r} has different sizes {shape[i]} and {shape[j]}")
        rest = [lab for k, lab in enumerate(t.labels) if k not in (i, j)]
        t = _Term(diagonal(t.value, 0, i, j), [*rest, dup])


def _label_sizes(terms: Sequence[_Term]) -> dict[Label, Dim]:
    sizes: dict[Label, Dim] = {}
    for k, t in enumerate(terms):
        for lab, d in t.sizes.items():
            prev = sizes.get(lab)
            if prev is None or definitely_equal(prev, 1):
                sizes[lab] = d
            elif not (definitely_equal(d, 1) or definitely_equal(d, prev)):
                shown = "..." if isinstance(lab, int) else repr(lab)
                raise ValueError(f"einsum: the size of label {shown} in operand {k} ({d}) does not match "
                                 f"the other operands ({prev})")
    return sizes


def _contract(a: _Term, b: _Term, keep: set[Label], precision: Any, preferred: Any,
              dot_general: Callable[..., Any] | None = None) -> _Term:
    a = a.sum_out([lab for lab in a.labels if lab not in keep and lab not in b.labels])
    b = b.sum_out([lab for lab in b.labels if lab not in keep and lab not in a.labels])
    shared = [lab for lab in a.labels if lab in b.labels]
    for lab in shared:
        size_a, size_b = a.sizes[lab], b.sizes[lab]
        if definitely_equal(size_a, 1) and not definitely_equal(size_b, 1):
            a = a.broadcast_label(lab, size_b)
        elif definitely_equal(size_b, 1) and not definitely_equal(size_a, 1):
            b = b.broadcast_label(lab, size_a)
    batch = [lab for lab in shared if lab in keep]
    contracted = [lab for lab in shared if lab not in keep]
    dims = (
        (tuple(a.labels.index(lab) for lab in contracted), tuple(b.labels.index(lab) for lab in contracted)),
        (tuple(a.labels.index(lab) for lab in batch), tuple(b.labels.index(lab) for lab in batch)),
    )
    if dot_general is None:
        out = dot_general_promoted("einsum", a.value, b.value, dims, precision, preferred)
    else:
        out = dot_general(a.value, b.value, dims, precision=precision, preferred_element_type=preferred)
    labels = batch + [lab for lab in a.labels if lab not in shared] + [lab for lab in b.labels if lab not in shared]
    return _Term(out, labels)


def einsum(subscripts: Any, /, *operands: Any, out: None = None, optimize: Any = "optimal",
           precision: Any = None, preferred_element_type: Any = None,
           _dot_general: Callable[..., Any] | None = None, out_sharding: Any = None) -> Array:
    """Einstein summation over ``operands`` as described by ``subscripts``
    (``"ij,jk->ik"``; ``...`` broadcasts; without ``->`` the output holds the
    labels used once, in alphabetical order).  The interleaved form
    ``einsum(a, [0, 1], b, [1, 2], [0, 2])`` is accepted too.  Operands are
    contracted left to right (``optimize`` is accepted and ignored).  ``_dot_general``
    (JAX's private parameter, which flax passes) replaces ``lax.dot_general`` for
    each pairwise contraction, called as ``(lhs, rhs, dimension_numbers, precision=,
    preferred_element_type=)`` on operands already promoted to one dtype.
    ``out_sharding`` (explicit sharding): the result's layout and type, as for ``dot``."""
    del optimize
    if out_sharding is not None:
        return with_out_sharding(
            lambda: einsum(subscripts, *operands, out=out, precision=precision,
                           preferred_element_type=preferred_element_type, _dot_general=_dot_general),
            out_sharding,
        )
    if _dot_general is lax.dot_general:
        _dot_general = None
    if out is not None:
        raise TypeError("einsum: the out argument is not supported (plait arrays are immutable)")
    if not isinstance(subscripts, str):
        subscripts, ops = _interleaved((subscripts, *operands))
        operands = tuple(ops)
    if not operands:
        raise ValueError("einsum: at least one operand is required")
    arrays = [as_array(op, "einsum", i) for i, op in enumerate(operands)]
    arrays = promote_dtypes("einsum", *arrays)
    is_bool = dtypes.is_bool(dtype_of(arrays[0]))
    if is_bool:
        arrays = [convert(a, dtypes.int32) for a in arrays]
    inputs, output = parse_subscripts(subscripts, [get_aval(a).ndim for a in arrays])
    terms = [_take_diagonals(_Term(a, labels)) for a, labels in zip(arrays, inputs)]
    sizes = _label_sizes(terms)
    for k, t in enumerate(terms):
        elsewhere = set(output).union(*(set(o.labels) for j, o in enumerate(terms) if j != k))
        terms[k] = t.sum_out([lab for lab in t.labels if lab not in elsewhere])
    acc = terms[0]
    for k in range(1, len(terms)):
        keep = set(output).union(*(set(t.labels) for t in terms[k + 1:]))
        acc = _contract(acc, terms[k], keep, precision, preferred_element_type, _dot_general)
    acc = acc.sum_out([lab for lab in acc.labels if lab not in output])
    for lab in output:
        acc = acc.broadcast_label(lab, sizes[lab])
    result = lax.transpose(acc.value, tuple(acc.labels.index(lab) for lab in output))
    if preferred_element_type is not None and len(terms) == 1:
        result = convert(result, dtypes.canonicalize_dtype(preferred_element_type))
    if is_bool and get_aval(result).dtype == dtypes.int32:
        return _lenient.ne(result, convert(0, dtypes.int32))
    return result


def einsum_path(subscripts: str, /, *operands: ArrayLike, optimize: Any = "greedy") -> tuple[list[Any], str]:
    """The contraction order :func:`einsum` uses: left to right, one pair at a time."""
    del optimize
    n = len(operands)
    path: list[Any] = ["einsum_path"] + [(0, 1)] * builtins.max(n - 1, 0)
    return path, f"left-to-right pairwise contraction of {n} operand(s) for {subscripts!r}"
