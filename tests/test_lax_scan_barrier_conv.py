"""lax.associative_scan, lax.optimization_barrier, lax.map(batch_size=) and
lax.conv_transpose under jit, grad and vmap; precision= on the products."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait
from plait import lax

pnp = plait.numpy
F32 = np.float32
R = np.random.default_rng(0)


def test_associative_scan_under_transformations() -> None:
    x = R.standard_normal((3, 6)).astype(F32)
    scan = lambda v: lax.associative_scan(pnp.multiply, v, axis=1, reverse=True)  # noqa: E731
    want = np.flip(np.cumprod(np.flip(x, 1), axis=1), 1)
    np.testing.assert_allclose(np.asarray(plait.jit(scan)(x)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(plait.vmap(lambda r: scan(r[None])[0])(x)), want, rtol=1e-5)
    g = plait.grad(lambda v: scan(v).sum())(x)
    gc = plait.grad(lambda v: lax.cumprod(v, axis=1, reverse=True).sum())(x)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gc), rtol=1e-4, atol=1e-5)


def test_optimization_barrier_is_the_identity_everywhere() -> None:
    x = R.standard_normal(4).astype(F32)

    def f(v: Any) -> Any:
        a, b = lax.optimization_barrier((pnp.sin(v), v * 2))
        return (a * b).sum()

    g = plait.jit(plait.grad(f))(x)
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(x) * x + 2 * np.sin(x), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(plait.vmap(f)(x[:, None])), 2 * np.sin(x) * x, rtol=1e-5)
    assert "stablehlo.optimization_barrier" in plait.jit(f).lower(x).as_text()


def test_map_batch_size_under_jit_grad_and_vmap() -> None:
    xs = R.standard_normal((7, 2)).astype(F32)
    f = lambda x: (x**2).sum()  # noqa: E731
    np.testing.assert_allclose(np.asarray(plait.jit(lambda v: lax.map(f, v, batch_size=3))(xs)), (xs**2).sum(1), rtol=1e-6)
    g = plait.grad(lambda v: lax.map(f, v, batch_size=3).sum())(xs)
    np.testing.assert_allclose(np.asarray(g), 2 * xs, rtol=1e-6)
    out = plait.vmap(lambda v: lax.map(f, v, batch_size=2))(np.stack([xs, 2 * xs]))
    np.testing.assert_allclose(np.asarray(out), np.stack([(xs**2).sum(1), (4 * xs**2).sum(1)]), rtol=1e-6)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_conv_transpose_with_kernel_transpose_is_the_gradient_of_conv(padding: str) -> None:
    x = R.standard_normal((1, 8, 8, 3)).astype(F32)
    k = R.standard_normal((3, 3, 3, 5)).astype(F32)  # HWIO
    dn = ("NHWC", "HWIO", "NHWC")
    conv = lambda v: lax.conv_general_dilated(v, k, (2, 2), padding, dimension_numbers=dn)  # noqa: E731
    conv_with = lambda kk: lax.conv_general_dilated(x, kk, (2, 2), padding, dimension_numbers=dn)  # noqa: E731
    y, vjp = plait.vjp(conv, x)
    ct = R.standard_normal(np.shape(y)).astype(F32)
    (want,) = vjp(ct)
    got = np.asarray(lax.conv_transpose(ct, k, (2, 2), padding, dimension_numbers=dn, transpose_kernel=True))
    # 'VALID' windows never reach the last row and column: the transpose stops before them.
    n = got.shape[1]
    np.testing.assert_allclose(got, np.asarray(want)[:, :n, :n], rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(np.asarray(want)[:, n:], 0)
    tk = lambda kk: lax.conv_transpose(ct, kk, (2, 2), padding, dimension_numbers=dn, transpose_kernel=True)  # noqa: E731
    grad_k = plait.grad(lambda kk: (tk(kk) * x[:, :n, :n]).sum())(k)
    np.testing.assert_allclose(np.asarray(grad_k), np.asarray(plait.grad(lambda kk: (conv_with(kk) * ct).sum())(k)),
                               rtol=1e-4, atol=1e-3)  # fmt: skip


def test_precision_everywhere() -> None:
    a = R.standard_normal((3, 4)).astype(F32)
    b = R.standard_normal((4, 2)).astype(F32)
    want = a @ b
    hi = lax.Precision.HIGHEST
    for got in (
        pnp.matmul(a, b, precision=hi),
        pnp.dot(a, b, precision=(hi, lax.Precision.DEFAULT)),
        pnp.einsum("ij,jk->ik", a, b, precision=hi, preferred_element_type=F32),
        lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision="highest", preferred_element_type=np.float32),
        lax.dot(a, b, precision=lax.Precision("bfloat16_3x")),
        pnp.tensordot(a, b, 1, precision=hi),
    ):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="unknown precision 'sloppy'"):
        lax.dot(a, b, precision="sloppy")


CUMULATIVE = {
    "cumsum": np.cumsum,
    "cumprod": np.cumprod,
    "cummax": np.maximum.accumulate,
    "cummin": np.minimum.accumulate,
    "cumlogsumexp": np.logaddexp.accumulate,
}


@pytest.mark.parametrize("name", sorted(CUMULATIVE))
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_reductions_under_every_transformation(name: str, reverse: bool) -> None:
    x = R.standard_normal((3, 5))
    ref = CUMULATIVE[name]
    want = np.flip(ref(np.flip(x, 1), axis=1), 1) if reverse else ref(x, axis=1)
    with plait.enable_x64():
        f = lambda v: getattr(lax, name)(v, axis=1, reverse=reverse)  # noqa: E731
        np.testing.assert_allclose(np.asarray(plait.jit(f)(x)), want, rtol=1e-10)
        np.testing.assert_allclose(np.asarray(plait.vmap(f, in_axes=2, out_axes=2)(x[:, :, None])[..., 0]), want,
                                   rtol=1e-10)  # fmt: skip
        d = R.standard_normal(x.shape)
        loss = lambda v: (f(v) * np.arange(15.0).reshape(3, 5)).sum()  # noqa: E731
        fd = (float(loss(x + 1e-6 * d)) - float(loss(x - 1e-6 * d))) / 2e-6
        np.testing.assert_allclose(float((np.asarray(plait.grad(loss)(x)) * d).sum()), fd, rtol=1e-5)
        masked = plait.mask(lambda v: getattr(lax, name)(v, axis=0, reverse=reverse), ["n"], "n")([x[0]], dict(n=3))
        row = np.flip(ref(np.flip(x[0, :3]))) if reverse else ref(x[0, :3])
        np.testing.assert_allclose(np.asarray(masked)[:3], row, rtol=1e-10)
