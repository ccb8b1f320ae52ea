"""plait-dispatch: plait programs on XLA through jaxlib: device arrays, jit,
device_put, donation and eager execution.

This package depends on plait-core alone (and jaxlib).  Its lowering rules
for core's primitives live in :mod:`plait_dispatch.lowering` (the registry
``lowering_rules``, keyed by primitive); the coverage test walks core's
catalog.  Importing the package installs XLA as core's eager backend.
"""

__version__ = "0.1.0"

from plait_dispatch.api import *
from plait_dispatch.api import __all__ as _api_names
from plait_dispatch.eager import install as _install_eager_backend
from plait_dispatch.eager_shortcuts import install as _install_eager_shortcuts
from plait_dispatch.lowering import lowering_rules

_install_eager_backend()
_install_eager_shortcuts()

__all__ = [*_api_names, "lowering_rules"]
