"""lax functions of the reductions family (being written)."""

__all__: list[str] = []
