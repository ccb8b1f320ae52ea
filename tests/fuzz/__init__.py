"""plait's differential fuzzer.

Random JAX-style programs (``program.py``, ``generate.py``) run under every
transformation mode (``modes.py``) with plait and with an oracle: JAX 0.10.2 in
a separate interpreter (``jax_worker.py``) when ``PLAIT_FUZZ_JAX_PYTHON`` names
one, or a NumPy float64 execution of the same source otherwise
(``numpy_oracle.py``).  ``mask`` and ``vmap`` over piles are checked against
plait's own eager results on logical slices and element by element.  Failures
are shrunk (``shrink.py``) and written as standalone repro scripts.  The one
list of accepted deviations from JAX is ``deviations.py``.

``multidevice.py`` is the multi-device differential check: data-parallel
programs under ``shard_map``, ``pmap`` and ``jit`` with shardings on 8 CPU
devices against the same program on one device (``python -m fuzz.multidevice``).

Run ``python -m fuzz --help`` with ``tests/`` on ``PYTHONPATH`` (``nox -s fuzz``).
This package never imports JAX and plait in one process.
"""
