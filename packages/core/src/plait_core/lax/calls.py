"""lax functions of the calls family (being written)."""

__all__: list[str] = []
