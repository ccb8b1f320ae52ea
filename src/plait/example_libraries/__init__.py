"""JAX's example libraries on plait: ``stax`` (neural-network layers as
``(init_fun, apply_fun)`` pairs) and ``optimizers`` (first-order optimizers as
``(init_fun, update_fun, get_params)`` triples), with JAX 0.10.2's semantics."""

from plait.example_libraries import optimizers, stax

__all__ = ["optimizers", "stax"]
