"""conv_general_dilated_p: lax.conv_general_dilated and its wrappers."""

__all__: list[str] = []
