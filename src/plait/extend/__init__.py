"""``jax.extend``: what libraries use to extend plait the JAX way.

* :mod:`plait.extend.core`: ``Primitive`` (a primitive a library defines,
  with rules given through :mod:`plait.interpreters`), the jaxpr classes and
  ``primitives``;
* :mod:`plait.extend.linear_util`: wrapped functions (``wrap_init``,
  ``transformation2``, ...);
* :mod:`plait.extend.source_info_util`: source information and name stacks;
* :mod:`plait.extend.backend`: the backend (``get_backend``, ``backends``, ...);
* :mod:`plait.extend.random`: the threefry cipher (``threefry_2x32``).

See ``docs/extending.md``.
"""

from __future__ import annotations

from plait.extend import backend as backend
from plait.extend import core as core
from plait.extend import linear_util as linear_util
from plait.extend import random as random
from plait.extend import source_info_util as source_info_util

__all__ = ["backend", "core", "linear_util", "random", "source_info_util"]
