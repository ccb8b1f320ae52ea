"""``plait.lax``: thin, typed wrappers over the primitives, with JAX's lax names
and signatures (``lax.add``, ``lax.dot_general``, ``lax.cond``, ...)."""

from plait_core.lax.associative import *
from plait_core.lax.barrier import *
from plait_core.lax.calls import *
from plait_core.lax.collectives import *
from plait_core.lax.complex_numbers import *
from plait_core.lax.control_flow import *
from plait_core.lax.convolution import *
from plait_core.lax.elementwise import *
from plait_core.lax.fft import *
from plait_core.lax.linalg import *
from plait_core.lax.reductions import *
from plait_core.lax.shapes import *
from plait_core.lax.sharding import *
from plait_core.lax.solves import *
from plait_core.lax.structural import *
from plait_core.lax.windowed import *

# The compositions JAX also has in lax (full_like, tile, the special functions, ragged_dot, ...)
# are built on plait.numpy and plait.scipy: plait_core.lax_compositions adds them to this
# namespace when plait_core is imported.

# isort: split
# JAX's ``lax.<name>_p`` primitive objects (libraries key their rule tables by them).
from plait_core.lax.primitive_names import __getattr__ as __getattr__
