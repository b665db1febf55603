"""A small helper for appending instructions to blocks while building or rewriting IR."""

from __future__ import annotations

from .nodes import Block, Edge, Function, Instr, Value
from .ops import Op

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any


class Builder:
    """Appends instructions at the end of the current block of `fn`."""

    def __init__(self, fn: Function):
        self.fn = fn
        self.block: Block | None = None
        self.line = 0

    def new_block(self, param_names: tuple[str, ...] = ()) -> Block:
        b = Block(len(self.fn.blocks), [self.fn.new_value(n) for n in param_names])
        self.fn.blocks.append(b)
        return b

    def at(self, block: Block) -> Builder:
        self.block = block
        return self

    @property
    def terminated(self) -> bool:
        return bool(self.block.instrs) and self.block.instrs[-1].op.is_terminator

    def emit(self, op: Op, args: list[Value] = (), attr: Any = None, name: str = "") -> Value | None:
        assert not self.terminated, "emitting after a terminator"
        result = self.fn.new_value(name) if op.has_result else None
        self.block.instrs.append(Instr(op, list(args), result, attr, self.line))
        return result

    def const(self, value: Any) -> Value:
        return self.emit(Op.CONST, (), value)

    def jump(self, target: Block, args: list[Value] = ()) -> None:
        self._term(Op.JUMP, [], [Edge(target, list(args))])

    def branch(self, cond: Value, then: Block, then_args: list[Value],
               other: Block, other_args: list[Value]) -> None:
        self._term(Op.BRANCH, [cond], [Edge(then, list(then_args)), Edge(other, list(other_args))])

    def ret(self, value: Value) -> None:
        self._term(Op.RETURN, [value], [])

    def raise_(self, exc: type, args: tuple) -> None:
        self._term(Op.RAISE, [], [], attr=(exc, args))

    def _term(self, op: Op, args: list[Value], targets: list[Edge], attr: Any = None) -> None:
        assert not self.terminated, "block already terminated"
        self.block.instrs.append(Instr(op, args, None, attr, self.line, targets))
