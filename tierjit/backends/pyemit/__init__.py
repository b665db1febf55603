"""Tier 0 backend: Python source generated from the IR."""

from .emit import compile_tier0, emit, range_len

__all__ = ["compile_tier0", "emit", "range_len"]
