"""Every error of vmap over piles: its type and what its message says."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import plait_core as pc
import plait_core.numpy as pnp
from plait_batching import Pile, pile_axis, ragged_dim, ragged_rules, vmap
from plait_core import ConcretizationTypeError, all_primitives, lax
from plait_core.dims import InconclusiveDimensionOperation

P = pile_axis
f32 = np.float32


def pile() -> Pile:
    return Pile.from_arrays([np.arange(6, dtype=f32).reshape(3, 2), np.ones((5, 2), f32)])


def other() -> Pile:
    return Pile.from_arrays([np.ones((4, 2), f32), np.ones((5, 2), f32)])


def on_pile(fun: Callable[..., Any], out_axes: Any = P) -> Any:
    return vmap(fun, in_axes=P, out_axes=out_axes)(pile())


# ---------------------------------------------------------------------------
# in_axes / out_axes


def test_pile_mapped_without_pile_axis() -> None:
    with pytest.raises(TypeError, match=r"vmap: argument x is a Pile, which vmap maps with in_axes=pile_axis, but its in_axes entry is 0"):
        vmap(lambda x: x)(pile())


def test_pile_axis_for_an_array() -> None:
    with pytest.raises(TypeError, match="the in_axes entry pile_axis for argument x maps values of type Pile, but argument x is a value of type ndarray"):
        vmap(lambda x: x, in_axes=P)(np.ones((2, 3), f32))


@pytest.mark.parametrize("out_axes", [0, None])
def test_ragged_result_without_pile_axis(out_axes: Any) -> None:
    with pytest.raises(ValueError, match=rf"the output of the function's result is ragged \(element type f32\[_pile\d+,2\]; _pile\d+ with lengths \[3 5\]\), but out_axes is {out_axes} for it; return ragged results with out_axes=pile_axis"):
        on_pile(lambda x: x * 2, out_axes)


def test_pile_of_scalars() -> None:
    with pytest.raises(ValueError, match=r"is a scalar per element \(f32\[\]\), but out_axes=pile_axis makes a Pile, whose elements need at least one axis"):
        on_pile(lambda x: x.sum())


def test_pile_of_a_non_array() -> None:
    with pytest.raises(TypeError, match="is a value of type str, which is not an array; out_axes=pile_axis makes piles of arrays"):
        on_pile(lambda x: "s")


def test_two_ragged_axes_of_one_size_in_a_result_make_a_pile_of_matrices() -> None:
    out = on_pile(lambda x: x @ x.T)
    assert out.ragged_axis == (0, 1) and out.ragged_axes == (0, 1)
    want = [e @ e.T for e in pile().unpack()]
    assert [np.asarray(a).tolist() for a in out.unpack()] == [np.asarray(w).tolist() for w in want]
    # and back in: a pile of matrices is mapped with both axes ragged
    traces = vmap(lambda m: m.trace(), in_axes=P)(out)
    np.testing.assert_allclose(np.asarray(traces), [np.trace(np.asarray(w)) for w in want])


def test_inconsistent_number_of_elements() -> None:
    with pytest.raises(ValueError, match=r"inconsistent sizes.*\n  \* argument x of type Pile has size 2 along its mapped axis pile_axis\n  \* argument y of type f32\[3\] has size 3"):
        vmap(lambda x, y: x * y, in_axes=(P, 0))(pile(), np.ones(3, f32))
    with pytest.raises(ValueError, match=r"(?s)axis_size=3 was given.*argument x of type Pile has size 2"):
        vmap(lambda x: x, in_axes=P, out_axes=P, axis_size=3)(pile())


# ---------------------------------------------------------------------------
# Ragged sizes that do not match


def test_piles_of_different_lengths_do_not_combine() -> None:
    with pytest.raises(ValueError, match=r"vmap over piles: add combines values of different ragged sizes \(operands f32\[_pile\d+,2\], f32\[_pile\d+,2\]; _pile\d+ with lengths \[3 5\]; _pile\d+ with lengths \[4 5\]\)\. Piles combine only when their lengths are equal"):
        vmap(lambda x, y: lax.add(x, y), in_axes=P, out_axes=P)(pile(), other())
    # plait.numpy checks the broadcast first
    with pytest.raises(ValueError, match=r"add: shapes \(_pile\d+, 2\), \(_pile\d+, 2\) cannot be broadcast together"):
        vmap(lambda x, y: x + y, in_axes=P, out_axes=P)(pile(), other())


def test_traced_lengths_cannot_be_compared() -> None:
    with pytest.raises(ValueError, match=r"add combines values of different ragged sizes .*_pile\d+ with traced lengths; _pile\d+ with traced lengths\)\. .*under jit pass the same lengths value to both"):
        pc.make_jaxpr(vmap(lambda x, y: lax.add(x, y), in_axes=P, out_axes=P))(pile(), pile())


def test_two_ragged_sizes_in_one_value() -> None:
    """An (n, m) value is fine inside (see test_pile_cross.py), but a Pile's ragged axes share one length."""
    n, m = np.array([1, 2], np.int32), np.array([2, 3], np.int32)
    with pytest.raises(ValueError, match=r"the function's result has ragged axes \(0, 1\) of different sizes "
                                         r"\(_pile\d+, _pile\d+; element type f32\[_pile\d+,_pile\d+\]\), but the "
                                         r"ragged axes of a Pile share one length per element"):
        vmap(lambda n, m: pnp.ones((ragged_dim(n), ragged_dim(m))), out_axes=P)(n, m)
    rows = vmap(lambda n, m: pnp.ones((ragged_dim(n), ragged_dim(m))).sum(1), out_axes=P)(n, m)
    for i, r in enumerate(rows.unpack()):
        np.testing.assert_array_equal(np.asarray(r), np.full(n[i], m[i], np.float32))


