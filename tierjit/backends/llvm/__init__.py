"""Optimising tier: typed IR → LLVM IR → native code through llvmlite."""

from .codegen import compile_native

__all__ = ["compile_native"]
