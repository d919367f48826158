"""while_p: lax.while_loop."""

__all__: list[str] = []
