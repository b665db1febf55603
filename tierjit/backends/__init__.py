"""Backends: pyemit (tier 0), llvm (optimising tier)."""
