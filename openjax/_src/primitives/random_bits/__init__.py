"""Random-bit family: threefry2x32 and the key primitives."""
