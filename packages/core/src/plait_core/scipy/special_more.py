"""More of ``jax.scipy.special``: the Faddeeva function ``wofz``, the Fresnel
integrals ``fresnel``, the spherical harmonics ``sph_harm_y`` and the Gauss
hypergeometric function ``hyp2f1``.

Each is a composition of ``lax``/``plait.numpy`` operations (fixed-length
series and recurrences, branches fed safe arguments), so every transformation
applies; ``wofz`` and ``fresnel`` carry their closed-form derivatives as
``custom_jvp`` rules.  The algorithms (published ones, written here):

* ``wofz``: J. A. C. Weideman's rational approximation (SIAM J. Numer. Anal.
  31, 1994) with 32 terms in the upper half plane, the asymptotic series
  ``i / (sqrt(pi) z) sum (2k-1)!! / (2 z**2)**k`` for ``|z| > 1000``, exact
  ``exp(-x**2)`` as the real part on the real axis, and the reflection
  ``w(z) = 2 exp(-z**2) - w(-z)`` in the lower half plane.
* ``fresnel``: the power series for ``|x| < 1`` and, beyond, the identity
  ``C + i S = (1 + i)/2 (1 - exp(i pi x**2 / 2) w((1 + i) sqrt(pi) x / 2))``
  with ``x**2`` reduced modulo 4 exactly (Veltkamp splitting), so the phase is
  right also for large ``x``.
* ``sph_harm_y``: the orthonormal associated Legendre functions by their
  standard three-term recurrences (sectoral, then in the degree), with the
  Condon-Shortley phase.
* ``hyp2f1``: the Gauss series for ``0 <= x <= 1/2``; above, the series at
  ``1/2`` continued analytically by Taylor steps of the hypergeometric
  differential equation towards 1 (each step at most half the distance to the
  singular point); ``x < 0`` through Pfaff's transformation
  ``(1 - x)**(-a) 2F1(a, c - b; c; x / (x - 1))``; Gauss's formula at ``x = 1``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core import numpy as pnp
from plait_core.custom_derivatives import custom_jvp
from plait_core.errors import ConcretizationTypeError
from plait_core.numpy._util import promote_args_inexact
from plait_core.scipy.special_basic import gammaln
from plait_core.scipy.special_extras import gammasgn
from plait_core.trace import Tracer, concrete_or_error

Array = Any
_SQRT_PI = math.sqrt(math.pi)


# ---------------------------------------------------------------------------
# The Faddeeva function


def _weideman_coefficients(n: int) -> list[float]:
    """The ``n`` polynomial coefficients (highest power first) of Weideman's
    approximation, from the FFT of ``exp(-t**2) (L**2 + t**2)`` at
    ``t = L tan(theta / 2)``, ``L = sqrt(n / sqrt 2)``."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    ell = math.sqrt(n / math.sqrt(2))
    t = ell * np.tan(k * np.pi / m / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (ell * ell + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return [float(c) for c in np.flipud(a[1 : n + 1])]


_W_TERMS = 32
_W_L = math.sqrt(_W_TERMS / math.sqrt(2))
_W_COEFFS = _weideman_coefficients(_W_TERMS)
_W_BIG = 1000.0


def _complex_dtype(real: Any) -> Any:
    return np.complex128 if np.dtype(real) == np.float64 else np.complex64


def _faddeeva(x: Array, y: Array) -> tuple[Array, Array]:
    """``w(x + i y)`` as (real, imaginary) parts, for finite real arrays of one dtype."""
    ctype = _complex_dtype(x.dtype)
    upper = y >= 0
    # the upper half plane: z or -z
    xu, yu = pnp.where(upper, x, -x), pnp.abs(y)
    size = pnp.abs(xu) + yu
    big = size > _W_BIG
    # Weideman: iz = -yu + i xu
    xs, ys = pnp.where(big, 0.0, xu), pnp.where(big, 0.0, yu)
    iz = lax.complex(-ys, xs).astype(ctype)
    den = _W_L - iz
    zz = (_W_L + iz) / den
    poly = pnp.zeros_like(zz) + _W_COEFFS[0]
    for c in _W_COEFFS[1:]:
        poly = poly * zz + c
    near = 2 * poly / (den * den) + (1 / _SQRT_PI) / den
    # asymptotic: i / (sqrt(pi) z) (1 + 1/(2 z^2) + 3/(4 z^4) + 15/(8 z^6)), with 1/z scaled against overflow
    scale = pnp.where(big, size, 1.0)
    zb = lax.complex(pnp.where(big, xu, 1.0) / scale, pnp.where(big, yu, 0.0) / scale).astype(ctype)
    inv = (1 / zb) / scale
    inv2 = inv * inv
    series = 1 + inv2 * (0.5 + inv2 * (0.75 + inv2 * 1.875))
    far = (1j / _SQRT_PI) * inv * series
    wu = pnp.where(big, far, near)
    re_u, im_u = pnp.real(wu), pnp.imag(wu)
    xr = pnp.minimum(pnp.abs(xu), 1e4)
    re_u = pnp.where(yu == 0, pnp.exp(-xr * xr), re_u)  # exact on the real axis
    # the lower half plane: w(z) = 2 exp(-z^2) - w(-z), exp(-z^2) = exp(y^2 - x^2) (cos 2xy - i sin 2xy)
    xl, yl = pnp.where(upper, 0.0, x), pnp.where(upper, 0.0, y)
    mag = 2 * pnp.exp((yl - xl) * (yl + xl))
    re_l = mag * pnp.cos(2 * xl * yl) - re_u
    im_l = -mag * pnp.sin(2 * xl * yl) - im_u
    return pnp.where(upper, re_u, re_l), pnp.where(upper, im_u, im_l)


def _wofz_value(z: Array) -> Array:
    z = pnp.asarray(z)
    if dtypes.is_complex(z.dtype):
        x, y = pnp.real(z), pnp.imag(z)
    else:
        x, y = z, pnp.zeros_like(z)
    finite = pnp.isfinite(x) & pnp.isfinite(y)
    re, im = _faddeeva(pnp.where(finite, x, 0.0), pnp.where(finite, y, 0.0))
    re, im = pnp.where(finite, re, np.nan), pnp.where(finite, im, np.nan)
    return lax.complex(re, im).astype(_complex_dtype(x.dtype))


@custom_jvp
def _wofz(z: Array) -> Array:
    return _wofz_value(z)


@_wofz.defjvp
def _wofz_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Array, Array]:
    (z,), (dz,) = primals, tangents
    w = _wofz(z)
    return w, (2j / _SQRT_PI - 2 * z * w) * dz


def wofz(z: Array) -> Array:
    """The Faddeeva function ``w(z) = exp(-z**2) erfc(-i z)`` of real or complex
    ``z`` (a complex result: complex64 for float32 and narrower inputs and for
    integers, complex128 for float64); NaN for infinite or NaN inputs, as JAX.
    Its derivative is ``w'(z) = 2i/sqrt(pi) - 2 z w(z)``."""
    (z,) = promote_args_inexact("wofz", z)
    if z.dtype in (np.dtype(np.float16), dtypes.bfloat16):
        z = z.astype(np.float32)
    return _wofz(z)


# ---------------------------------------------------------------------------
# Fresnel integrals


def _half_pi_square_phase(x: Array) -> tuple[Array, Array]:
    """``(cos, sin)`` of ``pi x**2 / 2`` with ``x**2`` reduced modulo 4 exactly
    (``x`` split into halves whose products are exact)."""
    x = pnp.asarray(x)
    split = 134217729.0 if x.dtype == np.dtype(np.float64) else 4097.0
    c = x * split
    hi = c - (c - x)
    lo = x - hi
    t = pnp.fmod(hi * hi, 4.0) + pnp.fmod(2 * hi * lo, 4.0) + pnp.fmod(lo * lo, 4.0)
    phase = (np.pi / 2) * pnp.fmod(t, 4.0)
    return pnp.cos(phase), pnp.sin(phase)


_FRESNEL_TERMS = 14


def _fresnel_value(x: Array) -> tuple[Array, Array]:
    x = pnp.asarray(x)
    ax = pnp.abs(x)
    small = ax < 1
    # series: S = x t sum (-u)^n / ((2n+1)! (4n+3)), C = x sum (-u)^n / ((2n)! (4n+1)), t = pi x^2 / 2, u = t^2
    xs = pnp.where(small, ax, 0.0)
    t = (np.pi / 2) * xs * xs
    u = t * t
    s_sum, c_sum, power = pnp.zeros_like(xs), pnp.zeros_like(xs), pnp.ones_like(xs)
    for n in range(_FRESNEL_TERMS):
        c_sum = c_sum + power / float(math.factorial(2 * n) * (4 * n + 1))
        s_sum = s_sum + power / float(math.factorial(2 * n + 1) * (4 * n + 3))
        power = -power * u
    s_small, c_small = xs * t * s_sum, xs * c_sum
    # through the Faddeeva function
    xb = pnp.where(small | ~pnp.isfinite(ax), 1.0, ax)
    arg = (_SQRT_PI / 2) * xb
    wr, wi = _faddeeva(arg, arg)
    cos, sin = _half_pi_square_phase(xb)
    er, ei = cos * wr - sin * wi, cos * wi + sin * wr
    c_big, s_big = (1 - er + ei) / 2, (1 - er - ei) / 2
    s = pnp.where(small, s_small, pnp.where(pnp.isinf(ax), 0.5, s_big))
    c = pnp.where(small, c_small, pnp.where(pnp.isinf(ax), 0.5, c_big))
    s = pnp.where(pnp.isnan(x), np.nan, s)
    c = pnp.where(pnp.isnan(x), np.nan, c)
    sign = pnp.where(x < 0, -1.0, 1.0).astype(x.dtype)
    return sign * s, sign * c


@custom_jvp
def _fresnel(x: Array) -> tuple[Array, Array]:
    return _fresnel_value(x)


@_fresnel.defjvp
def _fresnel_jvp(primals: tuple[Array], tangents: tuple[Array]) -> tuple[Any, Any]:
    (x,), (dx,) = primals, tangents
    cos, sin = _half_pi_square_phase(x)
    return _fresnel(x), (sin * dx, cos * dx)


def fresnel(x: Array) -> tuple[Array, Array]:
    """The Fresnel integrals ``(S(x), C(x))``: ``S = integral_0^x sin(pi t**2 / 2) dt``,
    ``C = integral_0^x cos(pi t**2 / 2) dt`` (both odd, tending to 1/2; ``+-1/2``
    at ``+-inf``), for real ``x`` (float16/bfloat16 computed in float32, as
    JAX); complex ``x`` is a ``NotImplementedError``.  The derivatives are
    ``sin(pi x**2 / 2)`` and ``cos(pi x**2 / 2)``."""
    (x,) = promote_args_inexact("fresnel", x)
    if dtypes.is_complex(x.dtype):
        raise NotImplementedError("fresnel: complex inputs are not supported (as in JAX)")
    narrow = x.dtype in (np.dtype(np.float16), dtypes.bfloat16)
    s, c = _fresnel(x.astype(np.float32) if narrow else x)
    return (s.astype(x.dtype), c.astype(x.dtype)) if narrow else (s, c)


# ---------------------------------------------------------------------------
# Spherical harmonics


def _static_n_max(n: Array) -> int:
    if isinstance(n, Tracer):
        try:
            n = concrete_or_error(n, "n")
        except ConcretizationTypeError:
            raise ConcretizationTypeError(
                "sph_harm_y: the n_max argument must be given (a Python int) to call it on traced degrees n "
                "(under jit, vmap or grad); without it n_max is max(n), which needs concrete values"
            ) from None
    values = np.asarray(n)
    return int(values.max()) if values.size else 0


def sph_harm_y(n: Array, m: Array, theta: Array, phi: Array, diff_n: int | None = None,
               n_max: int | None = None) -> Array:
    """The spherical harmonics ``Y_n^m(theta, phi) = N P_n^|m|(cos theta) exp(i m phi)``
    with orthonormal normalisation and the Condon-Shortley phase
    (``Y_n^-m = (-1)**m conj(Y_n^m)``): degree ``n >= 0``, order ``|m| <= n``,
    polar angle ``theta`` in ``[0, pi]``, azimuth ``phi``.

    ``n_max`` (a Python int) bounds the degrees, which are clipped to it (as in
    JAX); by default it is ``max(n)``, which needs concrete ``n`` (else a
    ``ConcretizationTypeError``).  The arguments broadcast; the result is
    complex (complex64 unless the angles are float64).  Orders with ``|m| > n``
    give 0, negative degrees NaN.  ``diff_n`` is not supported
    (``NotImplementedError``, as JAX)."""
    if diff_n is not None:
        raise NotImplementedError("sph_harm_y: the diff_n argument is not supported (as in JAX)")
    top = _static_n_max(n) if n_max is None else int(n_max)
    theta, phi = promote_args_inexact("sph_harm_y", theta, phi)
    if theta.dtype in (np.dtype(np.float16), dtypes.bfloat16):
        theta, phi = theta.astype(np.float32), phi.astype(np.float32)
    nn = pnp.minimum(pnp.asarray(n), top)
    mm = pnp.asarray(m)
    nn, mm, theta, phi = pnp.broadcast_arrays(nn, mm, theta, phi)
    am = pnp.abs(mm).astype(theta.dtype)
    nf = nn.astype(theta.dtype)
    x, s = pnp.cos(theta), pnp.sin(theta)
    # sectoral: P_k^k = -sqrt((2k + 1) / (2k)) sin(theta) P_{k-1}^{k-1}, P_0^0 = 1 / sqrt(4 pi)
    p = pnp.full_like(theta, 1 / math.sqrt(4 * math.pi))
    start = pnp.where(am == 0, p, 0.0)
    for k in range(1, top + 1):
        p = -math.sqrt((2 * k + 1) / (2 * k)) * s * p
        start = pnp.where(am == k, p, start)
    # in the degree: P_l^m = a (x P_{l-1}^m - b P_{l-2}^m)
    prev2, prev = pnp.zeros_like(theta), start
    for j in range(1, top + 1):
        lf = am + j
        a = pnp.sqrt((4 * lf * lf - 1) / ((lf - am) * (lf + am)))
        b = pnp.sqrt(pnp.maximum(((lf - 1) ** 2 - am * am) / (4 * (lf - 1) ** 2 - 1), 0.0))
        cur = a * (x * prev - b * prev2)
        active = lf <= nf
        prev2, prev = pnp.where(active, prev, prev2), pnp.where(active, cur, prev)
    legendre = pnp.where(am > nf, 0.0, prev)
    odd = pnp.mod(pnp.abs(mm), 2) == 1
    legendre = pnp.where((mm < 0) & odd, -legendre, legendre)
    legendre = pnp.where(nn < 0, np.nan, legendre)
    angle = mm.astype(theta.dtype) * phi
    return lax.complex(legendre * pnp.cos(angle), legendre * pnp.sin(angle))


# ---------------------------------------------------------------------------
# The Gauss hypergeometric function

_H_SERIES = 200
_H_STEP_TERMS = 90


def _gauss_series(a: Array, b: Array, c: Array, x: Array) -> tuple[Array, Array]:
    """``2F1(a, b; c; x)`` and its derivative by ``_H_SERIES`` terms of the Gauss
    series (``F' = sum_k term_k (a + k)(b + k) / (c + k)``)."""

    def body(k: Any, carry: tuple[Array, Array, Array]) -> tuple[Array, Array, Array]:
        term, total, deriv = carry
        kf = k.astype(x.dtype) if hasattr(k, "astype") else k
        ratio = (a + kf) * (b + kf) / (c + kf)
        deriv = deriv + term * ratio
        term = term * ratio * x / (kf + 1)
        return term, total + term, deriv

    ones = pnp.ones_like(a * b * c * x)
    _, total, deriv = lax.fori_loop(0, _H_SERIES, body, (ones, ones, pnp.zeros_like(ones)))
    return total, deriv


def _taylor_step(a: Array, b: Array, c: Array, x0: Array, f: Array, df: Array, h: Array) -> tuple[Array, Array]:
    """``(F, F')`` at ``x0 + h`` from their values at ``x0``: the Taylor series of the
    hypergeometric equation ``x(1-x) F'' + (c - (a+b+1) x) F' - a b F = 0``, whose
    coefficients ``t_k`` (scaled here by ``h**k``) satisfy ``x0(1-x0)(k+1)(k+2) t_{k+2}
    = (k+a)(k+b) t_k - (k+1)((1-2 x0) k + c - (a+b+1) x0) t_{k+1}``."""
    p0 = x0 * (1 - x0)
    p1 = 1 - 2 * x0
    q0 = c - (a + b + 1) * x0

    def body(k: Any, carry: tuple[Array, Array, Array, Array]) -> tuple[Array, Array, Array, Array]:
        s0, s1, total, deriv = carry
        kf = k.astype(f.dtype) if hasattr(k, "astype") else k
        s2 = ((kf + a) * (kf + b) * s0 * h * h - (kf + 1) * (p1 * kf + q0) * s1 * h) / (p0 * (kf + 1) * (kf + 2))
        return s1, s2, total + s2, deriv + (kf + 2) * s2

    s1 = df * h
    _, _, total, deriv = lax.fori_loop(0, _H_STEP_TERMS, body, (f, s1, f + s1, s1))
    return total, deriv / h


def _hops(dtype: Any) -> int:
    """Taylor steps towards 1: they reach ``1 - 2**-hops``, past the largest float below 1."""
    return 54 if np.dtype(dtype) == np.dtype(np.float64) else 25


def _hyp2f1_unit(a: Array, b: Array, c: Array, y: Array, rest: Array) -> Array:
    """``2F1(a, b; c; y)`` for ``0 <= y < 1``: the series up to 1/2, Taylor steps beyond
    (``rest`` is ``1 - y``, given accurately: the steps are measured by it)."""
    low = y <= 0.5
    f, df = _gauss_series(a, b, c, pnp.where(low, y, 0.5))
    hops = _hops(y.dtype)
    if not isinstance(rest, Tracer):  # concrete values: only the steps some element needs
        far = np.asarray(rest)[~np.asarray(low)]
        far = far[np.isfinite(far) & (far > 0)]
        hops = min(hops, int(np.ceil(-np.log2(far.min()))) if far.size else 0)
    for k in range(hops):
        x0 = 1 - 2.0 ** -(k + 1)
        most = 2.0 ** -(k + 2)
        reach = 2.0 ** -(k + 1) - rest
        # (a step ending exactly at the target is the last one: it carries the derivative in rest)
        h = pnp.where(reach > most, most, pnp.where(reach > 0, reach, 0.0))
        moving = (h > 0) & ~low
        # a step that is not taken is made with a harmless length and discarded
        # (fed a fixed start, so that it stays finite and its derivative too)
        nf, ndf = _taylor_step(a, b, c, x0, pnp.where(moving, f, 1.0), pnp.where(moving, df, 0.0),
                               pnp.where(moving, h, most))
        f, df = pnp.where(moving, nf, f), pnp.where(moving, ndf, df)
    return f


def _gauss_at_one(a: Array, b: Array, c: Array) -> Array:
    """``Gamma(c) Gamma(c-a-b) / (Gamma(c-a) Gamma(c-b))`` (``c - a - b > 0``), 0 at
    the poles of the denominator."""
    def pole(v: Array) -> Array:
        return (v <= 0) & (v == pnp.floor(v))

    ok = (c - a - b > 0) & ~pole(c) & ~pole(c - a) & ~pole(c - b)
    c, s, ca, cb = (pnp.where(ok, v, 1.0) for v in (c, c - a - b, c - a, c - b))
    num = gammaln(c) + gammaln(s) - gammaln(ca) - gammaln(cb)
    sign = gammasgn(c) * gammasgn(s) * gammasgn(ca) * gammasgn(cb)
    return pnp.where(ok, sign * pnp.exp(num), 0.0)


def hyp2f1(a: Array, b: Array, c: Array, x: Array) -> Array:
    """The Gauss hypergeometric function ``2F1(a, b; c; x) = sum_k (a)_k (b)_k /
    (c)_k x**k / k!`` for real arguments.

    Defined here for ``x < 1`` (by analytic continuation beyond ``|x| < 1``) and at
    ``x = 1`` by Gauss's formula when ``c - a - b > 0`` (``inf`` otherwise); a
    non-positive integer ``a`` or ``b`` makes it a polynomial, evaluated for
    every ``x`` (up to degree 199).  As in JAX, ``inf`` where ``c`` is a
    non-positive integer and for ``x > 1`` (non-polynomial cases); NaN for NaN
    arguments and for ``x < -2**25`` (float32; ``-2**54`` for float64), which
    the continuation does not reach.  (JAX returns ``inf`` for ``x < -1`` and a value
    at ``x = 1`` with ``c - a - b <= 0``: those are defined differently here.)"""
    a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
    narrow = x.dtype in (np.dtype(np.float16), dtypes.bfloat16)
    if narrow:
        out_dtype = x.dtype
        a, b, c, x = (v.astype(np.float32) for v in (a, b, c, x))
    a, b, c, x = pnp.broadcast_arrays(a, b, c, x)

    def nonpositive_int(v: Array) -> Array:
        return (v <= 0) & (v == pnp.floor(v))

    a_term, b_term = nonpositive_int(a), nonpositive_int(b)
    swap = b_term & ~a_term
    a, b = pnp.where(swap, b, a), pnp.where(swap, a, b)
    terminating = a_term | b_term
    poly, _ = _gauss_series(a, b, c, pnp.where(terminating & pnp.isfinite(x), x, 0.0))
    # Pfaff: 2F1(a, b; c; x) = (1 - x)**(-a) 2F1(a, c - b; c; x / (x - 1)) for x < 0, with
    # a the larger of a, b (the second parameter c - min(a, b) is then the larger one:
    # positive more often, and the series cancels less)
    neg = (x < 0) & pnp.isfinite(x)
    xs = pnp.where(neg, x, -1.0)
    y = pnp.where(neg, xs / (xs - 1), pnp.where((x >= 0) & (x < 1), x, 0.0))
    rest = pnp.where(neg, 1 / (1 - xs), 1 - y)
    big, small = pnp.maximum(a, b), pnp.minimum(a, b)
    first, second = pnp.where(neg, big, a), pnp.where(neg, c - small, b)
    inner = _hyp2f1_unit(first, second, c, y, rest)
    general = pnp.where(neg, pnp.power(1 - xs, -first) * inner, inner)
    at_one = pnp.where(c - a - b > 0, _gauss_at_one(a, b, c), np.inf)
    out = pnp.where(x == 1, at_one, pnp.where(x > 1, np.inf, general))
    out = pnp.where(terminating, poly, out)
    out = pnp.where(nonpositive_int(c), np.inf, out)
    # beyond the reach of the Taylor steps (1/(1 - x) below 2**-hops): not computed
    unreached = neg & ~terminating & (rest < 2.0 ** -_hops(x.dtype))
    bad = pnp.isnan(a) | pnp.isnan(b) | pnp.isnan(c) | pnp.isnan(x) | (x == -np.inf) | unreached
    out = pnp.where(bad, np.nan, out)
    return out.astype(out_dtype) if narrow else out


__all__ = ["fresnel", "hyp2f1", "sph_harm_y", "wofz"]
