"""Readable text for IR functions (`f.inspect("ir")`, golden tests, verifier messages).

    func fib(n) @ line 3
    b0(%0 n: int):
        %1 = const 2                      ; line 4
        %2 = lt %0, %1                    ; line 4
        branch %2, b1(), b2()
"""

from __future__ import annotations

from .nodes import Block, Edge, Function, Instr, Value
from .ops import Op


def format_value(v: Value, with_type: bool = True) -> str:
    s = f"%{v.id}"
    if v.name:
        s += f" {v.name}"
    if with_type and v.type is not None:
        s += f": {v.type}"
    return s


def format_attr(attr) -> str:
    if isinstance(attr, tuple) and attr and isinstance(attr[0], type):
        exc, args = attr
        return f"{exc.__name__}{args!r}"
    if isinstance(attr, tuple):
        return ", ".join(format_attr(a) for a in attr if a is not None)
    name = getattr(attr, "__name__", None)
    if name is not None and not isinstance(attr, (int, float, complex, str)):
        return name
    return repr(attr)


def _edge(e: Edge) -> str:
    return f"b{e.block.id}({', '.join(repr(a) for a in e.args)})"


def format_instr(ins: Instr) -> str:
    parts = [ins.op.value]
    if ins.attr is not None or ins.op is Op.CONST:
        parts.append(format_attr(ins.attr))
    operands = [repr(a) for a in ins.args] + [_edge(e) for e in ins.targets]
    text = " ".join(parts)
    if operands:
        text += (", " if len(parts) > 1 else " ") + ", ".join(operands)
    if ins.result is not None:
        ty = f": {ins.result.type}" if ins.result.type is not None else ""
        text = f"%{ins.result.id}{ty} = {text}"
    return text


def format_block(b: Block) -> str:
    head = f"b{b.id}"
    if b.params:
        head += "(" + ", ".join(format_value(p) for p in b.params) + ")"
    lines = [head + ":"]
    for ins in b.instrs:
        body = format_instr(ins)
        lines.append(f"    {body:<44} ; line {ins.line}" if ins.line else f"    {body}")
    return "\n".join(lines)


def format_function(fn: Function) -> str:
    head = f"func {fn.name}({', '.join(fn.arg_names)}) @ line {fn.first_line}"
    return "\n".join([head] + [format_block(b) for b in fn.blocks]) + "\n"
