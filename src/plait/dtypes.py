"""``plait.dtypes``: the names of ``jax.dtypes`` (``import jax.dtypes`` under
``plait.compat`` imports this module).

``canonicalize_dtype``, ``result_type``, ``issubdtype``, ``finfo``/``iinfo``,
``float0``, ``bfloat16``, ``extended``/``prng_key`` (the abstract scalar types
of typed keys' dtypes), ``scalar_type_of``, ``itemsize_bits`` and
``TypePromotionError``, with JAX's semantics; see
:mod:`plait_core.dtypes_api`.  plait's own dtype kernel, with more names, is
:mod:`plait_core.dtypes`.
"""

from plait_core.dtypes_api import *  # noqa: F403  (the namespace re-exports dtypes_api whole)
from plait_core.dtypes_api import __all__ as __all__
