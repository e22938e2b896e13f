"""Converters from published trajectory formats into the unified dataset format."""
