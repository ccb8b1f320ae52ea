"""vmap of the matrix factorisations against a Python loop (any operand
axis, nested vmaps, one operand unbatched), and on piles: ragged stack axes
work, a ragged matrix axis is refused with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from batching_checks import Gen, arr, check_against_loop

from plait_batching import Pile, pile_axis, vmap
from plait_core import lax

L = lax.linalg


def spd(n: int) -> Gen:
    def gen(rng: np.random.Generator) -> np.ndarray:
        a = rng.standard_normal((n, n))
        return (a @ a.T + n * np.eye(n)).astype(np.float32)

    return gen


def tri(n: int) -> Gen:
    def gen(rng: np.random.Generator) -> np.ndarray:
        return (np.tril(rng.standard_normal((n, n))) + 3 * np.eye(n)).astype(np.float32)

    return gen


ONE_ARG: list[tuple[str, Callable[..., Any], Gen]] = [
    ("cholesky", L.cholesky, spd(3)),
    ("lu", L.lu, arr((4, 3))),
    ("qr", lambda a: L.qr(a, full_matrices=False), arr((4, 3))),
    ("eigh", L.eigh, spd(3)),
    ("svd", lambda a: L.svd(a, full_matrices=False), arr((3, 4))),
    ("eig", lambda a: L.eig(a, compute_left_eigenvectors=False), arr((3, 3))),
]


@pytest.mark.parametrize("name,f,gen", ONE_ARG, ids=[c[0] for c in ONE_ARG])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_matches_a_loop(name: str, f: Callable[..., Any], gen: Gen, axis: int) -> None:
    check_against_loop(f, [gen], [[axis]], staged=axis == 0)


def test_nested_vmap_of_a_stack() -> None:
    check_against_loop(lambda a: L.svd(a, compute_uv=False), [arr((2, 4, 3))], [[1], [0]])


@pytest.mark.parametrize("axes", [(0, 0), (None, 2), (1, None)], ids=str)
def test_triangular_solve_batched_in_either_operand(axes: tuple[int | None, int | None]) -> None:
    def f(a: Any, b: Any) -> Any:
        return L.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True)

    check_against_loop(f, [tri(3), arr((3, 2))], [list(axes)])


def test_piles_with_a_ragged_stack_axis() -> None:
    rng = np.random.default_rng(3)
    stacks = [np.stack([spd(3)(rng) for _ in range(k)]) for k in (1, 3, 2)]
    out = vmap(L.cholesky, in_axes=pile_axis, out_axes=pile_axis)(Pile.from_arrays(stacks))
    for got, want in zip(out.unpack(), stacks):
        np.testing.assert_allclose(got, np.linalg.cholesky(want), rtol=1e-5, atol=1e-6)


def test_piles_with_a_ragged_matrix_axis_are_refused() -> None:
    p = Pile.from_arrays([np.ones((2, 3), np.float32), np.ones((4, 3), np.float32)])
    with pytest.raises(ValueError, match=r"vmap over piles: qr cannot factorise matrices with a ragged row or column "
                                         r"axis: the padding would enter the factorisation of every matrix"):  # fmt: skip
        vmap(lambda x: L.qr(x)[1], in_axes=pile_axis, out_axes=pile_axis)(p)
