"""lax functions of the structural family (being written)."""

__all__: list[str] = []