def test_ragged_against_static_shapes() -> None:
    with pytest.raises(InconclusiveDimensionOperation, match=r"vmap over piles: add: cannot tell whether the operand shapes \(_pile\d+, 2\) and \(3, 2\) are equal.*_pile\d+ with lengths \[3 5\]"):
        on_pile(lambda x: lax.add(x, np.ones((3, 2), f32)))
    with pytest.raises(ValueError, match=r"vmap over piles: broadcast_in_dim: operand dimension 0 of size _pile\d+ .* it must be 1 or 3 \(element types f32\[_pile\d+,2\]; _pile\d+ with lengths \[3 5\]\)"):
        on_pile(lambda x: lax.broadcast_in_dim(x, (3, 2), (0, 1)))
    with pytest.raises(ValueError, match=r"vmap over piles: slice takes the entries \[0, 4\) of the ragged axis 0, which the elements of lengths \[3\] do not have"):
        on_pile(lambda x: x[:4])
    with pytest.raises(ValueError, match=r"squeeze: cannot squeeze dimension 0 of the operand f32\[_pile\d+,2\]: its size is _pile\d+, not 1"):
        on_pile(lambda x: lax.squeeze(x, (0,)))


def test_decreasing_ragged_size() -> None:
    with pytest.raises(ValueError, match=r"the ragged size -_pile\d+ \+ 10 is not padded by its largest length \(it decreases when a length grows\)"):
        on_pile(lambda x: pnp.zeros(10 - x.shape[0]))


# ---------------------------------------------------------------------------
# Sizes from batched integers


def test_traced_sizes_need_a_known_maximum() -> None:
    with pytest.raises(ConcretizationTypeError, match=r"ragged_dim: a size taken from a batched integer makes a ragged value, padded to the largest of the sizes, which must be known; but the sizes i32\[\] are traced"):
        pc.make_jaxpr(vmap(lambda n: pnp.ones(ragged_dim(n)), out_axes=P))(np.array([1, 2], np.int32))


def test_bad_sizes() -> None:
    with pytest.raises(ValueError, match=r"ragged_dim: sizes must be non-negative, got the batched sizes \[-1  2\]"):
        vmap(lambda n: pnp.ones(ragged_dim(n)), out_axes=P)(np.array([-1, 2], np.int32))
    with pytest.raises(TypeError, match=r"ragged_dim: a size must be an integer scalar, got a batched value of type f32\[\]"):
        vmap(lambda n: pnp.ones(ragged_dim(n)), out_axes=P)(np.array([1.0, 2.0], f32))
    with pytest.raises(TypeError, match=r"ragged_dim: a size must be an integer scalar, got a batched value of type i32\[2\]"):
        vmap(lambda n: pnp.ones(ragged_dim(n)), out_axes=P)(np.array([[1, 2]], np.int32))


# ---------------------------------------------------------------------------
# Operations refused on ragged values


@pytest.mark.parametrize(
    ("fun", "message"),
    [
        (lambda x: lax.psum(x, "b"), r"psum reduces ragged values over the pile's own axis 'b', which would mix elements of different lengths"),
        (lambda x: lax.conv_general_dilated(x.T[None], np.ones((2, 2, 1), f32), (2,), "VALID")[0].T,
         r"conv_general_dilated has stride 2 along the ragged spatial dimension 2 of its lhs: the output length floor\(\(_pile\d+ - 1\) / 2\) \+ 1 is not a polynomial in the length"),
    ],
    ids=["psum", "conv-stride"],
)
def test_refused_layouts(fun: Callable[..., Any], message: str) -> None:
    with pytest.raises(ValueError, match=r"vmap over piles: .*" + message + r".*_pile\d+ with lengths \[3 5\]|" + message):
        vmap(fun, in_axes=P, out_axes=P, axis_name="b")(pile())


def test_strided_slice_of_a_ragged_axis_needs_a_divisible_size() -> None:
    with pytest.raises(InconclusiveDimensionOperation, match=r"slice: cannot divide _pile\d+ \+ 1 by 2"):
        on_pile(lambda x: lax.slice(x, (0, 0), (x.shape[0], 2), (2, 1)))


# ---------------------------------------------------------------------------
# Coverage


def test_every_primitive_has_a_ragged_rule_or_a_reason() -> None:
    missing = sorted(p.name for p in ragged_rules.missing())
    assert missing == [], f"plait_batching has no ragged rule (nor a reason) for: {', '.join(missing)}"
    for p in all_primitives():
        if p not in ragged_rules:
            reason = ragged_rules.unsupported_reason(p)
            assert reason is not None and len(reason) > 20, p.name
