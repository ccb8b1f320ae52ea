"""Matrix factorisations under ``mask``: a masked leading (stacked) axis is
a batch of factorisations; a masked matrix axis is refused with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from plait_core import lax
from plait_masking import mask

L = lax.linalg
rng = np.random.default_rng(5)
_a = rng.standard_normal((6, 3, 3))
SPD = (_a @ np.swapaxes(_a, -1, -2) + 3 * np.eye(3)).astype(np.float32)


@pytest.mark.parametrize("name,f,want", [
    ("cholesky", L.cholesky, np.linalg.cholesky),
    ("eigvalsh", lambda x: L.eigh(x)[1], np.linalg.eigvalsh),
    ("svdvals", lambda x: L.svd(x, compute_uv=False), lambda x: np.linalg.svd(x, compute_uv=False)),
    ("solve", lambda x: L.triangular_solve(L.cholesky(x), x, left_side=True, lower=True),
     lambda x: np.linalg.solve(np.linalg.cholesky(x), x)),
])  # fmt: skip
def test_masked_stack_axis(name: str, f: Callable[..., Any], want: Callable[..., Any]) -> None:
    out_spec = "(n, 3)" if name in ("eigvalsh", "svdvals") else "(n, 3, 3)"
    masked = mask(f, ["(n, 3, 3)"], out_spec)
    for n in (1, 4):
        got = np.asarray(masked([SPD], {"n": n}))[:n]
        np.testing.assert_allclose(got, want(SPD[:n].astype(np.float64)), rtol=2e-4, atol=2e-4)


@pytest.mark.parametrize("spec,f,name", [
    ("(n, n)", L.cholesky, "cholesky"),
    ("(n, 3)", lambda x: L.qr(x)[1], "qr"),
    ("(n, n)", lambda x: L.eigh(x)[1], "eigh"),
])  # fmt: skip
def test_masked_matrix_axis_is_refused(spec: str, f: Callable[..., Any], name: str) -> None:
    with pytest.raises(NotImplementedError, match=rf"mask: {name} cannot factorise matrices with a symbolic row or "
                                                   r"column axis: the padding would enter .*\(operands f32\[.*\]\)"):  # fmt: skip
        mask(f, [spec], "_")([np.ones((3, 3), np.float32)], {"n": 2})


def test_unknown_factor_size_says_why() -> None:
    # The shape rule of a wide/tall factorisation needs min(m, n), unknown for symbolic sizes.
    with pytest.raises(TypeError, match=r"svd: the size min\(3, n\) of a factor is not known for a matrix of "
                                        r"symbolic size \(3, n\)"):  # fmt: skip
        mask(lambda x: L.svd(x, compute_uv=False), ["(3, n)"], "_")([np.ones((3, 3), np.float32)], {"n": 2})
