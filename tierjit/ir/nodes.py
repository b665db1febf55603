"""IR nodes: SSA values, instructions, blocks with parameters, and functions.

The IR is a control-flow graph in SSA form with *block parameters* instead of phi nodes
(as in Cranelift and MLIR): a jump passes one argument per parameter of its target. That
makes a frame state — "block B, before instruction i, with these live values" — a plain list
of values, which is what deoptimisation hands back to tier 0.

Type facts hang off values (`Value.type`); the untyped IR leaves them None and type
inference fills them in on its own copy of the function.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError, dataclass, field

from .ops import Op

TYPE_CHECKING = False
if TYPE_CHECKING:                       # pragma: no cover - typing only
    from typing import Any

    from ..types.lattice import Type


@dataclass(slots=True, eq=False, repr=False)
class Value:
    """An SSA value: a block parameter or the result of one instruction."""

    id: int
    name: str = ""               # source variable it came from, for printing and messages
    type: Type | None = None     # filled in by type inference
    range: tuple[int, int] | None = None   # bounds of an int value (passes/ranges.py)

    def __repr__(self) -> str:
        return f"%{self.id}"


@dataclass(slots=True, eq=False)
class Edge:
    """A control-flow edge: the target block and one argument per target parameter."""

    block: Block
    args: list[Value]


@dataclass(slots=True, eq=False, repr=False)
class Instr:
    """One operation. Terminators (JUMP, BRANCH, RETURN, RAISE) carry their edges in targets."""

    op: Op
    args: list[Value]
    result: Value | None = None
    attr: Any = None             # op-specific static data (constant, callee, attribute name)
    line: int = 0                # source line, for messages and deopt events
    targets: list[Edge] = field(default_factory=list)
    # GETITEM/SETITEM: dimensions whose index a hoisted GUARD_INBOUNDS proved in bounds
    inbounds: frozenset = frozenset()

    def __repr__(self) -> str:
        return f"<{self.op.value} {self.args}>"


@dataclass(slots=True, eq=False, repr=False)
class Block:
    """A basic block: parameters, a non-empty list of instructions, a terminator last."""

    id: int
    params: list[Value] = field(default_factory=list)
    instrs: list[Instr] = field(default_factory=list)

    @property
    def terminator(self) -> Instr:
        return self.instrs[-1]

    @property
    def successors(self) -> list[Block]:
        return [e.block for e in self.terminator.targets]

    def __repr__(self) -> str:
        return f"b{self.id}"


@dataclass(slots=True, eq=False)
class Function:
    """A function in IR form. blocks[0] is the entry; its parameters are the arguments."""

    name: str
    arg_names: list[str]
    blocks: list[Block] = field(default_factory=list)
    first_line: int = 0
    filename: str = "<unknown>"
    next_value_id: int = 0
    # free name -> the object it named when lowered: what the IR baked in (frontend.resolve)
    free: dict[str, Any] = field(default_factory=dict)
    # (id of the module, attribute) -> (module, the object it named when lowered, the
    # attribute as written): the module attributes the IR baked in (`math.sqrt`, `cfg.N`)
    attrs: dict[tuple[int, str], tuple[Any, Any, str]] = field(default_factory=dict)
    # an OSR entry's copy (ir.osr), entered in the middle of a call: its arguments are the
    # loop's live values, not the function's (runtime/names.py checks calls, not these)
    osr: bool = False
    # the globals of the function's module (None: made from a source string): tier 0 warns
    # as the module does (backends/pyemit.compile_tier0)
    module_globals: dict[str, Any] | None = None

    @property
    def entry(self) -> Block:
        return self.blocks[0]

    def new_value(self, name: str = "") -> Value:
        v = Value(self.next_value_id, name)
        self.next_value_id += 1
        return v

    def values(self):
        """Every value defined in the function, parameters first within each block."""
        for b in self.blocks:
            yield from b.params
            for ins in b.instrs:
                if ins.result is not None:
                    yield ins.result


class FrameState:
    """Where tier 0 resumes when native code deoptimises: before instrs[index] of block,
    with `live` the values that code (and everything after it) still needs.

    Immutable and compared by value, as a frozen dataclass would be, but written out: that
    dataclass compiles six generated methods when its class is made (~1.5 ms here, a third
    of the IR's import and paid by every process's first compile; see types.lattice.Type)."""

    __slots__ = ("block", "index", "live")
    block: int
    index: int
    live: tuple[Value, ...]

    def __init__(self, block: int, index: int, live: tuple[Value, ...]) -> None:
        object.__setattr__(self, "block", block)
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "live", live)

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.block, self.index, self.live) == (other.block, other.index, other.live)

    def __hash__(self) -> int:
        return hash((self.block, self.index, self.live))

    def __repr__(self) -> str:
        return f"FrameState(block={self.block!r}, index={self.index!r}, live={self.live!r})"

    def __reduce__(self) -> tuple:
        return FrameState, (self.block, self.index, self.live)
