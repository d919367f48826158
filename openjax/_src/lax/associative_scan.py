"""lax.associative_scan: parallel prefix scan written with slicing primitives."""

__all__: list[str] = []
