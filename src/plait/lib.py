"""``plait.lib``: the XLA runtime library plait runs programs on (JAX's ``jax.lib``).

As JAX 0.10.2's ``jax.lib``, it holds one name: ``__version__``, the version string of
the installed jaxlib (the runtime plait's dispatch compiles and runs programs with).
Libraries read it to choose code paths (equinox skips tests on old jaxlibs).
"""

from __future__ import annotations

from plait_dispatch._jaxlib import JAXLIB_VERSION

__version__: str = JAXLIB_VERSION

