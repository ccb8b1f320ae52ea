"""The functions of ``lax`` that JAX builds from others: ``full_like``,
``tile``, ``stack``, the special functions, ``ragged_dot``, ... (see
:mod:`.extras` and :mod:`.ragged`).

They are compositions of ``plait.numpy`` and ``plait.scipy.special``, which are
themselves built on ``lax``: so they live in this layer, above those libraries,
and not inside ``plait_core.lax``.  Importing this package adds them to the
``lax`` namespace (``lax.full_like`` ...), a registration that ``plait_core``'s
own ``__init__`` does, so every user of ``plait_core.lax`` sees them.
"""

from __future__ import annotations

from plait_core import lax as _lax
from plait_core.lax_compositions import extras, ragged

for _module in (extras, ragged):
    for _name in _module.__all__:
        setattr(_lax, _name, getattr(_module, _name))

__all__ = ["extras", "ragged"]
