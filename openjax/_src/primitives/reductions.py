"""Placeholder: filled in by its family owner."""
__all__ = []
