"""``plait.scipy.special``: special functions with ``jax.scipy.special``'s names
and semantics.  Integer and boolean inputs are computed in the default float
dtype; Python scalars are weakly typed.

This module is the namespace; the functions live below it, in
:mod:`plait_core.scipy.special_basic` (those the others are built on),
:mod:`plait_core.scipy._incomplete`, :mod:`plait_core.scipy.special_extras` and
:mod:`plait_core.scipy.special_more`, none of which imports this module."""

from __future__ import annotations

from plait_core.scipy._incomplete import betainc, gammainc, gammaincc
from plait_core.scipy.special_basic import (
    digamma,
    entr,
    erf,
    erfc,
    erfinv,
    expit,
    gammaln,
    log_softmax,
    logit,
    logsumexp,
    softmax,
    xlog1py,
    xlogy,
)
from plait_core.scipy.special_extras import (
    bernoulli,
    bessel_jn,
    beta,
    betaln,
    boxcox,
    boxcox1p,
    comb,
    dawsn,
    erfcx,
    exp1,
    expi,
    expn,
    factorial,
    gamma,
    gammasgn,
    hyp1f1,
    i0,
    i0e,
    i1,
    i1e,
    kl_div,
    log_ndtr,
    loggamma,
    multigammaln,
    ndtr,
    ndtri,
    owens_t,
    poch,
    polygamma,
    rel_entr,
    sici,
    spence,
    zeta,
)
from plait_core.scipy.special_more import fresnel, hyp2f1, sph_harm_y, wofz

__all__ = [
    "betainc", "digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammainc", "gammaincc", "gammaln",
    "log_softmax", "logit", "logsumexp", "softmax", "xlog1py", "xlogy",
]
__all__ += [
    "bernoulli", "bessel_jn", "beta", "betaln", "boxcox", "boxcox1p", "comb", "dawsn", "erfcx", "exp1", "expi", "expn",
    "factorial", "gamma", "gammasgn", "hyp1f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr", "loggamma",
    "multigammaln", "ndtr", "ndtri", "owens_t", "poch", "polygamma", "rel_entr", "sici", "spence", "zeta",
]
__all__ += ["fresnel", "hyp2f1", "sph_harm_y", "wofz"]
