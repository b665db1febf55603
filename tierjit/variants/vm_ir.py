"""LLVM IR text of the register-machine evaluator: one function per (dtype, vector width).

Analogue: the inner loop of DynamicExpressions.jl or Operon's interpreter — a switch over
instructions where each case is a SIMD loop over a block of rows — written straight as LLVM IR
and compiled once per process with `engine.compile_ir`.

    run(code, values, starts, outreg, cols, n_inputs, n_rows, col_stride, y, mode, out,
        out_stride, scratch, block, zeros, n_regs, counter, n_prog, chunk, live)

Each calling thread claims `chunk` programs at a time from the shared `counter` (an atomic
fetch-and-add), so any number of threads can run the same call; the GIL is released by the
ctypes call around it. Before running a program, a backward liveness pass over its
instructions (a bit per register, when n_regs <= 64) lists the instructions whose results can
reach the output register into `live` (one int32 per instruction, per thread): dead code —
typically a third to a half of a random linear-GP program — is never executed, which changes
no result because no instruction has a side effect. For one program and one block of rows,
register i is a *pointer* to
`block` values: initially the input column i (i < n_inputs) or a block of zeros, and after an
instruction writes it, the register's own block of `scratch`. So inputs are never copied and
registers never written cost nothing. Instructions (see encoding.Op):

    CONST d   <- values[s]   (rounded to the element type)
    ADD/SUB/MUL/DIV d <- a op b     COPY d <- a     NEG d <- -a

Plain IEEE operations without fast-math flags, so every element is bit for bit what NumPy
computes op at a time (no fused multiply-add, no reassociation). `mode` 0 stores the output
register of every row to out[p, :] (masked stores: out rows are exactly n_rows long); 1 keeps
the largest finite value (-inf if none); 2 sums, 3 sums (r - y)**2 and divides by n_rows —
sums in float64, in an order that does not depend on the vector width (which depends on the
CPU): row k is added to running sum k mod SUM_LANES, and the SUM_LANES sums are added in order
at the end, so every machine of a cluster gives the same bits (reference.reduce_rows adds in
the same order).

Memory contract (checked by vm.py): live holds the longest program's length; cols and y hold at
least ceil(n_rows / W) * W elements per column (padding lanes are computed and ignored); block
is a multiple of W; scratch holds n_regs * block elements; zeros holds block zeros; every
register index is < n_regs.
"""

from __future__ import annotations

ELEMENT = {"float64": ("double", 8), "float32": ("float", 4)}
MODES = {None: 0, "max": 1, "sum": 2, "mse": 3}
SUM_LANES = 16      # the running sums of "sum" and "mse": a multiple of every vector width


def symbol(dtype: str, lanes: int) -> str:
    return f"tierjit_variants_vm_{dtype}_x{lanes}"


