"""``plait.dtypes``: the names of ``jax.dtypes`` (``import jax.dtypes`` under
``plait.compat`` imports this module).

``canonicalize_dtype``, ``result_type``, ``issubdtype``, ``finfo``/``iinfo``,
``float0``, ``bfloat16``, ``extended``/``prng_key`` (the abstract scalar types
of typed keys' dtypes), ``scalar_type_of``, ``itemsize_bits`` and
``TypePromotionError``, with JAX's semantics; see
:mod:`plait_core.dtypes_api`.  plait's own dtype kernel, with more names, is
:mod:`plait_core.dtypes`.
"""

from plait_core.dtypes_api import (
    TypePromotionError,
    bfloat16,
    canonicalize_dtype,
    extended,
    finfo,
    float0,
    iinfo,
    issubdtype,
    itemsize_bits,
    prng_key,
    result_type,
    scalar_type_of,
)

__all__ = [
    "TypePromotionError",
    "bfloat16",
    "canonicalize_dtype",
    "extended",
    "finfo",
    "float0",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "result_type",
    "scalar_type_of",
]
