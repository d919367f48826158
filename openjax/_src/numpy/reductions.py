"""Placeholder: filled in by its owner."""
__all__ = []
