"""lax functions of the control_flow family (being written)."""

__all__: list[str] = []
