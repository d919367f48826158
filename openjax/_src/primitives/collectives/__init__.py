"""Collective family: psum, pmax, all_gather, ppermute, ... and the
named-axis environment they read."""