def module_ir(dtype: str, lanes: int) -> str:
    """The evaluator module for `dtype` ("float32"/"float64") with vectors of `lanes` elements."""
    t, size = ELEMENT[dtype]
    w = lanes
    assert SUM_LANES % w == 0, lanes
    vt = f"<{w} x {t}>"
    vd = f"<{w} x double>"
    vi = f"<{w} x i64>"
    sfx = f"v{w}f{size * 8}"
    iota = "<" + ", ".join(f"i64 {k}" for k in range(w)) + ">"
    ninf = "0xFFF0000000000000"
    pinf = "0x7FF0000000000000"
    splat_ninf = "<" + ", ".join(f"{t} {ninf}" for _ in range(w)) + ">"
    splat_pinf = "<" + ", ".join(f"{t} {pinf}" for _ in range(w)) + ">"
    ib = size * 8                                   # the element's bits, as an integer
    vb = f"<{w} x i{ib}>"
    splat_negzero = "<" + ", ".join(f"i{ib} {-(1 << (ib - 1))}" for _ in range(w)) + ">"
    ext = (lambda dst, src: f"  {dst} = fpext {vt} {src} to {vd}") if t == "float" else \
        (lambda dst, src: f"  {dst} = fadd {vd} {src}, zeroinitializer")
    lines: list[str] = []
    emit = lines.append

    def counted_loop(tag: str, body: list[str], after: str) -> None:
        """for v in range(nvec): body (which may use %v.<tag> and %vp.<tag>, the vector
        offset); then branch to `after`."""
        emit(f"k.{tag}:")
        emit(f"  br label %k.{tag}.head")
        emit(f"k.{tag}.head:")
        emit(f"  %v.{tag} = load i64, ptr %v.a")
        emit(f"  %more.{tag} = icmp slt i64 %v.{tag}, %nvec")
        emit(f"  br i1 %more.{tag}, label %k.{tag}.body, label %{after}")
        emit(f"k.{tag}.body:")
        lines.extend(body)
        emit(f"  %vn.{tag} = add i64 %v.{tag}, 1")
        emit(f"  store i64 %vn.{tag}, ptr %v.a")
        emit(f"  br label %k.{tag}.head")

    def load(dst: str, base: str, tag: str) -> str:
        return (f"  {dst}.p = getelementptr {vt}, ptr {base}, i64 %v.{tag}\n"
                f"  {dst} = load {vt}, ptr {dst}.p, align {size}")

    def store(val: str, base: str, tag: str) -> str:
        return (f"  %st.{tag}.p = getelementptr {vt}, ptr {base}, i64 %v.{tag}\n"
                f"  store {vt} {val}, ptr %st.{tag}.p, align {size}")

    def lane_mask(tag: str) -> list[str]:
        return [f"  %base.{tag} = mul i64 %v.{tag}, {w}",
                f"  %bi.{tag} = insertelement {vi} poison, i64 %base.{tag}, i32 0",
                (f"  %bs.{tag} = shufflevector {vi} %bi.{tag}, {vi} poison, "
                f"<{w} x i32> zeroinitializer"),
                f"  %idx.{tag} = add {vi} %bs.{tag}, {iota}",
                f"  %mask.{tag} = icmp slt {vi} %idx.{tag}, %nbs"]

    def sum_lanes(tag: str) -> list[str]:
        """%accp.<tag>: the running sums of the vector's rows (after lane_mask: %base.<tag>)."""
        return [f"  %row.{tag} = add i64 %r0, %base.{tag}",
                f"  %lane.{tag} = and i64 %row.{tag}, {SUM_LANES - 1}",
                f"  %accp.{tag} = getelementptr double, ptr %accd.a, i64 %lane.{tag}"]

    name = symbol(dtype, lanes)
    emit(f"declare {vt} @llvm.fabs.{sfx}({vt})")
    emit(f"declare {t} @llvm.vector.reduce.fmax.{sfx}({vt})")
    emit(f"declare i1 @llvm.vector.reduce.or.v{w}i1(<{w} x i1>)")
    emit(f"declare double @llvm.vector.reduce.fadd.v{SUM_LANES}f64(double, "
         f"<{SUM_LANES} x double>)")
    emit(f"declare void @llvm.masked.store.{sfx}.p0({vt}, ptr, i32, <{w} x i1>)")
    emit("")
    emit(f"define void @{name}(ptr %code, ptr %values, ptr %starts, ptr %outreg, ptr %cols, "
         "i64 %n_inputs, i64 %n_rows, i64 %col_stride, ptr %y, i64 %mode, ptr %out, "
         "i64 %out_stride, ptr %scratch, i64 %block, ptr %zeros, i64 %n_regs, ptr %counter, "
         "i64 %n_prog, i64 %chunk, ptr %live) #0 {")
    emit("entry:")
    emit("  %rp = alloca ptr, i64 %n_regs, align 8")
    for var in ("p", "pend", "r0", "j", "v", "i", "cnt", "ds", "mask"):
        emit(f"  %{var}.a = alloca i64, align 8")
    emit(f"  %acct.a = alloca {vt}, align 64")
    emit(f"  %accd.a = alloca <{SUM_LANES} x double>, align 64")
    emit(f"  %bytes = mul i64 %block, {size}")
    emit("  br label %claim")
    # -- claim a chunk of programs
    emit("claim:")
    emit("  %p0 = atomicrmw add ptr %counter, i64 %chunk monotonic, align 8")
    emit("  %done = icmp sge i64 %p0, %n_prog")
    emit("  br i1 %done, label %exit, label %claimed")
    emit("claimed:")
    emit("  %p1x = add i64 %p0, %chunk")
    emit("  %p1lt = icmp slt i64 %p1x, %n_prog")
    emit("  %p1 = select i1 %p1lt, i64 %p1x, i64 %n_prog")
    emit("  store i64 %p1, ptr %pend.a")
    emit("  store i64 %p0, ptr %p.a")
    emit("  br label %prog.head")
    # -- one program
    emit("prog.head:")
    emit("  %p = load i64, ptr %p.a")
    emit("  %pend = load i64, ptr %pend.a")
    emit("  %pmore = icmp slt i64 %p, %pend")
    emit("  br i1 %pmore, label %prog.body, label %claim")
    emit("prog.body:")
    emit("  %sp0 = getelementptr i64, ptr %starts, i64 %p")
    emit("  %s0 = load i64, ptr %sp0")
    emit("  %sp1 = getelementptr i64, ptr %sp0, i64 1")
    emit("  %s1 = load i64, ptr %sp1")
    emit("  %opp = getelementptr i32, ptr %outreg, i64 %p")
    emit("  %o32 = load i32, ptr %opp")
    emit("  %o = sext i32 %o32 to i64")
    emit(f"  store {vt} {splat_ninf}, ptr %acct.a")
    emit(f"  store <{SUM_LANES} x double> zeroinitializer, ptr %accd.a")
    # -- live instructions, last first, into %live (dead code: writes nobody reads later)
    emit("  store i64 0, ptr %cnt.a")
    emit("  store i64 %s1, ptr %ds.a")
    emit("  %odce = shl i64 1, %o")
    emit("  store i64 %odce, ptr %mask.a")
    emit("  %dce = icmp sle i64 %n_regs, 64")
    emit("  br label %dce.head")
    emit("dce.head:")
    emit("  %ds = load i64, ptr %ds.a")
    emit("  %dsmore = icmp sgt i64 %ds, %s0")
    emit("  br i1 %dsmore, label %dce.body, label %prog.run")
    emit("dce.body:")
    emit("  %dsm = sub i64 %ds, 1")
    emit("  store i64 %dsm, ptr %ds.a")
    emit("  br i1 %dce, label %dce.test, label %dce.keep")
    emit("dce.test:")
    emit("  %dcp = getelementptr <4 x i32>, ptr %code, i64 %dsm")
    emit("  %dins = load <4 x i32>, ptr %dcp, align 4")
    for k, r in ((0, "op"), (1, "d"), (2, "a"), (3, "b")):
        emit(f"  %dx{r}32 = extractelement <4 x i32> %dins, i32 {k}")
        emit(f"  %dx{r} = zext i32 %dx{r}32 to i64")
    emit("  %dbit = shl i64 1, %dxd")
    emit("  %dmask = load i64, ptr %mask.a")
    emit("  %dhit = and i64 %dmask, %dbit")
    emit("  %dlive = icmp ne i64 %dhit, 0")
    emit("  br i1 %dlive, label %dce.use, label %dce.head")
    emit("dce.use:")
    emit("  %dnot = xor i64 %dbit, -1")
    emit("  %dm1 = and i64 %dmask, %dnot")
    emit("  %dabit = shl i64 1, %dxa")
    emit("  %dbbit = shl i64 1, %dxb")
    emit("  %dop1 = sub i64 %dxop, 1")
    emit("  %disbin = icmp ult i64 %dop1, 4")
    emit("  %dop5 = sub i64 %dxop, 5")
    emit("  %disun = icmp ult i64 %dop5, 2")
    emit("  %dreads = or i1 %disbin, %disun")
    emit("  %dua = select i1 %dreads, i64 %dabit, i64 0")
    emit("  %dub = select i1 %disbin, i64 %dbbit, i64 0")
    emit("  %dm2 = or i64 %dm1, %dua")
    emit("  %dm3 = or i64 %dm2, %dub")
    emit("  store i64 %dm3, ptr %mask.a")
    emit("  br label %dce.keep")
    emit("dce.keep:")
    emit("  %dcnt = load i64, ptr %cnt.a")
    emit("  %dlp = getelementptr i32, ptr %live, i64 %dcnt")
    emit("  %dsm32 = trunc i64 %dsm to i32")
    emit("  store i32 %dsm32, ptr %dlp")
    emit("  %dcnt1 = add i64 %dcnt, 1")
    emit("  store i64 %dcnt1, ptr %cnt.a")
    emit("  br label %dce.head")
    emit("prog.run:")
    emit("  %nlive = load i64, ptr %cnt.a")
    emit("  store i64 0, ptr %r0.a")
    emit("  br label %blk.head")
    # -- one block of rows
    emit("blk.head:")
    emit("  %r0 = load i64, ptr %r0.a")
    emit("  %bmore = icmp slt i64 %r0, %n_rows")
    emit("  br i1 %bmore, label %blk.body, label %prog.end")
    emit("blk.body:")
    emit("  %left = sub i64 %n_rows, %r0")
    emit("  %short = icmp slt i64 %left, %block")
    emit("  %nb = select i1 %short, i64 %left, i64 %block")
    emit(f"  %nbw = add i64 %nb, {w - 1}")
    emit(f"  %nvec = udiv i64 %nbw, {w}")
    emit(f"  %nbi = insertelement {vi} poison, i64 %nb, i32 0")
    emit(f"  %nbs = shufflevector {vi} %nbi, {vi} poison, <{w} x i32> zeroinitializer")
    emit("  store i64 0, ptr %i.a")
    emit("  br label %rp.head")
    emit("rp.head:")
    emit("  %i = load i64, ptr %i.a")
    emit("  %imore = icmp slt i64 %i, %n_regs")
    emit("  br i1 %imore, label %rp.body, label %rp.done")
    emit("rp.body:")
    emit("  %isin = icmp slt i64 %i, %n_inputs")
    emit("  %coff = mul i64 %i, %col_stride")
    emit("  %coff2 = add i64 %coff, %r0")
    emit(f"  %cptr = getelementptr {t}, ptr %cols, i64 %coff2")
    emit("  %rinit = select i1 %isin, ptr %cptr, ptr %zeros")
    emit("  %rslot = getelementptr ptr, ptr %rp, i64 %i")
    emit("  store ptr %rinit, ptr %rslot")
    emit("  %inext = add i64 %i, 1")
    emit("  store i64 %inext, ptr %i.a")
    emit("  br label %rp.head")
    emit("rp.done:")
    emit("  store i64 %nlive, ptr %j.a")
    emit("  br label %ins.head")
    # -- one live instruction over the block
    emit("ins.head:")
    emit("  %j = load i64, ptr %j.a")
    emit("  %jmore = icmp sgt i64 %j, 0")
    emit("  br i1 %jmore, label %ins.body, label %ins.done")
    emit("ins.body:")
    emit("  %jm = sub i64 %j, 1")
    emit("  %lp = getelementptr i32, ptr %live, i64 %jm")
    emit("  %s32 = load i32, ptr %lp")
    emit("  %s = sext i32 %s32 to i64")
    emit("  %cp = getelementptr <4 x i32>, ptr %code, i64 %s")
    emit("  %ins = load <4 x i32>, ptr %cp, align 4")
    emit("  %op = extractelement <4 x i32> %ins, i32 0")
    for k, r in ((1, "d"), (2, "a"), (3, "b")):
        emit(f"  %{r}32 = extractelement <4 x i32> %ins, i32 {k}")
        emit(f"  %{r} = sext i32 %{r}32 to i64")
    emit("  %doff = mul i64 %d, %bytes")
    emit("  %dp = getelementptr i8, ptr %scratch, i64 %doff")
    emit("  %pas = getelementptr ptr, ptr %rp, i64 %a")
    emit("  %pa = load ptr, ptr %pas")
    emit("  %pbs = getelementptr ptr, ptr %rp, i64 %b")
    emit("  %pb = load ptr, ptr %pbs")
    emit("  store i64 0, ptr %v.a")
    emit("  switch i32 %op, label %ins.next [ i32 0, label %k.const i32 1, label %k.add "
         "i32 2, label %k.sub i32 3, label %k.mul i32 4, label %k.div i32 5, label %k.copy "
         "i32 6, label %k.neg ]")
    # CONST: splat values[s] (rounded to the element type)
    const_body = [
        "  %cvp = getelementptr double, ptr %values, i64 %s",
        "  %cv = load double, ptr %cvp",
    ]
    if t == "float":
        const_body.append("  %cvt = fptrunc double %cv to float")
    else:
        # x + -0.0 is x for every x; x + 0.0 would turn a constant -0.0 into 0.0
        const_body.append("  %cvt = fadd double %cv, -0.0")
    const_body += [
        f"  %cvi = insertelement {vt} poison, {t} %cvt, i32 0",
        f"  %cvs = shufflevector {vt} %cvi, {vt} poison, <{w} x i32> zeroinitializer",
        store("%cvs", "%dp", "const"),
    ]
    counted_loop("const", const_body, "ins.next")
    for tag, inst in (("add", "fadd"), ("sub", "fsub"), ("mul", "fmul"), ("div", "fdiv")):
        counted_loop(tag, [load(f"%x.{tag}", "%pa", tag), load(f"%y.{tag}", "%pb", tag),
                           f"  %z.{tag} = {inst} {vt} %x.{tag}, %y.{tag}",
                           store(f"%z.{tag}", "%dp", tag)], "ins.next")
    counted_loop("copy", [load("%x.copy", "%pa", "copy"), store("%x.copy", "%dp", "copy")],
                 "ins.next")
    counted_loop("neg", [load("%x.neg", "%pa", "neg"), f"  %z.neg = fneg {vt} %x.neg",
                         store("%z.neg", "%dp", "neg")], "ins.next")
    emit("ins.next:")
    emit("  %dslot = getelementptr ptr, ptr %rp, i64 %d")
    emit("  store ptr %dp, ptr %dslot")
    emit("  store i64 %jm, ptr %j.a")
    emit("  br label %ins.head")
    # -- the block's results
    emit("ins.done:")
    emit("  %ros = getelementptr ptr, ptr %rp, i64 %o")
    emit("  %res = load ptr, ptr %ros")
    emit("  store i64 0, ptr %v.a")
    emit("  %orow = mul i64 %p, %out_stride")
    emit("  %orow2 = add i64 %orow, %r0")
    emit(f"  %orowp = getelementptr {t}, ptr %out, i64 %orow2")
    emit(f"  %yrow = getelementptr {t}, ptr %y, i64 %r0")
    emit("  switch i64 %mode, label %blk.next [ i64 0, label %k.none i64 1, label %k.max "
         "i64 2, label %k.sum i64 3, label %k.mse ]")
    counted_loop("none", [load("%x.none", "%res", "none"), *lane_mask("none"),
                          f"  %st.none.p = getelementptr {vt}, ptr %orowp, i64 %v.none",
                          (f"  call void @llvm.masked.store.{sfx}.p0({vt} %x.none, "
                          f"ptr %st.none.p, i32 {size}, <{w} x i1> %mask.none)")], "blk.next")
    # the largest finite result, +0.0 counting as larger than -0.0 (reference.reduce_rows):
    # a lane takes x when x > acc, or x is +0.0 and acc -0.0
    counted_loop("max", [load("%x.max", "%res", "max"), *lane_mask("max"),
                         f"  %ax.max = call {vt} @llvm.fabs.{sfx}({vt} %x.max)",
                         f"  %fin.max = fcmp olt {vt} %ax.max, {splat_pinf}",
                         f"  %acc.max = load {vt}, ptr %acct.a",
                         f"  %gt0.max = fcmp ogt {vt} %x.max, %acc.max",
                         f"  %xb.max = bitcast {vt} %x.max to {vb}",
                         f"  %ab.max = bitcast {vt} %acc.max to {vb}",
                         f"  %xpz.max = icmp eq {vb} %xb.max, zeroinitializer",
                         f"  %anz.max = icmp eq {vb} %ab.max, {splat_negzero}",
                         f"  %tie.max = and <{w} x i1> %xpz.max, %anz.max",
                         f"  %gt.max = or <{w} x i1> %gt0.max, %tie.max",
                         f"  %m1.max = and <{w} x i1> %fin.max, %gt.max",
                         f"  %m2.max = and <{w} x i1> %m1.max, %mask.max",
                         (f"  %nacc.max = select <{w} x i1> %m2.max, {vt} %x.max, "
                         f"{vt} %acc.max"),
                         f"  store {vt} %nacc.max, ptr %acct.a"], "blk.next")
    counted_loop("sum", [load("%x.sum", "%res", "sum"), *lane_mask("sum"),
                         ext("%xd.sum", "%x.sum"),
                         (f"  %sel.sum = select <{w} x i1> %mask.sum, {vd} %xd.sum, "
                         f"{vd} zeroinitializer"),
                         *sum_lanes("sum"),
                         f"  %acc.sum = load {vd}, ptr %accp.sum, align 8",
                         f"  %nacc.sum = fadd {vd} %acc.sum, %sel.sum",
                         f"  store {vd} %nacc.sum, ptr %accp.sum, align 8"], "blk.next")
    counted_loop("mse", [load("%x.mse", "%res", "mse"), load("%y.mse", "%yrow", "mse"),
                         *lane_mask("mse"),
                         f"  %dl.mse = fsub {vt} %x.mse, %y.mse",
                         ext("%dd.mse", "%dl.mse"),
                         f"  %sq.mse = fmul {vd} %dd.mse, %dd.mse",
                         (f"  %sel.mse = select <{w} x i1> %mask.mse, {vd} %sq.mse, "
                         f"{vd} zeroinitializer"),
                         *sum_lanes("mse"),
                         f"  %acc.mse = load {vd}, ptr %accp.mse, align 8",
                         f"  %nacc.mse = fadd {vd} %acc.mse, %sel.mse",
                         f"  store {vd} %nacc.mse, ptr %accp.mse, align 8"], "blk.next")
    emit("blk.next:")
    emit("  %r0n = add i64 %r0, %block")
    emit("  store i64 %r0n, ptr %r0.a")
    emit("  br label %blk.head")
    # -- the program's reduction
    emit("prog.end:")
    emit("  switch i64 %mode, label %prog.next [ i64 1, label %end.max i64 2, "
         "label %end.sum i64 3, label %end.mse ]")
    emit("end.max:")
    emit(f"  %accm = load {vt}, ptr %acct.a")
    emit(f"  %bestv = call {t} @llvm.vector.reduce.fmax.{sfx}({vt} %accm)")
    # fmax leaves the sign of a zero to the lanes' order: +0.0 if any lane holds it
    emit(f"  %accmb = bitcast {vt} %accm to {vb}")
    emit(f"  %lanepz = icmp eq {vb} %accmb, zeroinitializer")
    emit(f"  %anypz = call i1 @llvm.vector.reduce.or.v{w}i1(<{w} x i1> %lanepz)")
    emit(f"  %iszero = fcmp oeq {t} %bestv, 0.0")
    emit(f"  %zero = select i1 %anypz, {t} 0.0, {t} -0.0")
    emit(f"  %best = select i1 %iszero, {t} %zero, {t} %bestv")
    emit(f"  %bestp = getelementptr {t}, ptr %out, i64 %p")
    emit(f"  store {t} %best, ptr %bestp")
    emit("  br label %prog.next")
    emit("end.sum:")
    emit(f"  %accs = load <{SUM_LANES} x double>, ptr %accd.a")
    emit(f"  %tot = call double @llvm.vector.reduce.fadd.v{SUM_LANES}f64(double -0.0, "
         f"<{SUM_LANES} x double> %accs)")
    emit("  %totp = getelementptr double, ptr %out, i64 %p")
    emit("  store double %tot, ptr %totp")
    emit("  br label %prog.next")
    emit("end.mse:")
    emit(f"  %acce = load <{SUM_LANES} x double>, ptr %accd.a")
    emit(f"  %tote = call double @llvm.vector.reduce.fadd.v{SUM_LANES}f64(double -0.0, "
         f"<{SUM_LANES} x double> %acce)")
    emit("  %nf = sitofp i64 %n_rows to double")
    emit("  %mean = fdiv double %tote, %nf")
    emit("  %meanp = getelementptr double, ptr %out, i64 %p")
    emit("  store double %mean, ptr %meanp")
    emit("  br label %prog.next")
    emit("prog.next:")
    emit("  %pn = add i64 %p, 1")
    emit("  store i64 %pn, ptr %p.a")
    emit("  br label %prog.head")
    emit("exit:")
    emit("  ret void")
    emit("}")
    emit("")
    emit(f'attributes #0 = {{ nounwind "min-legal-vector-width"="{w * size * 8}" '
         f'"prefer-vector-width"="{w * size * 8}" }}')
    return "\n".join(lines) + "\n"
