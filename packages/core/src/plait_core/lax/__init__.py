"""``plait.lax``: thin, typed wrappers over the primitives, with JAX's lax names
and signatures (``lax.add``, ``lax.dot_general``, ``lax.cond``, ...)."""

from plait_core.lax.calls import *  # noqa: F403
from plait_core.lax.collectives import *  # noqa: F403
from plait_core.lax.control_flow import *  # noqa: F403
from plait_core.lax.elementwise import *  # noqa: F403
from plait_core.lax.linalg import *  # noqa: F403
from plait_core.lax.reductions import *  # noqa: F403
from plait_core.lax.shapes import *  # noqa: F403
from plait_core.lax.structural import *  # noqa: F403
