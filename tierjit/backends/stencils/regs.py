"""Values in registers in loops: one int and one double slot per innermost loop, and the
result one stencil passes to the next.

Every value of baseline code lives in frame slots, so a value carried around a loop (a
counter, a sum) makes a store-to-load round trip through memory every iteration: some five
cycles on the loop's critical path where the LLVM tier's register takes one. So a chain of
stencils also passes registers along (templates.CHAIN): inside an innermost loop `%r` (an
i64) and `%d` (a double) each cache one slot, the int and the double parameter of the
loop's header that the loop computes from itself and uses most (a range counter, a sum).

The cache is written through: a stencil variant that writes a cached slot (`add_iu.Ar.Cr`:
A read from `%r`, C written to both) stores the slot too, so the frame always holds every
value. Frame states, deopts, calls into Python and every stencil without a variant keep
reading slots as before, and nothing is needed when control leaves the loop. What keeps the
registers right inside the loop (`apply`):

- every edge into the loop from outside (only to its header: a natural loop) loads them from
  their slots after its moves (`load_r`, `load_d`, `load_rd`);
- a stencil naming a cached slot becomes its variant when the library has one (templates'
  register_variants), for all those holes or for one register's; a cached slot it may
  write otherwise (its `writes` in the library) is loaded into its register again after it;
- a stencil that calls other code passes no cached value on (its `clobbers`:
  the registers need not be kept across the call), so both are loaded again after it.

In every loop block, `%ks` (an i64) and `%ke` (a double) also hold the slot the last `.Cs`
or `.Ce` variant wrote, for the stencils after it that read it as an operand (`.As`, `.De`):
mc_pi's `muladd_ii.Cs`, `mod_pow2.As.Cs`, `truediv_ifp.As.Ce`; nbody's `mul_rsub_ffn.Ce`,
`setitem1_f64_u_C.Ce` (the value an element is set to). That is forgotten where the slot is
written without the register, after a call and where control may arrive from elsewhere (a
block's start, a jump target); the slot being written too, nothing is loaded.

Guards and deopt stubs pass nothing on: a deopt reads the frame.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...ir.loops import natural_loops
from ...ir.nodes import Block
from . import frame as fr
from .emit import Label
from .templates import SMALL_HOLES, variant_suffix


@dataclass(slots=True, eq=False, repr=False)
class Cached:
    """The slots cached in registers in one loop (None: that register caches nothing)."""

    r: int | None
    d: int | None

    def loads(self) -> tuple[str, dict]:
        """The piece that loads the registers from their slots."""
        if self.r is not None and self.d is not None:
            return "load_rd", {"A": self.r, "B": self.d}
        if self.r is not None:
            return "load_r", {"A": self.r}
        return "load_d", {"A": self.d}


def plan(sel) -> tuple[dict[Block, Cached], set[Block]]:
    """Block -> what its innermost loop caches, for the loops worth it, and the blocks in
    loops. A loop caches the parameter of its header of one int slot, and the one of one
    double slot (a float | np.float64's double), used most (sel.uses) among those the loop
    computes from themselves (a counter, a sum: see _recurrence); not in a loop headed by
    the function's entry block (the prologue enters that, loading nothing)."""
    fn = sel.fn
    loops = natural_loops(fn, sel.dom, sel.preds)
    offset, uses = sel.offset, sel.uses
    out: dict[Block, Cached] = {}
    for h, body in loops.items():
        if h is fn.entry or any(g is not h and g in body for g in loops):
            continue                                    # not innermost
        back = [e.args for b in sel.preds[h] if b in body
                for e in b.instrs[-1].targets if e.block is h]
        best: dict[str, tuple[int, int]] = {}           # register -> (uses, slot)
        for k, p in enumerate(h.params):
            sk = fr.slots(p.type)
            if sk == ("i",):
                reg = "r"
            elif sk == ("f",) or sk == ("f", "t"):
                reg = "d"
            else:
                continue
            n = uses.get(p, 0)
            if n > best.get(reg, (0, 0))[0] and back and \
                    all(_recurrence(sel, p, args[k]) for args in back):
                best[reg] = (n, offset[p])
        if best:
            c = Cached(best.get("r", (0, None))[1], best.get("d", (0, None))[1])
            for b in body:
                out[b] = c
    return out, set().union(*loops.values())


def _recurrence(sel, p, v) -> bool:
    """Whether v, passed to parameter p by a back edge, is computed from p by its own
    instruction or by one of that instruction's operands (`s + a[i] * b[i]`, whose
    multiply-add stencil reads s): a value the loop carries in a chain of operations that
    its register shortens. Not one moved in from another chain (mandelbrot's `zr = t`),
    whose register no stencil would read."""
    return v is not p and _computed_from(sel, v, p, 2)


def _computed_from(sel, v, p, depth: int) -> bool:
    try:
        blk, i = sel.defined_at(v)
    except KeyError:                    # a block parameter
        return False
    args = blk.instrs[i].args
    return any(a is p for a in args) or \
        depth > 1 and any(_computed_from(sel, a, p, depth - 1) for a in args)


def enters(cache: dict[Block, Cached], src: Block, target: Block) -> Cached | None:
    """What an edge src -> target must load: target's loop's registers, when the edge comes
    from outside that loop."""
    c = cache.get(target)
    if c is None or cache.get(src) is c:
        return None
    return c


_OPERANDS = frozenset(("A", "B", "D", "TA", "TC"))       # TA, TC: an element's index
_OPERANDS_C = _OPERANDS | {"C"}
_SMALL = frozenset(SMALL_HOLES)


def apply(sel, order: list[Block]) -> None:
    """Choose the register variant of every piece in a loop: the loop's cached slots (with
    loads after the stencils that may leave one stale), and the value passed from one
    stencil to the next in %ks or %ke; renumber the pieces (block labels, labels in holes)
    when loads were inserted."""
    cache, stencils, pieces = sel.cache, sel.stencils, sel.pieces
    # where control may arrive other than from the piece before: %ks and %ke hold nothing known
    targets = set(sel.block_label.values())
    targets.update(v for _n, holes in pieces for v in holes.values() if type(v) is Label)
    block_of = sorted(((sel.block_label[b], b) for b in order), key=lambda t: t[0])
    bounds = [s for s, _ in block_of] + [len(pieces)]
    loads: dict[int, tuple[str, dict]] = {}      # piece -> the load after it
    for k, (start, b) in enumerate(block_of):
        if b not in sel.in_loops:
            continue
        c = cache.get(b)
        r, d = (c.r, c.d) if c is not None else (None, None)
        ks = ke = None                      # the slot %ks, %ke holds
        for i in range(start, bounds[k + 1]):
            if i in targets:
                ks = ke = None
            name, holes = pieces[i]
            if name.startswith("load_"):
                continue                # (an edge's loads into another loop are its own)
            st = stencils[name]
            if st.clobbers:
                if c is not None:
                    loads[i] = c.loads()
                ks = ke = None
                continue
            written = st.writes                     # None: not known, so any
            # (C is the value a stencil that does not write it reads: setitem's)
            operands = _OPERANDS if written is None or "C" in written else _OPERANDS_C
            pin, dyn = {}, {}
            for h, v in holes.items():
                if v is None or h not in _SMALL:
                    continue
                if v == r:
                    pin[h] = "r"
                elif v == d:
                    pin[h] = "d"
                elif h in operands:
                    if v == ks:
                        dyn[h] = "s"
                    elif v == ke:
                        dyn[h] = "e"
            result = "C" in holes and "C" not in pin and (written is None or "C" in written)
            if not (pin or dyn or result):
                continue
            use, vname = _variant(name, pin, dyn, result, stencils)
            if use:
                pieces[i] = (vname, holes)
            stale = {reg for h, reg in pin.items()
                     if h not in use and (written is None or h in written)}
            if stale:
                loads[i] = Cached(r if "r" in stale else None,
                                  d if "d" in stale else None).loads()
            if ks is not None or ke is not None:
                for h in SMALL_HOLES if written is None else written:
                    v = holes.get(h)
                    if v is None:
                        continue
                    if v == ks and use.get(h) != "s":
                        ks = None
                    if v == ke and use.get(h) != "e":
                        ke = None
            reg = use.get("C")
            if reg == "s":
                ks = holes["C"]
            elif reg == "e":
                ke = holes["C"]
    if loads:
        _insert(sel, loads)


def _insert(sel, loads: dict[int, tuple[str, dict]]) -> None:
    """Put each load after its piece, and number the pieces again (block labels, labels in
    holes)."""
    pieces = sel.pieces
    new: list[tuple[str, dict]] = []
    remap: list[int] = []
    for i, piece in enumerate(pieces):
        remap.append(len(new))
        new.append(piece)
        if i in loads:
            new.append(loads[i])
    remap.append(len(new))
    done: set[int] = set()
    for _name, holes in new:
        if id(holes) in done:
            continue
        done.add(id(holes))
        for h, v in holes.items():
            if type(v) is Label:
                holes[h] = Label(remap[v])
    sel.block_label = {b: remap[i] for b, i in sel.block_label.items()}
    pieces[:] = new


# (the library's stencils, {(name, pin, dyn, result): _variant's answer}): the same few
# questions come back in every loop of every compile, and each costs up to nine names built
# and looked up
_chosen: tuple[object, dict] = (None, {})


def _variant(name: str, pin: dict[str, str], dyn: dict[str, str], result: bool,
             stencils) -> tuple[dict[str, str], str]:
    """The register variant of stencil `name` to use, and its name: for the holes naming the
    loop's cached slots (pin), those reading the value %ks or %ke holds (dyn) and its result
    in %ks or %ke (when `result`), or for as many of these as the library has a variant for;
    ({}, name) for the stencil itself."""
    global _chosen
    lib, chosen = _chosen
    if lib is not stencils:
        chosen = {}
        _chosen = (stencils, chosen)
    key = (name, *pin.items(), "|", *dyn.items(), result)
    answer = chosen.get(key)
    if answer is None:
        answer = chosen[key] = _choose(name, pin, dyn, result, stencils)
    return answer


def _choose(name: str, pin: dict[str, str], dyn: dict[str, str], result: bool,
            stencils) -> tuple[dict[str, str], str]:
    outs = ({"C": "s"}, {"C": "e"}) if result else ({},)
    for use in (*(pin | dyn | w for w in outs), pin | dyn, *(pin | w for w in outs),
                *(dyn | w for w in outs), pin, dyn, *outs):
        if use and (vname := f"{name}.{variant_suffix(use)}") in stencils:
            return use, vname
    return {}, name
