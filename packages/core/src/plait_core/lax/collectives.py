"""lax functions of the collectives family (being written)."""

__all__: list[str] = []
