"""Elementwise family: arithmetic, comparisons, bitwise ops, select_n,
clamp (``arithmetic``), transcendental functions and pow
(``transcendental``), special functions (``special``), their rule
builders and StableHLO lowerings."""
