"""Self-recursive cores: levels of the recursion inlined into every call, as gcc does for fib.

A core that calls itself gets always-inlined *twins*, copies of its body: the core calls
twin1, twin1 calls twin2, and the last twin calls the core back, so LLVM inlines two levels of
the recursion into each native frame (one for a larger core: the code doubles with each).

The last level's calls then go through a *peel*: the core's side-effect-free prefix, from its
first block up to the first block that does anything else, with each such block replaced by a
call of the core that returns what the core returns. Inlined at the call site, it answers a
recursion's base case (`if n < 2: return n`) without a native frame; a call past the base case
enters the core with the same arguments, which recomputes that prefix. Nothing the prefix
does can be observed (no call, load, store or division; overflow intrinsics only feed
branches), so computing it twice is invisible. Analogue: LLVM's partial inliner, which skips
recursive functions.
"""

from __future__ import annotations

import re

SMALL_CORE_LINES = 240

_LABEL = re.compile(r"^([\w.]+):$")
# DeoptOps.poll_ticked's read of the ticker's flag, and its poll (up to the label after it)
_POLL = re.compile(r"\nticked\d+:\n.*?\nunticked\d+:\n", re.S)
_TICK = re.compile(r"load atomic i32, ptr inttoptr \(i64 \d+ to ptr\) monotonic, align 4")
_NAME = re.compile(r"%[\w.]+")
# instructions that neither have an effect nor can trap (see the module docstring)
_PURE = re.compile(
    r"^\s+(?:%[\w.]+ = (?:icmp|fcmp|add|sub|mul|and|or|xor|shl|lshr|ashr|fadd|fsub|fmul|fdiv|"
    r"fneg|select|extractvalue|insertvalue|zext|sext|trunc|sitofp|uitofp|bitcast|freeze|phi)\b"
    r"|%[\w.]+ = call [^@]*@llvm\.(?:[su](?:add|sub|mul)\.with\.overflow|fabs|copysign|smax|"
    r"smin|umax|umin|abs)\.|br |ret )")


def unroll_recursion(core: str, name: str) -> str:
    """The core's text with its twins (and peel) added; `name` is the core's LLVM name."""
    head, body = core.split("\n", 1)
    poll = _POLL.search(body)           # cold code: not counted in the core's size
    size = body.count("\n") - (poll.group().count("\n") if poll else 0)
    levels = 2 if size <= SMALL_CORE_LINES else 1
    peel = _peel(head, body, name)
    # a call to a twin, inlined, makes no native frame: it passes the caller's depth word
    # (backends/nesting.py), so the twin's test of it folds away; a call to the peel passes
    # the next depth, which the peel passes on to the core
    to_twin = re.compile(rf"(@{name}_twin\d+\([^\n]*), i64 %depth\.next\)")

    def calling(text: str, callee: str) -> str:
        return to_twin.sub(r"\1, i64 %depth)", text.replace(f"@{name}(", callee))

    out = head + "\n" + calling(body, f"@{name}_twin1(")
    # a twin, inlined into a core's native frame, leaves the ticker's flag to the core's
    # entry: one test per native frame (an atomic load stays, used or not)
    twin = _TICK.sub("add i32 0, 0", body)
    for level in range(1, levels + 1):
        callee = f"{name}_twin{level + 1}" if level < levels else f"{name}_peel" if peel else name
        out += ("\n" + _internal(head, name, f"{name}_twin{level}") + "\n"
                + calling(twin, f"@{callee}("))
    if peel:
        out += "\n" + _internal(head, name, f"{name}_peel") + "\n" + peel
    return out


def _internal(head: str, name: str, copy: str) -> str:
    """The core's `define` line for an always-inlined copy of it."""
    head = head.replace(f"@{name}(", f"@{copy}(").replace("define ", "define internal ", 1)
    return head[:-2] + " alwaysinline {"


def _peel(head: str, body: str, name: str) -> str | None:
    """The peel's body (module docstring), or None when the core has no base case to answer
    in place: no return in its pure prefix, no call after it, or a loop within it."""
    blocks: dict[str, list[str]] = {}
    order: list[str] = []
    for line in body[:body.rindex("\n}\n")].splitlines():
        m = _LABEL.match(line)
        if m:
            order.append(m.group(1))
            blocks[m.group(1)] = []
        elif order:
            blocks[order[-1]].append(line)
    if "b0" not in blocks:
        return None
    if any(" = phi " in line for line in blocks["b0"]):
        return None                 # entered from the core's entry block
    params = head[head.index("(") + 1:head.rindex(")")]
    pair = head[len("define "):head.index(" @")]
    region, stubs, stack = [], [], ["b0"]
    while stack:
        label = stack.pop()
        if label in region or label in stubs:
            continue
        lines = blocks.get(label)
        if lines is None or not all(_PURE.match(x) for x in lines):
            stubs.append(label)
            continue
        region.append(label)
        stack += reversed(re.findall(r"label %([\w.]+)", lines[-1]))
    rank = {label: i for i, label in enumerate(order)}
    ret = any(blocks[b][-1].lstrip().startswith("ret ") for b in region)
    if not ret or not stubs or any(
            rank[t] <= rank[b] for b in region
            for t in re.findall(r"label %([\w.]+)", blocks[b][-1]) if t in region):
        return None
    defined = {p.split()[-1] for p in params.split(", ")}
    used: set[str] = set()
    out = ["entry:", "  br label %b0"]
    for b in sorted(region, key=rank.__getitem__):
        out.append(f"{b}:")
        for line in blocks[b]:
            if " = phi " in line:
                line = _phi_from(line, region)
            if " = " in line:
                defined.add(line.split(" = ", 1)[0].strip())
            used.update(_operands(line))
            out.append(line)
    if not used <= defined:
        return None                 # the prefix uses a value the core's entry block made
    for i, s in enumerate(stubs):
        out += [f"{s}:", f"  %peel{i} = call {pair} @{name}({params})", f"  ret {pair} %peel{i}"]
    return "\n".join(out) + "\n}\n"


def _operands(line: str) -> list[str]:
    """The values an instruction line uses (not the labels it names)."""
    rhs = line.split(" = ", 1)[-1]
    if rhs.startswith("phi "):
        rhs = " ".join(e.rsplit(", %", 1)[0] for e in re.findall(r"\[([^\[\]]+)\]", rhs))
    return _NAME.findall(re.sub(r"label %[\w.]+", "", rhs))


def _phi_from(line: str, region: list[str]) -> str:
    """A phi with only the incoming values of blocks in the region."""
    lhs, rest = line.split(" = phi ", 1)
    ty, _, entries = rest.partition(" [")
    kept = [e for e in re.findall(r"\[([^\[\]]+)\]", "[" + entries)
            if e.rsplit(", %", 1)[1] in region]
    return f"{lhs} = phi {ty} " + ", ".join(f"[{e}]" for e in kept)

