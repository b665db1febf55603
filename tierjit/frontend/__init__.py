"""Frontend: Python AST → untyped SSA IR."""

from .lower import lower
from .source import function_ast

__all__ = ["function_ast", "lower"]
