"""Primitives of the ad_helpers family (being written)."""
