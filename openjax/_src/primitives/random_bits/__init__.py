"""Random-bit family, on ``base``: threefry2x32 and the key primitives
(``random_bits``); the samplers' loops are in control/."""
