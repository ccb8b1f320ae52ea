"""``scipy.special.wofz``, ``fresnel``, ``sph_harm_y`` and ``hyp2f1`` against
independent float64 references (Gauss-Legendre quadrature of the defining
integrals, orthonormality on the sphere, the Gauss series summed in long
double), closed forms and identities, in float32 and float64, with JAX
0.10.2's values at the edges."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import plait_core
import plait_core.numpy as pnp
from plait_core.scipy import special
from plait_core.scipy.special_extras import dawsn, erfcx

NODES, WEIGHTS = np.polynomial.legendre.leggauss(40)


def _integral(f: Any, x: float, panels: int = 200) -> float:
    """``integral_0^x f`` by composite 40-point Gauss-Legendre quadrature (float64)."""
    edges = np.linspace(0.0, x, panels + 1)
    mid, half = (edges[1:] + edges[:-1]) / 2, (edges[1:] - edges[:-1]) / 2
    t = mid[:, None] + half[:, None] * NODES[None, :]
    return float(np.sum(half[:, None] * WEIGHTS[None, :] * f(t)))


# ---------------------------------------------------------------------------
# wofz

Z = np.array([0.0, 1e-4 + 1e-4j, 0.3 + 0.2j, 1 + 1j, -1 + 1j, 2.5 + 0.01j, -4 + 3j, 6 + 0.1j, 0.5 + 9j, 30 + 30j,
              -700 + 400j, 5e3 + 1e3j, 1e20 + 1e20j])


def _wofz_by_quadrature(z: complex) -> complex:
    """``w(z) = (i / pi) integral exp(-t**2) / (z - t) dt`` for ``Im z > 0`` (Gauss-Hermite would
    need many nodes near the axis; substitute ``t = tan(u)`` and integrate over ``(-pi/2, pi/2)``)."""
    u = np.linspace(-np.pi / 2, np.pi / 2, 40001)[1:-1]
    t = np.tan(u)
    f = np.exp(-t * t) / (z - t) / np.cos(u) ** 2
    du = u[1] - u[0]
    return complex(1j / np.pi * np.sum(f) * du)


@pytest.mark.parametrize("z", [0.3 + 0.2j, 1 + 1j, -1 + 1j, -4 + 3j, 0.5 + 9j])
def test_wofz_against_its_integral(z: complex) -> None:
    with plait_core.enable_x64():
        got = complex(special.wofz(np.complex128(z)))
    assert abs(got - _wofz_by_quadrature(z)) <= 1e-9 * abs(got)


def test_wofz_identities_float64() -> None:
    y = np.array([0.0, 0.1, 1.0, 5.0, 30.0, 1e4])
    x = np.array([-7.0, -1.5, 0.0, 0.3, 2.0, 9.0, 26.0])
    with plait_core.enable_x64():
        on_imag = np.asarray(special.wofz(1j * y))
        np.testing.assert_allclose(on_imag.real, np.asarray(erfcx(y)), rtol=1e-9)  # erfcx's own accuracy
        assert np.all(on_imag.imag == 0)
        on_real = np.asarray(special.wofz(x))
        np.testing.assert_allclose(on_real.real, np.exp(-x * x), rtol=1e-15)
        np.testing.assert_allclose(on_real.imag, 2 / math.sqrt(math.pi) * np.asarray(dawsn(x)), rtol=2e-8, atol=1e-300)
        w, wneg = np.asarray(special.wofz(Z)), np.asarray(special.wofz(-Z))
        small = np.abs(Z) < 20
        # (the sum cancels where exp(-z**2) is small: compared to |w| then)
        np.testing.assert_allclose((w + wneg)[small], 2 * np.exp(-Z[small] ** 2), rtol=1e-13, atol=1e-16)
        np.testing.assert_allclose(np.asarray(special.wofz(np.conj(Z))), np.conj(wneg), rtol=1e-13)
        # large |z|: w ~ i / (sqrt(pi) z) (1 + 1 / (2 z**2))
        big = Z[-3:]
        np.testing.assert_allclose(w[-3:], 1j / (math.sqrt(math.pi) * big) * (1 + 0.5 / big**2), rtol=1e-10)
        assert special.wofz(1.0).dtype == np.complex128


def test_wofz_float32_edges_and_dtypes() -> None:
    w = np.asarray(special.wofz(Z.astype(np.complex64)))
    with plait_core.enable_x64():
        w64 = np.asarray(special.wofz(Z.astype(np.complex64).astype(np.complex128)))
    np.testing.assert_allclose(w, w64, rtol=2e-6)
    assert special.wofz(np.float32(1)).dtype == np.complex64
    assert special.wofz(np.float16(1)).dtype == np.complex64
    assert special.wofz(2).dtype == np.complex64
    edge = np.asarray(special.wofz(np.array([np.inf, -np.inf, np.nan, complex(0, np.inf)], np.complex64)))
    assert np.all(np.isnan(edge.real)) and np.all(np.isnan(edge.imag))  # JAX: nan+nanj
    assert complex(special.wofz(np.float32(0))) == 1
    # JAX 0.10.2 values (float32)
    np.testing.assert_allclose(np.asarray(special.wofz(np.array([1 + 1j, -3j, 0.1 - 5j], np.complex64))),
                               [0.30474424 + 0.20821896j, 16205.989, 7.7034594e10 + 1.1997427e11j], rtol=2e-6)


# ---------------------------------------------------------------------------
# fresnel

FX = [1e-6, 0.01, 0.3, 0.99, 1.0, 1.01, 1.7, 2.5, 4.2, 7.9, 10.0]


@pytest.mark.parametrize("x", FX)
def test_fresnel_against_quadrature(x: float) -> None:
    s_want = _integral(lambda t: np.sin(np.pi * t * t / 2), x)
    c_want = _integral(lambda t: np.cos(np.pi * t * t / 2), x)
    with plait_core.enable_x64():
        s, c = special.fresnel(np.float64(x))
    assert float(s) == pytest.approx(s_want, rel=1e-13, abs=1e-300)
    assert float(c) == pytest.approx(c_want, rel=1e-13)
    s32, c32 = special.fresnel(np.float32(x))
    assert s32.dtype == np.float32 and c32.dtype == np.float32
    xs = float(np.float32(x))  # the float32 input
    assert float(s32) == pytest.approx(_integral(lambda t: np.sin(np.pi * t * t / 2), xs), rel=2e-6, abs=1e-30)
    assert float(c32) == pytest.approx(_integral(lambda t: np.cos(np.pi * t * t / 2), xs), rel=2e-6)


def test_fresnel_large_arguments_odd_and_edges() -> None:
    x = np.array([50.0, 123.456, 1e3, 12345.678, 1e6])
    with plait_core.enable_x64():
        s, c = map(np.asarray, special.fresnel(x))
        # asymptotics: C = 1/2 + f sin(phi) - g cos(phi), S = 1/2 - f cos(phi) - g sin(phi),
        # f ~ 1/(pi x) (1 - 3/(pi x^2)^2), g ~ 1/(pi^2 x^3), phi = pi x^2 / 2 (x^2 mod 4 exactly)
        phi = np.pi / 2 * np.array([float(np.fmod(np.float64(v) ** 2, 4)) for v in x])
        f = 1 / (np.pi * x) * (1 - 3 / (np.pi * x * x) ** 2)
        g = 1 / (np.pi**2 * x**3)
        np.testing.assert_allclose(c, 0.5 + f * np.sin(phi) - g * np.cos(phi), rtol=1e-12)
        np.testing.assert_allclose(s, 0.5 - f * np.cos(phi) - g * np.sin(phi), rtol=1e-12)
        sn, cn = map(np.asarray, special.fresnel(-x))
        np.testing.assert_array_equal(sn, -s)
        np.testing.assert_array_equal(cn, -c)
    s, c = map(np.asarray, special.fresnel(np.array([0.0, np.inf, -np.inf, np.nan], np.float32)))
    np.testing.assert_array_equal(s[:3], [0, 0.5, -0.5])
    np.testing.assert_array_equal(c[:3], [0, 0.5, -0.5])
    assert np.isnan(s[3]) and np.isnan(c[3])
    # JAX 0.10.2's float32 values at 2.5 and 1000
    s, c = special.fresnel(np.array([2.5, 1000.0], np.float32))
    np.testing.assert_allclose(np.asarray(s), [0.61918175, 0.49968168], rtol=2e-6)
    np.testing.assert_allclose(np.asarray(c), [0.457413, 0.5], rtol=2e-6)
    assert [v.dtype for v in special.fresnel(np.float16(1))] == [np.float16, np.float16]
    assert special.fresnel(3)[0].dtype == np.float32
    with pytest.raises(NotImplementedError, match="complex"):
        special.fresnel(np.complex64(1))


# ---------------------------------------------------------------------------
# sph_harm_y


def _closed_forms(theta: float, phi: float) -> dict[tuple[int, int], complex]:
    c, s, e = math.cos(theta), math.sin(theta), np.exp(1j * phi)
    return {
        (0, 0): 0.5 / math.sqrt(math.pi) + 0j,
        (1, 0): math.sqrt(3 / (4 * math.pi)) * c + 0j,
        (1, 1): -math.sqrt(3 / (8 * math.pi)) * s * e,
        (2, 0): math.sqrt(5 / (16 * math.pi)) * (3 * c * c - 1) + 0j,
        (2, 1): -math.sqrt(15 / (8 * math.pi)) * s * c * e,
        (2, 2): math.sqrt(15 / (32 * math.pi)) * s * s * e**2,
        (3, 3): -math.sqrt(35 / (64 * math.pi)) * s**3 * e**3,
        (3, 1): -math.sqrt(21 / (64 * math.pi)) * s * (5 * c * c - 1) * e,
    }


@pytest.mark.parametrize("theta, phi", [(0.0, 0.0), (0.7, 1.3), (2.9, 5.5), (math.pi, 2.0)])
def test_sph_harm_y_closed_forms(theta: float, phi: float) -> None:
    forms = _closed_forms(theta, phi)
    n = np.array([k[0] for k in forms] * 2)
    m = np.array([k[1] for k in forms] + [-k[1] for k in forms])
    want = list(forms.values()) + [(-1) ** k[1] * np.conj(v) for k, v in forms.items()]
    with plait_core.enable_x64():
        got = np.asarray(special.sph_harm_y(n, m, np.float64(theta), np.float64(phi)))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    got32 = np.asarray(special.sph_harm_y(n, m, np.float32(theta), np.float32(phi)))
    assert got32.dtype == np.complex64
    np.testing.assert_allclose(got32, want, rtol=2e-6, atol=2e-6)


def test_sph_harm_y_orthonormal_up_to_degree_8() -> None:
    ct, wt = np.polynomial.legendre.leggauss(24)
    theta = np.arccos(ct)
    phi = np.arange(24) * 2 * np.pi / 24
    th, ph = np.meshgrid(theta, phi, indexing="ij")
    w = (wt[:, None] * np.full(24, 2 * np.pi / 24)[None, :]).ravel()
    pairs = [(n, m) for n in range(9) for m in range(-n, n + 1)]
    with plait_core.enable_x64():
        ys = np.stack([np.asarray(special.sph_harm_y(np.array([n]), np.array([m]), th.ravel(), ph.ravel(), n_max=8))
                       for n, m in pairs])
    gram = (ys * w[None, :]) @ np.conj(ys).T
    np.testing.assert_allclose(gram, np.eye(len(pairs)), atol=1e-12)


def test_sph_harm_y_arguments() -> None:
    # n above n_max is clipped to it (as JAX); |m| > n gives 0; n < 0 NaN
    clipped = special.sph_harm_y(np.array([10]), np.array([2]), 0.7, 1.3, n_max=6)
    np.testing.assert_allclose(np.asarray(clipped), np.asarray(special.sph_harm_y(np.array([6]), np.array([2]), 0.7, 1.3)))
    np.testing.assert_allclose(np.asarray(clipped), [-0.20420901 + 0.12285148j], rtol=2e-6)  # JAX 0.10.2
    out = np.asarray(special.sph_harm_y(np.array([1, 2, -1]), np.array([3, -3, 0]), 0.3, 0.3))
    assert out[0] == 0 and out[1] == 0 and np.isnan(out[2].real)
    grid = special.sph_harm_y(np.array([[1, 2], [2, 3]]), np.array([[0], [1]]), 0.3, pnp.zeros((2, 1, 1)))
    assert grid.shape == (2, 2, 2)
    assert special.sph_harm_y(2, 1, 0.3, 0.3).shape == ()
    with pytest.raises(NotImplementedError, match="diff_n"):
        special.sph_harm_y(np.array([2]), np.array([1]), 0.3, 0.3, diff_n=1)


# ---------------------------------------------------------------------------
# hyp2f1


def _series_long_double(a: float, b: float, c: float, x: float) -> float:
    la, lb, lc, lx = map(np.longdouble, (a, b, c, x))
    term = total = np.longdouble(1)
    for k in range(200000):
        term *= (la + k) * (lb + k) / ((lc + k) * (k + 1)) * lx
        total += term
        if abs(term) < 1e-21 * abs(total) and k > 10:
            break
    return float(total)


HYP_CASES = [(0.5, 0.7, 2.3, 0.3), (1.5, 2.7, 1.2, 0.9), (0.3, 1.7, 2.0, 0.95), (2.5, 1.5, 4.0, 0.8),
             (10.0, 20.0, 35.0, 0.7), (-0.4, 3.3, 1.1, 0.6), (0.25, -1.5, 0.75, 0.99), (4.0, 3.0, 1.5, 0.45),
             (0.5, 0.7, 2.3, -0.6), (1.5, 2.7, 1.2, -0.95), (2.2, 0.3, 0.4, -0.2)]


@pytest.mark.parametrize("a, b, c, x", HYP_CASES)
def test_hyp2f1_against_the_series(a: float, b: float, c: float, x: float) -> None:
    want = _series_long_double(a, b, c, x)
    with plait_core.enable_x64():
        assert float(special.hyp2f1(a, b, c, x)) == pytest.approx(want, rel=5e-14)
    assert float(special.hyp2f1(np.float32(a), np.float32(b), np.float32(c), np.float32(x))) == pytest.approx(want, rel=1e-5)


def test_hyp2f1_closed_forms_everywhere_below_one() -> None:
    x = np.array([-1e7, -1e3, -7.5, -1.0, -0.3, 1e-9, 0.2, 0.5, 0.75, 0.9999, 1 - 1e-12])
    z = np.array([0.05, 0.5, 0.9, 0.999, 0.9999999])
    t = np.array([0.01, 1.0, 3.0, 300.0, 1e5])
    with plait_core.enable_x64():
        np.testing.assert_allclose(np.asarray(special.hyp2f1(1.0, 1.0, 2.0, x)), np.log1p(-x) / -x, rtol=5e-14)
        np.testing.assert_allclose(np.asarray(special.hyp2f1(0.5, 0.5, 1.5, z * z)), np.arcsin(z) / z, rtol=5e-14)
        np.testing.assert_allclose(np.asarray(special.hyp2f1(0.5, 1.0, 1.5, -t * t)), np.arctan(t) / t, rtol=5e-14)
        np.testing.assert_allclose(np.asarray(special.hyp2f1(2.7, 1.3, 1.3, x)), (1 - x) ** -2.7, rtol=5e-14)
        # Gauss's formula at 1: 2F1(1/2, 1/2; 2; 1) = Gamma(2) Gamma(1) / Gamma(3/2)**2 = 4 / pi
        assert float(special.hyp2f1(0.5, 0.5, 2.0, 1.0)) == pytest.approx(4 / math.pi, rel=1e-14)
        # polynomials, for every x: 2F1(-3, 2; 4; x) = 1 - 3x/2 + 9x^2/10 - x^3/5
        xs = np.array([-5.0, 0.5, 3.0])
        np.testing.assert_allclose(np.asarray(special.hyp2f1(2.0, -3.0, 4.0, xs)),
                                   1 - 1.5 * xs + 0.9 * xs**2 - 0.2 * xs**3, rtol=1e-14)
    x32 = x.astype(np.float32)  # its last element rounds to 1: inf
    with np.errstate(divide="ignore"):
        want = np.log1p(-x32.astype(np.float64)) / -x32
    np.testing.assert_allclose(np.asarray(special.hyp2f1(1.0, 1.0, 2.0, x32)), want, rtol=2e-6)


def test_hyp2f1_edges_and_dtypes() -> None:
    h = special.hyp2f1
    assert float(h(1.0, 1.0, 2.0, 1.0)) == np.inf  # c - a - b <= 0 at 1
    assert float(h(0.5, 0.7, 2.3, 1.2)) == np.inf  # beyond 1, as JAX
    assert float(h(0.5, 0.7, -2.0, 0.3)) == np.inf  # c a pole, as JAX
    assert float(h(0.5, 0.7, -2.5, 0.3)) == pytest.approx(0.8728093, rel=1e-6)  # JAX 0.10.2
    assert all(np.isnan(float(v)) for v in (h(np.nan, 1.0, 2.0, 0.5), h(1.0, 1.0, 2.0, np.nan), h(1.0, 1.0, 2.0, -np.inf)))
    assert float(h(1.0, 1.0, 2.0, 0.0)) == 1.0
    # beyond -2**25 (float32) the continuation does not reach: NaN; a polynomial is computed anyway
    assert np.isnan(float(h(1.0, 1.0, 2.0, np.float32(-1e8))))
    assert float(h(-1.0, 1.0, 2.0, np.float32(-1e8))) == pytest.approx(5e7, rel=1e-7)
    with plait_core.enable_x64():
        assert float(h(1.0, 1.0, 2.0, -1e15)) == pytest.approx(math.log1p(1e15) / 1e15, rel=1e-13)
    assert h(1, 1, 2, 0).dtype == np.float32
    assert h(np.float16(1), 1.0, 2.0, 0.5).dtype == np.float16
    with plait_core.enable_x64():
        assert h(1.0, 1.0, 2.0, 0.5).dtype == np.float64
    out = h(pnp.ones((2, 1)), 1.0, 2.0, pnp.array([0.1, 0.2, 0.3]))
    assert out.shape == (2, 3)
