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

# isort: split
# Compositions of the above (they use plait.numpy and plait.scipy.special, which use the above), last.
from plait_core.lax.extras import *
from plait_core.lax.ragged import *

# isort: split
# JAX's ``lax.<name>_p`` primitive objects (libraries key their rule tables by them).
from plait_core.lax.primitive_names import __getattr__ as __getattr__
