"""Tier 0 backend: Python source generated from the IR."""

from .emit import NOT_READY, OsrHook, compile_tier0, emit, range_len

__all__ = ["NOT_READY", "OsrHook", "compile_tier0", "emit", "range_len"]
