"""The lowering rules, one module per primitive family of core's catalog."""
