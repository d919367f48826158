"""cond_p: lax.cond and lax.switch."""

__all__: list[str] = []
