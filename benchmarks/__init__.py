"""Side-by-side benchmarks of plait and (when importable) JAX 0.10.2."""
