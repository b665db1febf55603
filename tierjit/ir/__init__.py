"""tierjit's IR: ops, nodes, a builder, a printer and a verifier (see docs/ir.md)."""

from .nodes import Block, Edge, FrameState, Function, Instr, Value
from .ops import Op

__all__ = ["Block", "Edge", "FrameState", "Function", "Instr", "Op", "Value"]
