"""Frontend: Python AST → untyped SSA IR."""

from .lower import function_ast, lower

__all__ = ["function_ast", "lower"]
