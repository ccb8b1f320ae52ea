"""Record reference values of special functions from SciPy (float64), for
``packages/core/tests/test_scipy_special_extras.py`` on machines without SciPy.

Run it with any interpreter that has SciPy (never with plait in the same
process), for example JAX's environment::

    /path/to/jax-venv/bin/python tools/record_special_values.py [OUT.json]

Each case is ``[name, [argument arrays...], result]``; the arguments are
chosen inside each function's domain and across the branches of plait's
implementations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "packages" / "core" / "tests" / "data" / "special_values.json"

X = [-7.5, -2.5, -0.3, 0.0, 0.25, 1.0, 3.7, 14.9, 15.1, 22.0, 60.0]
POS = [0.01, 0.3, 0.99, 1.0, 1.5, 4.0, 10.0, 39.0, 41.0, 80.0]
CASES: list[tuple[str, list[list[float]]]] = [
    ("gamma", [[-2.5, -1.5, -0.5, 0.5, 1.0, 3.7, 10.0]]),
    ("gammasgn", [[-2.5, -1.5, -0.5, 0.5, 3.0]]),
    ("loggamma", [[0.1, 0.5, 1.0, 3.7, 30.0]]),
    ("beta", [[0.5, 2.0, 3.0, 0.1], [0.5, 3.0, 7.5, 4.0]]),
    ("betaln", [[0.5, 2.0, 3.0, 50.0], [0.5, 3.0, 7.5, 60.0]]),
    ("factorial", [[0.0, 1.0, 3.0, 3.5, 10.0]]),
    ("comb", [[5.0, 10.0, 7.5, 30.0], [2.0, 3.0, 2.0, 15.0]]),
    ("poch", [[2.0, 0.5, 3.5, 1.0], [3.0, 2.5, -1.5, 0.0]]),
    ("ndtr", [X]),
    ("ndtri", [[1e-30, 1e-10, 1e-6, 1e-3, 0.049, 0.051, 0.2, 0.4999, 0.5, 0.9, 0.999]]),
    ("log_ndtr", [[-40.0, -10.0, -5.5, -4.5, -1.0, 0.0, 3.0, 5.5, 10.0]]),
    ("erfcx", [[-3.0, -0.5, 0.0, 1.0, 3.9, 4.1, 10.0, 1e3]]),
    ("dawsn", [[-2.0, 0.0, 0.2, 1.0, 3.0, 5.9, 6.1, 10.0, 100.0]]),
    ("i0", [X]),
    ("i0e", [X]),
    ("i1", [X]),
    ("i1e", [X]),
    ("exp1", [POS]),
    ("expi", [[-30.0, -1.0, -0.01, *POS]]),
    ("expn", [[1.0, 2.0, 3.0, 5.0, 10.0, 0.0, 2.0], [0.1, 0.5, 1.5, 2.0, 50.0, 0.7, 1e-3]]),
    ("zeta", [[2.0, 3.0, 4.0, 1.5, 10.0], [1.0, 2.0, 0.5, 3.0, 1.0]]),
    ("polygamma", [[0.0, 1.0, 2.0, 3.0, 1.0], [1.5, 0.1, 7.0, 2.0, 30.0]]),
    ("rel_entr", [[0.0, 1.0, 2.5, 0.5], [1.0, 2.0, 0.5, 0.5]]),
    ("kl_div", [[0.0, 1.0, 2.5, 0.5], [1.0, 2.0, 0.5, 0.5]]),
    ("boxcox", [[1.0, 2.0, 5.0, 0.5], [0.0, 2.0, -0.5, 1e-3]]),
    ("boxcox1p", [[1e-4, 1.0, 5.0, 0.5], [0.0, 0.5, -0.5, 2.0]]),
    ("spence", [[0.0, 0.2, 0.5, 0.9, 1.0, 1.5, 2.0, 3.0, 10.0, 100.0]]),
    ("hyp1f1", [[1.0, 0.5, 2.0, 3.0, -2.5, 1.0], [2.0, 1.5, 3.0, 1.0, 4.0, 1.0], [0.5, -3.0, 10.0, -20.0, 2.0, 40.0]]),
    ("owens_t", [[0.0, 0.5, 2.0, -1.0, 1.0, 3.0, 0.1, 4.0], [1.0, 0.3, 5.0, -2.0, 0.99, 1.01, 100.0, 0.5]]),
]

BESSEL_Z = [0.5, 1.0, 5.0, 10.0, 0.0, 0.01, 30.0, -2.0]
SICI_X = [0.5, 1.9, 2.0, 2.1, 10.0, -1.0, -7.5, 30.0]
XS = [-1.5, 0.0, 0.7, 3.0]
PS = [0.1, 0.5, 0.9]
STATS_CASES: list[tuple[str, list[Any]]] = [
    *[(f"gumbel_r.{f}", [XS, 0.5, 2.0]) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("gumbel_r.ppf", [PS, 0.5, 2.0]),
    *[(f"gumbel_l.{f}", [XS, 0.5, 2.0]) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("gumbel_l.ppf", [PS, 0.5, 2.0]),
    *[(f"pareto.{f}", [[1.5, 2.0, 5.0], 3.0, 0.1, 1.2]) for f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf")],
    ("pareto.ppf", [PS, 3.0, 0.1, 1.2]),
    ("geom.logpmf", [[1.0, 3.0, 7.0], 0.3]),
    ("geom.pmf", [[1.0, 3.0], 0.3]),
    ("binom.logpmf", [[0.0, 2.0, 5.0], 5.0, 0.3]),
    ("binom.pmf", [[0.0, 2.0, 5.0], 5.0, 0.3]),
    ("nbinom.logpmf", [[0.0, 2.0, 9.0], 3.0, 0.4]),
    ("nbinom.pmf", [[0.0, 2.0], 3.0, 0.4]),
    ("betabinom.logpmf", [[0.0, 2.0, 5.0], 5.0, 2.0, 3.0]),
    ("betabinom.pmf", [[0.0, 2.0], 5.0, 2.0, 3.0]),
    ("vonmises.logpdf", [[0.0, 1.0, 3.0], 2.0]),
    ("vonmises.pdf", [[0.0, 0.2], 50.0]),
    ("wrapcauchy.logpdf", [[0.0, 1.0, 6.0], 0.5]),
    ("wrapcauchy.pdf", [[0.5, 3.0], 0.2]),
    ("gennorm.logpdf", [[0.0, 1.5, -2.0], 1.5]),
    ("gennorm.pdf", [[0.0, 1.5], 2.5]),
    ("gennorm.cdf", [[0.0, 1.5, -2.0], 1.5]),
    *[(f"truncnorm.{f}", [[-0.5, 0.0, 0.5, 0.9], -1.0, 1.0, 0.1, 1.1]) for f in ("logpdf", "pdf", "cdf", "logcdf",
                                                                                  "sf", "logsf")],
    ("truncnorm.logpdf", [[8.5, 9.0], 8.0, 10.0]),
    ("truncnorm.logcdf", [[8.5, 9.0], 8.0, 10.0]),
    ("truncnorm.logsf", [[-9.5], -10.0, -9.0]),
    ("dirichlet.logpdf", [[0.2, 0.3, 0.5], [1.0, 2.0, 3.0]]),
    ("dirichlet.pdf", [[0.1, 0.6, 0.3], [0.5, 2.0, 3.0]]),
    ("multinomial.logpmf", [[1, 2, 0], 3, [0.2, 0.5, 0.3]]),
    ("multinomial.pmf", [[2, 2, 1], 5, [0.2, 0.5, 0.3]]),
]


def record() -> dict[str, Any]:
    """Evaluate every case with SciPy in float64."""
    import scipy  # type: ignore[import-untyped]
    import scipy.special as sp  # type: ignore[import-untyped]

    out = []
    for name, args in CASES:
        arrays = [np.asarray(a, np.float64) for a in args]
        fn = getattr(sp, name)
        if name == "expn" or name == "polygamma":
            value = fn(arrays[0].astype(int), arrays[1])
        else:
            value = fn(*arrays)
        out.append([name, args, [float(v) for v in np.asarray(value, np.float64)]])
    import scipy.stats as st  # type: ignore[import-untyped]

    stats_out = []
    for name, args in STATS_CASES:
        dist, fn = name.split(".")
        value = getattr(getattr(st, dist), fn)(*[np.asarray(a, np.float64) for a in args])
        stats_out.append([name, args, [float(v) for v in np.ravel(np.asarray(value, np.float64))]])
    extra = {
        "multigammaln": [float(sp.multigammaln(a, 3)) for a in (1.5, 2.0, 7.25)],
        "bernoulli": [float(v) for v in sp.bernoulli(10)],
        "bessel_jn_z": BESSEL_Z,
        "bessel_jn": [[float(v) for v in sp.jv(k, np.asarray(BESSEL_Z))] for k in range(4)],
        "sici_x": SICI_X,
        "sici": [[float(v) for v in part] for part in sp.sici(np.asarray(SICI_X))],
    }
    return {"scipy_version": scipy.__version__, "cases": out, "stats": stats_out, "extra": extra}


def main(argv: list[str]) -> None:
    """Write the table to ``argv[0]`` (default: the committed data file); ``-`` prints it."""
    table = record()
    lines = ",\n".join(json.dumps(case) for case in table["cases"])
    stats = ",\n".join(json.dumps(case) for case in table["stats"])
    text = (f"{{\"scipy_version\": {json.dumps(table['scipy_version'])},\n\"cases\": [\n{lines}\n],\n"
            f"\"stats\": [\n{stats}\n],\n\"extra\": {json.dumps(table['extra'])}}}\n")
    out = argv[0] if argv else str(DEFAULT_OUT)
    if out == "-":
        sys.stdout.write(text)
    else:
        Path(out).write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:])
