"""The ``plait.numpy.linalg`` namespace: the products ``dot``, ``matmul``,
``tensordot``, ``inner``, ``outer``, ``vdot``, ``vecdot`` (see
:mod:`plait_core.numpy.dots`) and ``einsum`` (see :mod:`plait_core.numpy.einsum`);
the norms ``norm``, ``vector_norm`` and ``matrix_norm`` (see
:mod:`plait_core.numpy.norms`); and the factorisations, solves and inverses of
:mod:`plait_core.numpy.decompositions`. Nothing is defined here; the modules
named are below this one and never import it.
"""

from __future__ import annotations

from plait_core.numpy.decompositions import (
    EighResult,
    EigResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cholesky,
    cond,
    cross,
    det,
    diagonal,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    lstsq,
    matrix_power,
    matrix_rank,
    matrix_transpose,
    multi_dot,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
    svdvals,
    tensorinv,
    tensorsolve,
    trace,
)
from plait_core.numpy.dots import dot, inner, matmul, outer, tensordot, vdot, vecdot
from plait_core.numpy.einsum import einsum, einsum_path
from plait_core.numpy.norms import matrix_norm, norm, vector_norm

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "dot",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "multi_dot",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensorinv",
    "tensorsolve",
    "trace",
    "einsum",
    "einsum_path",
    "inner",
    "matmul",
    "matrix_norm",
    "norm",
    "outer",
    "tensordot",
    "vdot",
    "vecdot",
    "vector_norm",
]

