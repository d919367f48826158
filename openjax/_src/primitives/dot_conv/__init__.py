"""Contraction family: dot_general (``dot``) and
conv_general_dilated (``conv``)."""
