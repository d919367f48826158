"""scan_p: lax.scan, lax.map and lax.fori_loop."""

__all__: list[str] = []
