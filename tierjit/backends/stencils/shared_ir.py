"""LLVM IR of the two routines every baseline function shares (emitted once per process):
the core prologue and the vectorcall entry. A function's own code only passes them its
descriptor (templates.py: the `core` and `entry_thunk` stencils).

The function descriptor (8-byte words): frame bytes; counts (argument slots | constant slots
<< 20 | max bytes of C stack << 40); constant table; first body stencil; the deopt stub used when
the nesting is too deep; the deopt callable; argument descriptor; result descriptor; core.
"""

from __future__ import annotations

# Loop back edges between two signal polls: the prologue passes 1024 to the body as the
# count (the chain's %p, templates.py).
POLL_EVERY = 1024

# Argument and result kinds of the entry's descriptors (code.py writes the descriptors).
K_INT, K_FLOAT, K_BOOL, K_NPFLOAT, K_NPINT, K_ARRAY, K_NONE, K_TUPLE, K_UNION = range(1, 10)

# i32 enter(ptr args, ptr out, ptr fd): a frame of fd[0] bytes on the C stack (slots 0-4, see
# templates.py), the arguments and the constant table copied in, then the chain of stencils
# from fd[3] — or, when the running baseline calls would take more than the max bytes of
# C stack (the count at hole K3 adds up their frames, plus 256 bytes each for the calls
# between them), the deopt stub fd[4], so that deep recursion finishes in tier 0. On the
# way out it releases the list owning objects made by calls into Python.
PROLOGUE = r"""
define i32 @st_enter(ptr %args, ptr %out, ptr %fd) #2 {
entry:
  %size = load i64, ptr %fd, align 8
  %counts.p = getelementptr i64, ptr %fd, i64 1
  %counts = load i64, ptr %counts.p, align 8
  %na = and i64 %counts, 1048575
  %nc.s = lshr i64 %counts, 20
  %nc.all = and i64 %nc.s, 1048575
  %depth.max = lshr i64 %counts, 40
  %active = inttoptr i64 ptrtoint (ptr @K3 to i64) to ptr
  %depth = load i64, ptr %active, align 8
  %weight = add i64 %size, 256
  %depth2 = add i64 %depth, %weight
  store i64 %depth2, ptr %active, align 8
  %deep = icmp ugt i64 %depth2, %depth.max
  ; too deep: only the slots the deopt at entry reads (0-4 and the arguments)
  %na.bytes = shl i64 %na, 3
  %small = add i64 %na.bytes, 40
  %bytes = select i1 %deep, i64 %small, i64 %size
  %nc = select i1 %deep, i64 0, i64 %nc.all
  %f = alloca i8, i64 %bytes, align 16
  store ptr %out, ptr %f, align 8
  %p2 = getelementptr i8, ptr %f, i64 16
  store i64 0, ptr %p2, align 8
  %p3 = getelementptr i8, ptr %f, i64 24
  store ptr %fd, ptr %p3, align 8
  %slots = getelementptr i8, ptr %f, i64 40
  br label %args.loop
args.loop:
  %i = phi i64 [0, %entry], [%i2, %args.body]
  %more = icmp ult i64 %i, %na
  br i1 %more, label %args.body, label %consts
args.body:
  %src = getelementptr i64, ptr %args, i64 %i
  %v = load i64, ptr %src, align 8
  %dst = getelementptr i64, ptr %slots, i64 %i
  store i64 %v, ptr %dst, align 8
  %i2 = add i64 %i, 1
  br label %args.loop, !llvm.loop !1
consts:
  %table.p = getelementptr i64, ptr %fd, i64 2
  %table = load ptr, ptr %table.p, align 8
  %cslots = getelementptr i64, ptr %slots, i64 %na
  br label %c.loop
c.loop:
  %j = phi i64 [0, %consts], [%j2, %c.body]
  %cmore = icmp ult i64 %j, %nc
  br i1 %cmore, label %c.body, label %run
c.body:
  %csrc = getelementptr i64, ptr %table, i64 %j
  %cv = load i64, ptr %csrc, align 8
  %cdst = getelementptr i64, ptr %cslots, i64 %j
  store i64 %cv, ptr %cdst, align 8
  %j2 = add i64 %j, 1
  br label %c.loop, !llvm.loop !1
run:
  br i1 %deep, label %too.deep, label %body
body:
  %body.p = getelementptr i64, ptr %fd, i64 3
  %body.f = load ptr, ptr %body.p, align 8
  %s = call i32 %body.f(ptr %f, i64 1024, i64 0, double 0.0, i64 0, double 0.0)
  br label %exit
too.deep:
  %stub.p = getelementptr i64, ptr %fd, i64 4
  %stub = load ptr, ptr %stub.p, align 8
  %s2 = call i32 %stub(ptr %f, i64 1024, i64 0, double 0.0, i64 0, double 0.0)
  br label %exit
exit:
  %st = phi i32 [%s, %body], [%s2, %too.deep]
  %d3 = load i64, ptr %active, align 8
  %d4 = sub i64 %d3, %weight
  store i64 %d4, ptr %active, align 8
  %own = load ptr, ptr %p2, align 8
  %has = icmp ne ptr %own, null
  br i1 %has, label %release, label %done
release:
  call void @Py_DecRef(ptr %own)
  br label %done
done:
  ret i32 %st
}
"""

# PyObject *entry(self, args, nargsf, kwnames, fd): unbox the arguments per the argument
# descriptor fd[6], call the core fd[8], box the result per the result descriptor fd[7];
# anything unexpected goes to self->fallback (at offset E of the entry object). Argument
# records (4 x i64): kind, type object, extra, extra2. Result records: kind, type object,
# extra, slot; a K_TUPLE record is followed by its items' records. The call counts as a running
# baseline call (K3) until the result is boxed: the descriptors are in the function's region.
ENTRY = r"""
define internal ptr @box(i64 %kind, ptr %tp, i64 %extra, ptr %p) alwaysinline #0 {
entry:
  %v = load i64, ptr %p, align 8
  switch i64 %kind, label %none [i64 1, label %int  i64 2, label %float  i64 3, label %bool
                                 i64 4, label %npf  i64 5, label %npi  i64 9, label %union
                                 i64 6, label %array]
array:
  ; the core returned a new reference to the array (ret_copy_ref)
  %arr = inttoptr i64 %v to ptr
  ret ptr %arr
int:
  %r1 = call ptr @PyLong_FromLongLong(i64 %v)
  ret ptr %r1
float:
  %d = bitcast i64 %v to double
  %r2 = call ptr @PyFloat_FromDouble(double %d)
  ret ptr %r2
bool:
  %t = icmp ne i64 %v, 0
  %extra.p = inttoptr i64 %extra to ptr
  %b = select i1 %t, ptr %tp, ptr %extra.p
  call void @Py_IncRef(ptr %b)
  ret ptr %b
npf:
  %d2 = bitcast i64 %v to double
  %f = call ptr @PyFloat_FromDouble(double %d2)
  br label %call.type
npi:
  %f2 = call ptr @PyLong_FromLongLong(i64 %v)
  br label %call.type
union:
  %tagp = getelementptr i8, ptr %p, i64 8
  %tag = load i64, ptr %tagp, align 8
  %d3 = bitcast i64 %v to double
  %f3 = call ptr @PyFloat_FromDouble(double %d3)
  %is.np = icmp ne i64 %tag, 0
  br i1 %is.np, label %call.type, label %plain
plain:
  ret ptr %f3
call.type:
  %x = phi ptr [%f, %npf], [%f2, %npi], [%f3, %union]
  %x.null = icmp eq ptr %x, null
  br i1 %x.null, label %fail, label %conv
conv:
  %r = call ptr @PyObject_CallOneArg(ptr %tp, ptr %x)
  call void @Py_DecRef(ptr %x)
  ret ptr %r
fail:
  ret ptr null
none:
  call void @Py_IncRef(ptr %tp)
  ret ptr %tp
}

define ptr @st_entry(ptr %self, ptr %args, i64 %nargsf, ptr %kw, ptr %fd) #0 {
entry:
  %out = alloca [16 x i64], align 16
  %ovf = alloca i32, align 4
  %room = call i64 @stack_room()
  %full.now = icmp eq i64 %room, 0
  br i1 %full.now, label %full, label %start
full:
  ret ptr null
start:
  ; the running calls' count starts this much higher where the stack has less room than
  ; the nested calls' bound (the descriptor's counts >> 40): its calls deoptimise sooner
  %counts.p = getelementptr i64, ptr %fd, i64 1
  %counts = load i64, ptr %counts.p, align 8
  %bound = lshr i64 %counts, 40
  %short = icmp ult i64 %room, %bound
  %lack = sub i64 %bound, %room
  %handicap = select i1 %short, i64 %lack, i64 0
  %desc.p = getelementptr i64, ptr %fd, i64 6
  %desc = load ptr, ptr %desc.p, align 8
  %rdesc.p = getelementptr i64, ptr %fd, i64 7
  %rdesc = load ptr, ptr %rdesc.p, align 8
  %nargs = and i64 %nargsf, 9223372036854775807
  %want = load i64, ptr %desc, align 8
  %nslots.p = getelementptr i64, ptr %desc, i64 1
  %nslots = load i64, ptr %nslots.p, align 8
  %buf = alloca i64, i64 %nslots, align 16
  %n.ok = icmp eq i64 %nargs, %want
  %kw.ok = icmp eq ptr %kw, null
  %ok = and i1 %n.ok, %kw.ok
  br i1 %ok, label %loop, label %fallback
loop:
  %i = phi i64 [0, %start], [%i2, %next]
  %slot = phi i64 [0, %start], [%slot2, %next]
  %more = icmp ult i64 %i, %nargs
  br i1 %more, label %arg, label %call
arg:
  %ap = getelementptr ptr, ptr %args, i64 %i
  %o = load ptr, ptr %ap, align 8
  %rec.i = mul i64 %i, 4
  %rec.j = add i64 %rec.i, 2
  %rec = getelementptr i64, ptr %desc, i64 %rec.j
  %kind = load i64, ptr %rec, align 8
  %tp.p = getelementptr i64, ptr %rec, i64 1
  %tp = load ptr, ptr %tp.p, align 8
  %x1.p = getelementptr i64, ptr %rec, i64 2
  %x1 = load i64, ptr %x1.p, align 8
  %x2.p = getelementptr i64, ptr %rec, i64 3
  %x2 = load i64, ptr %x2.p, align 8
  %typ.p = getelementptr i8, ptr %o, i64 8
  %typ = load ptr, ptr %typ.p, align 8
  %dst = getelementptr i64, ptr %buf, i64 %slot
  %is.bool = icmp eq i64 %kind, 3
  %is.none = icmp eq i64 %kind, 7
  %by.id = or i1 %is.bool, %is.none
  br i1 %by.id, label %identity, label %bytype
bytype:
  %same = icmp eq ptr %typ, %tp
  br i1 %same, label %dispatch, label %fallback
dispatch:
  switch i64 %kind, label %fallback [i64 1, label %k.int  i64 2, label %k.float
                                     i64 4, label %k.npf  i64 5, label %k.npi
                                     i64 6, label %k.array]
k.int:
  store i32 0, ptr %ovf, align 4
  %iv = call i64 @PyLong_AsLongLongAndOverflow(ptr %o, ptr %ovf)
  %of = load i32, ptr %ovf, align 4
  %of.bad = icmp ne i32 %of, 0
  br i1 %of.bad, label %fallback, label %k.int.ok
k.int.ok:
  store i64 %iv, ptr %dst, align 8
  br label %next1
k.float:
  %fp = getelementptr i8, ptr %o, i64 16
  %fv = load i64, ptr %fp, align 8
  store i64 %fv, ptr %dst, align 8
  br label %next1
k.npf:
  %nfp = getelementptr i8, ptr %o, i64 16
  %is.f32 = icmp eq i64 %x1, 4
  br i1 %is.f32, label %k.npf32, label %k.npf64
k.npf64:
  %nfv = load i64, ptr %nfp, align 8
  store i64 %nfv, ptr %dst, align 8
  br label %next1
k.npf32:
  %nf32 = load float, ptr %nfp, align 4
  %nf64 = fpext float %nf32 to double
  store double %nf64, ptr %dst, align 8
  br label %next1
k.npi:
  %nip = getelementptr i8, ptr %o, i64 16
  switch i64 %x1, label %fallback [i64 1, label %s8  i64 2, label %s16  i64 4, label %s32
                                   i64 8, label %s64  i64 257, label %u8  i64 258, label %u16
                                   i64 260, label %u32]
s8:
  %v8 = load i8, ptr %nip, align 1
  %w8 = sext i8 %v8 to i64
  br label %npi.store
s16:
  %v16 = load i16, ptr %nip, align 2
  %w16 = sext i16 %v16 to i64
  br label %npi.store
s32:
  %v32 = load i32, ptr %nip, align 4
  %w32 = sext i32 %v32 to i64
  br label %npi.store
s64:
  %w64 = load i64, ptr %nip, align 8
  br label %npi.store
u8:
  %uv8 = load i8, ptr %nip, align 1
  %uw8 = zext i8 %uv8 to i64
  br label %npi.store
u16:
  %uv16 = load i16, ptr %nip, align 2
  %uw16 = zext i16 %uv16 to i64
  br label %npi.store
u32:
  %uv32 = load i32, ptr %nip, align 4
  %uw32 = zext i32 %uv32 to i64
  br label %npi.store
npi.store:
  %nv = phi i64 [%w8, %s8], [%w16, %s16], [%w32, %s32], [%w64, %s64], [%uw8, %u8], [%uw16, %u16], [%uw32, %u32]
  store i64 %nv, ptr %dst, align 8
  br label %next1
k.array:
  ; x1: scalar type object of the dtype; x2: ndim | C-contiguous << 8
  %descr.p = getelementptr i8, ptr %o, i64 56
  %descr = load ptr, ptr %descr.p, align 8
  %dtt.p = getelementptr i8, ptr %descr, i64 16
  %dtt = load i64, ptr %dtt.p, align 8
  %dt.ok = icmp eq i64 %dtt, %x1
  %bo.p = getelementptr i8, ptr %descr, i64 26
  %bo = load i8, ptr %bo.p, align 1
  %bo.ok = icmp ne i8 %bo, 62
  %nd.p = getelementptr i8, ptr %o, i64 24
  %nd = load i32, ptr %nd.p, align 4
  %nd64 = zext i32 %nd to i64
  %want.nd = and i64 %x2, 255
  %nd.ok = icmp eq i64 %nd64, %want.nd
  %flags.p = getelementptr i8, ptr %o, i64 64
  %flags = load i32, ptr %flags.p, align 4
  %cc = and i32 %flags, 1
  %cc64 = zext i32 %cc to i64
  %want.c = lshr i64 %x2, 8
  %c.ok = icmp eq i64 %cc64, %want.c
  %a1 = and i1 %dt.ok, %bo.ok
  %a2 = and i1 %nd.ok, %c.ok
  %a3 = and i1 %a1, %a2
  br i1 %a3, label %k.array.ok, label %fallback
k.array.ok:
  store ptr %o, ptr %dst, align 8
  %data.p = getelementptr i8, ptr %o, i64 16
  %data = load i64, ptr %data.p, align 8
  %d1 = getelementptr i64, ptr %dst, i64 1
  store i64 %data, ptr %d1, align 8
  %dims.p = getelementptr i8, ptr %o, i64 32
  %dims = load ptr, ptr %dims.p, align 8
  %strides.p = getelementptr i8, ptr %o, i64 40
  %strides = load ptr, ptr %strides.p, align 8
  br label %dim.loop
dim.loop:
  %d = phi i64 [0, %k.array.ok], [%d.next, %dim.body]
  %d.more = icmp ult i64 %d, %nd64
  br i1 %d.more, label %dim.body, label %next8
dim.body:
  %ext.p = getelementptr i64, ptr %dims, i64 %d
  %ext = load i64, ptr %ext.p, align 8
  %sd.i = add i64 %d, 2
  %sd = getelementptr i64, ptr %dst, i64 %sd.i
  store i64 %ext, ptr %sd, align 8
  %st.p = getelementptr i64, ptr %strides, i64 %d
  %stv = load i64, ptr %st.p, align 8
  %td.i = add i64 %d, 5
  %td = getelementptr i64, ptr %dst, i64 %td.i
  store i64 %stv, ptr %td, align 8
  %d.next = add i64 %d, 1
  br label %dim.loop
identity:
  ; bool: tp is True, x1 is False; None: tp is None (no slot)
  %is.t = icmp eq ptr %o, %tp
  %x1.p2 = inttoptr i64 %x1 to ptr
  %is.f = icmp eq ptr %o, %x1.p2
  br i1 %is.none, label %k.none, label %k.bool
k.none:
  br i1 %is.t, label %next0, label %fallback
k.bool:
  %tf = or i1 %is.t, %is.f
  br i1 %tf, label %k.bool.ok, label %fallback
k.bool.ok:
  %bv = zext i1 %is.t to i64
  store i64 %bv, ptr %dst, align 8
  br label %next1
next0:
  br label %next
next1:
  br label %next
next8:
  br label %next
next:
  %w = phi i64 [0, %next0], [1, %next1], [8, %next8]
  %slot2 = add i64 %slot, %w
  %i2 = add i64 %i, 1
  br label %loop
call:
  %core.p = getelementptr i64, ptr %fd, i64 8
  %core = load ptr, ptr %core.p, align 8
  ; counted as a running baseline call until the result is boxed: the descriptors read
  ; below live in the function's code region, which is not freed while a call runs
  %active = inttoptr i64 ptrtoint (ptr @K3 to i64) to ptr
  %act0 = load i64, ptr %active, align 8
  %act0h = add i64 %act0, %handicap
  %act1 = add i64 %act0h, 1
  store i64 %act1, ptr %active, align 8
  %st = call i32 %core(ptr %buf, ptr %out)
  switch i32 %st, label %error [i32 0, label %done  i32 2, label %deopted]
deopted:
  %obj = load ptr, ptr %out, align 8
  br label %leave
error:
  br label %leave
leave:
  %res.all = phi ptr [%obj, %deopted], [null, %error], [%res, %scalar], [null, %item.fail], [%tup, %items.done]
  %act2 = load i64, ptr %active, align 8
  %act2h = sub i64 %act2, %handicap
  %act3 = sub i64 %act2h, 1
  store i64 %act3, ptr %active, align 8
  ret ptr %res.all
done:
  %rkind = load i64, ptr %rdesc, align 8
  %rtp.p = getelementptr i64, ptr %rdesc, i64 1
  %rtp = load ptr, ptr %rtp.p, align 8
  %rx.p = getelementptr i64, ptr %rdesc, i64 2
  %rx = load i64, ptr %rx.p, align 8
  %is.tuple = icmp eq i64 %rkind, 8
  br i1 %is.tuple, label %tuple, label %scalar
scalar:
  %res = call ptr @box(i64 %rkind, ptr %rtp, i64 %rx, ptr %out)
  br label %leave
tuple:
  %tup = call ptr @PyTuple_New(i64 %rx)
  %tup.null = icmp eq ptr %tup, null
  br i1 %tup.null, label %error, label %items
items:
  %k = phi i64 [0, %tuple], [%k2, %item.ok]
  %kmore = icmp ult i64 %k, %rx
  br i1 %kmore, label %item, label %items.done
item:
  %ri = mul i64 %k, 4
  %ri2 = add i64 %ri, 4
  %irec = getelementptr i64, ptr %rdesc, i64 %ri2
  %ikind = load i64, ptr %irec, align 8
  %itp.p = getelementptr i64, ptr %irec, i64 1
  %itp = load ptr, ptr %itp.p, align 8
  %ix.p = getelementptr i64, ptr %irec, i64 2
  %ix = load i64, ptr %ix.p, align 8
  %islot.p = getelementptr i64, ptr %irec, i64 3
  %islot = load i64, ptr %islot.p, align 8
  %ip = getelementptr i64, ptr %out, i64 %islot
  %iobj = call ptr @box(i64 %ikind, ptr %itp, i64 %ix, ptr %ip)
  %iobj.null = icmp eq ptr %iobj, null
  br i1 %iobj.null, label %item.fail, label %item.ok
item.fail:
  call void @Py_DecRef(ptr %tup)
  br label %leave
item.ok:
  %kk = add i64 %k, 3
  %item.p = getelementptr ptr, ptr %tup, i64 %kk
  store ptr %iobj, ptr %item.p, align 8
  %k2 = add i64 %k, 1
  br label %items
items.done:
  br label %leave
fallback:
  %fb.p = getelementptr i8, ptr %self, i64 ptrtoint (ptr @E to i64)
  %fb = load ptr, ptr %fb.p, align 8
  %r = tail call ptr @PyObject_Vectorcall(ptr %fb, ptr %args, i64 %nargsf, ptr %kw)
  ret ptr %r
}
"""


# i64 stack_room(): how many bytes of C stack the native calls nested below this C entry of a
# jitted function may take (runtime/cstack.py), or 0 (RecursionError set) when the thread's
# stack pointer is within its last MARGIN bytes. The hole KS is runtime/cstack.py's cell: the
# pthread key holding the thread's base (i64), MARGIN (i64), the RecursionError type and the
# message. The stack is too full where (sp - base) mod 2**64 < MARGIN: from base on, where
# base = the stack's lowest address + the thread's margin (MARGIN, or half a smaller stack)
# - MARGIN. On a stack of MARGIN or more, MARGIN itself leaves room for the nested calls (at
# most backends/nesting.py's bounds): no bound of its own (2**40). On a smaller stack (base
# tagged with 2) they may take the room above the margin, (sp - base) - MARGIN: the calls'
# bounds are lowered by what is missing (st_entry, entry_wrapper.py). A stack pointer outside
# the thread's stack (a coroutine library's own stacks) is never full. A thread's first check
# finds its base with pthread_getattr_np, or keeps 1 (never full) where that fails. Inlined
# into every C entry of a jitted function (and st_type_stack, for the LLVM tier's entries);
# stack_ok() is stack_room() != 0.
STACK_OK = r"""
define internal i64 @stack_room() alwaysinline #0 {
entry:
  %attr = alloca [128 x i8], align 16
  %lo.p = alloca i64, align 8
  %size.p = alloca i64, align 8
  %sp.p = call ptr @llvm.stacksave.p0()
  %sp = ptrtoint ptr %sp.p to i64
  %key = load i32, ptr @KS, align 8
  %m.p = getelementptr i8, ptr @KS, i64 8
  %m = load i64, ptr %m.p, align 8
  %base.p = call ptr @pthread_getspecific(i32 %key)
  %base = ptrtoint ptr %base.p to i64
  %fresh = icmp eq i64 %base, 0
  br i1 %fresh, label %first, label %compare, !prof !0
first:
  %self = call i64 @pthread_self()
  %rc = call i32 @pthread_getattr_np(i64 %self, ptr %attr)
  %got = icmp eq i32 %rc, 0
  br i1 %got, label %bounds, label %keep
bounds:
  %rc2 = call i32 @pthread_attr_getstack(ptr %attr, ptr %lo.p, ptr %size.p)
  %rc3 = call i32 @pthread_attr_destroy(ptr %attr)
  %lo = load i64, ptr %lo.p, align 8
  %size = load i64, ptr %size.p, align 8
  %half = lshr i64 %size, 1
  %small = icmp ult i64 %half, %m
  %margin = select i1 %small, i64 %half, i64 %m
  %top = add i64 %lo, %margin
  %found = sub i64 %top, %m
  %zero = icmp eq i64 %found, 0
  %found1 = select i1 %zero, i64 1, i64 %found
  %tag = select i1 %small, i64 2, i64 0
  %tagged = or i64 %found1, %tag
  br label %keep
keep:
  %new = phi i64 [%tagged, %bounds], [1, %first]
  %new.p = inttoptr i64 %new to ptr
  %rc4 = call i32 @pthread_setspecific(i32 %key, ptr %new.p)
  br label %compare
compare:
  %bt = phi i64 [%base, %entry], [%new, %keep]
  %b = and i64 %bt, -4
  %off = sub i64 %sp, %b
  %full = icmp ult i64 %off, %m
  br i1 %full, label %no, label %yes, !prof !0
no:
  %e.p = getelementptr i8, ptr @KS, i64 16
  %e = load ptr, ptr %e.p, align 8
  %msg.p = getelementptr i8, ptr @KS, i64 24
  %msg = load ptr, ptr %msg.p, align 8
  call void @PyErr_SetString(ptr %e, ptr %msg)
  ret i64 0
yes:
  %bit = and i64 %bt, 2
  %is.small = icmp ne i64 %bit, 0
  %above = sub i64 %off, %m
  %room = select i1 %is.small, i64 %above, i64 1099511627776
  %none = icmp eq i64 %room, 0
  %room1 = select i1 %none, i64 1, i64 %room
  ret i64 %room1
}

define internal i1 @stack_ok() alwaysinline #0 {
  %room = call i64 @stack_room()
  %ok = icmp ne i64 %room, 0
  ret i1 %ok
}
"""


# The C slots of the native entry type (runtime/entry.py: tierjit.Function), and the
# function that turns a shim into an entry in place (runtime/shim.py), made once per
# process from the library like the routines above, so that the type exists without LLVM.
# Holes: the entry's field offsets A (slot), B (dispatcher), C (fallback), D (weakref list),
# F (target) and G (straight calls left); a dict's version tag DV, a cell's ob_ref CR;
# PyObject's ob_type E, a tuple's ob_size TA and its items TB, TC; the forwarder's address K,
# None K2, &PyExc_TypeError K3 and tp_new's error message K4 (a C string). Py_IncRef and
# Py_DecRef (not inline refcount arithmetic) keep this correct on 3.12+, where None is
# immortal; none of it is on a hot path.
ENTRY_TYPE = r"""
; The generic slot: self->fallback(*args, **kwnames).  Borrowing fallback is safe: it only
; changes in tp_clear, which never runs while a caller still holds the entry.
define ptr @st_type_forward(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) #0 {
entry:
  %room = call i1 @stack_ok()
  br i1 %room, label %call, label %full
call:
  %pf = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @C to i64)
  %f = load ptr, ptr %pf, align 8
  %r = tail call ptr @PyObject_Vectorcall(ptr %f, ptr %args, i64 %nargsf, ptr %kwnames)
  ret ptr %r
full:
  ret ptr null
}

; i64 stack(): stack_room, for the LLVM tier's entries (backends/llvm/entry_wrapper.py)
define i64 @st_type_stack() #0 {
  %room = call i64 @stack_room()
  ret i64 %room
}

; The straight slot (runtime/straight.py): while calls are left, self->target(*args,
; **kwnames) with one Python frame fewer than the fallback would take; then the fallback.
; Borrowing target is safe: it is set once, before any calls are left, and only tp_clear
; (which first takes the calls away) drops it.
define ptr @st_type_straight(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) #0 {
entry:
  %room = call i1 @stack_ok()
  br i1 %room, label %count, label %full
full:
  ret ptr null
count:
  %pc = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @G to i64)
  %c = load i64, ptr %pc, align 8
  %left = icmp sgt i64 %c, 0
  br i1 %left, label %straight, label %fallback
straight:
  %c1 = sub i64 %c, 1
  store i64 %c1, ptr %pc, align 8
  %pt = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @F to i64)
  %t = load ptr, ptr %pt, align 8
  %r = tail call ptr @PyObject_Vectorcall(ptr %t, ptr %args, i64 %nargsf, ptr %kwnames)
  ret ptr %r
fallback:
  %pf = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @C to i64)
  %f = load ptr, ptr %pf, align 8
  %r2 = tail call ptr @PyObject_Vectorcall(ptr %f, ptr %args, i64 %nargsf, ptr %kwnames)
  ret ptr %r2
}

; The relay slot (runtime/entry.py: forward_to): self->target(*args, **kwnames), for good,
; holding a reference to the target for the call (the target may be swapped while the call
; runs, by a function starting anew on another thread, and its code must not be freed under
; the call).
define ptr @st_type_relay(ptr %self, ptr %args, i64 %nargsf, ptr %kwnames) #0 {
entry:
  %room = call i1 @stack_ok()
  br i1 %room, label %call, label %full
full:
  ret ptr null
call:
  %pt = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @F to i64)
  %t = load ptr, ptr %pt, align 8
  call void @Py_IncRef(ptr %t)
  %r = call ptr @PyObject_Vectorcall(ptr %t, ptr %args, i64 %nargsf, ptr %kwnames)
  call void @Py_DecRef(ptr %t)
  ret ptr %r
}

; i32 names(ptr t): do the free names in table t still name the objects a function's native
; code baked in (runtime/names.py)? t: the number of groups, then per group a dict, the
; version tag it had when last found unchanged, the number of names n, and n pairs (name,
; object, or NULL for a name the dict must not have); then the number of closure cells, and
; per cell the cell and its object (NULL: empty). A group whose dict kept its tag is
; unchanged; otherwise each name is looked up (PyDict_GetItem: borrowed, no error set) and,
; when all are as expected, the new tag is kept: a program binding other globals costs a
; lookup per name per call, not a call into Python. Hole CR: a cell's ob_ref.
define i32 @st_type_names(ptr %t) #0 {
entry:
  %g = load i64, ptr %t, align 8
  %p0 = getelementptr i64, ptr %t, i64 1
  br label %group
group:
  %k = phi i64 [0, %entry], [%k1, %next]
  %p = phi ptr [%p0, %entry], [%pn, %next]
  %more = icmp ult i64 %k, %g
  br i1 %more, label %look, label %cells
look:
  %d = load ptr, ptr %p, align 8
  %vp = getelementptr inbounds i8, ptr %d, i64 ptrtoint (ptr @DV to i64)
  %v = load i64, ptr %vp, align 8
  %ep = getelementptr i64, ptr %p, i64 1
  %e = load i64, ptr %ep, align 8
  %np = getelementptr i64, ptr %p, i64 2
  %n = load i64, ptr %np, align 8
  %words = shl i64 %n, 1
  %skip = add i64 %words, 3
  %pn = getelementptr i64, ptr %p, i64 %skip
  %same = icmp eq i64 %v, %e
  br i1 %same, label %next, label %names
names:
  %j = phi i64 [0, %look], [%j1, %name.ok]
  %left = icmp ult i64 %j, %n
  br i1 %left, label %name, label %seen
name:
  %w = shl i64 %j, 1
  %w3 = add i64 %w, 3
  %kp = getelementptr i64, ptr %p, i64 %w3
  %key = load ptr, ptr %kp, align 8
  %op = getelementptr ptr, ptr %kp, i64 1
  %want = load ptr, ptr %op, align 8
  %got = call ptr @PyDict_GetItem(ptr %d, ptr %key)
  %j1 = add i64 %j, 1
  %ok = icmp eq ptr %got, %want
  br i1 %ok, label %name.ok, label %no
name.ok:
  br label %names
seen:
  store i64 %v, ptr %ep, align 8
  br label %next
next:
  %k1 = add i64 %k, 1
  br label %group
cells:
  %c = load i64, ptr %p, align 8
  br label %cell.loop
cell.loop:
  %i = phi i64 [0, %cells], [%i1, %cell.ok]
  %cleft = icmp ult i64 %i, %c
  br i1 %cleft, label %cell, label %yes
cell:
  %cw = shl i64 %i, 1
  %cw1 = add i64 %cw, 1
  %cp = getelementptr i64, ptr %p, i64 %cw1
  %cell.obj = load ptr, ptr %cp, align 8
  %cwant.p = getelementptr ptr, ptr %cp, i64 1
  %cwant = load ptr, ptr %cwant.p, align 8
  %ref.p = getelementptr inbounds i8, ptr %cell.obj, i64 ptrtoint (ptr @CR to i64)
  %ref = load ptr, ptr %ref.p, align 8
  %i1 = add i64 %i, 1
  %cok = icmp eq ptr %ref, %cwant
  br i1 %cok, label %cell.ok, label %no
cell.ok:
  br label %cell.loop
no:
  ret i32 0
yes:
  ret i32 1
}

; tp_new(type, (dispatcher, fallback), kwds): the only way instances come to exist.
define ptr @st_type_new(ptr %type, ptr %args, ptr %kwds) #0 {
entry:
  %pn = getelementptr inbounds i8, ptr %args, i64 ptrtoint (ptr @TA to i64)
  %n = load i64, ptr %pn, align 8
  %two = icmp eq i64 %n, 2
  br i1 %two, label %kw, label %bad
kw:
  %nokw = icmp eq ptr %kwds, null
  br i1 %nokw, label %alloc, label %kwsize
kwsize:
  %nkw = call i64 @PyDict_Size(ptr %kwds)
  %nokw2 = icmp eq i64 %nkw, 0
  br i1 %nokw2, label %alloc, label %bad
bad:
  %pexc = call ptr asm "movabsq $$K3, $0", "=r"()
  %exc = load ptr, ptr %pexc, align 8
  %msg = call ptr asm "movabsq $$K4, $0", "=r"()
  call void @PyErr_SetString(ptr %exc, ptr %msg)
  ret ptr null
alloc:
  ; GenericAlloc zero-fills, increfs the heap type and GC-tracks the object; traverse copes
  ; with the NULL fields until the stores below (nothing here can trigger a collection).
  %self = call ptr @PyType_GenericAlloc(ptr %type, i64 0)
  %failed = icmp eq ptr %self, null
  br i1 %failed, label %oom, label %init
oom:
  ret ptr null
init:
  %pd0 = getelementptr inbounds i8, ptr %args, i64 ptrtoint (ptr @TB to i64)
  %d = load ptr, ptr %pd0, align 8
  %pf0 = getelementptr inbounds i8, ptr %args, i64 ptrtoint (ptr @TC to i64)
  %f = load ptr, ptr %pf0, align 8
  call void @Py_IncRef(ptr %d)
  call void @Py_IncRef(ptr %f)
  %ps = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @A to i64)
  %fwd = call ptr asm "movabsq $$K, $0", "=r"()
  store ptr %fwd, ptr %ps, align 8
  %pd = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @B to i64)
  store ptr %d, ptr %pd, align 8
  %pf = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @C to i64)
  store ptr %f, ptr %pf, align 8
  ret ptr %self
}

; tp_dealloc: untrack, clear weakrefs, drop fields, free, then drop the heap type.
define void @st_type_dealloc(ptr %self) #0 {
entry:
  %pt = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @E to i64)
  %type = load ptr, ptr %pt, align 8
  call void @PyObject_GC_UnTrack(ptr %self)
  %pw = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @D to i64)
  %w = load ptr, ptr %pw, align 8
  %hasw = icmp ne ptr %w, null
  br i1 %hasw, label %weak, label %fields
weak:
  call void @PyObject_ClearWeakRefs(ptr %self)
  br label %fields
fields:
  %pd = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @B to i64)
  %d = load ptr, ptr %pd, align 8
  store ptr null, ptr %pd, align 8
  %pf = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @C to i64)
  %f = load ptr, ptr %pf, align 8
  store ptr null, ptr %pf, align 8
  %ptg = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @F to i64)
  %tg = load ptr, ptr %ptg, align 8
  store ptr null, ptr %ptg, align 8
  call void @Py_DecRef(ptr %d)
  call void @Py_DecRef(ptr %f)
  call void @Py_DecRef(ptr %tg)
  call void @PyObject_GC_Del(ptr %self)
  call void @Py_DecRef(ptr %type)
  ret void
}

; tp_traverse: report every strong reference, including the heap type (required since 3.9).
define i32 @st_type_traverse(ptr %self, ptr %visit, ptr %arg) #0 {
entry:
  %pd = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @B to i64)
  %d = load ptr, ptr %pd, align 8
  %dnull = icmp eq ptr %d, null
  br i1 %dnull, label %fb, label %visit_d
visit_d:
  %rd = call i32 %visit(ptr %d, ptr %arg)
  %stopd = icmp ne i32 %rd, 0
  br i1 %stopd, label %stop, label %fb
fb:
  %pf = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @C to i64)
  %f = load ptr, ptr %pf, align 8
  %fnull = icmp eq ptr %f, null
  br i1 %fnull, label %tg, label %visit_f
visit_f:
  %rf = call i32 %visit(ptr %f, ptr %arg)
  %stopf = icmp ne i32 %rf, 0
  br i1 %stopf, label %stop, label %tg
tg:
  %ptg = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @F to i64)
  %g = load ptr, ptr %ptg, align 8
  %gnull = icmp eq ptr %g, null
  br i1 %gnull, label %ty, label %visit_g
visit_g:
  %rg = call i32 %visit(ptr %g, ptr %arg)
  %stopg = icmp ne i32 %rg, 0
  br i1 %stopg, label %stop, label %ty
ty:
  %pt = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @E to i64)
  %t = load ptr, ptr %pt, align 8
  %rt = call i32 %visit(ptr %t, ptr %arg)
  ret i32 %rt
stop:
  %r = phi i32 [ %rd, %visit_d ], [ %rf, %visit_f ], [ %rg, %visit_g ]
  ret i32 %r
}

; tp_clear: break cycles without ever leaving a NULL behind (see runtime/entry.py).
define i32 @st_type_clear(ptr %self) #0 {
entry:
  %none = call ptr asm "movabsq $$K2, $0", "=r"()
  %ps = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @A to i64)
  %fwd = call ptr asm "movabsq $$K, $0", "=r"()
  store ptr %fwd, ptr %ps, align 8
  %pc = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @G to i64)
  store i64 0, ptr %pc, align 8
  %ptg = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @F to i64)
  %tg = load ptr, ptr %ptg, align 8
  store ptr null, ptr %ptg, align 8
  call void @Py_IncRef(ptr %none)
  call void @Py_IncRef(ptr %none)
  %pd = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @B to i64)
  %d = load ptr, ptr %pd, align 8
  store ptr %none, ptr %pd, align 8
  %pf = getelementptr inbounds i8, ptr %self, i64 ptrtoint (ptr @C to i64)
  %f = load ptr, ptr %pf, align 8
  store ptr %none, ptr %pf, align 8
  call void @Py_DecRef(ptr %d)
  call void @Py_DecRef(ptr %f)
  call void @Py_DecRef(ptr %tg)
  ret i32 0
}

; tp_descr_get: bind like a Python function (unbound when accessed on the class or None).
define ptr @st_type_descr_get(ptr %self, ptr %obj, ptr %type) #0 {
entry:
  %none = call ptr asm "movabsq $$K2, $0", "=r"()
  %isnull = icmp eq ptr %obj, null
  %isnone = icmp eq ptr %obj, %none
  %unbound = or i1 %isnull, %isnone
  br i1 %unbound, label %same, label %bind
same:
  call void @Py_IncRef(ptr %self)
  ret ptr %self
bind:
  %m = call ptr @PyMethod_New(ptr %self, ptr %obj)
  ret ptr %m
}

; Shim -> entry in place (runtime/shim.py): store the native slot, then switch the type. Runs
; with the GIL held and calls nothing that could run Python code or a collection between the
; two stores.
define void @st_type_upgrade(ptr %obj, ptr %type, ptr %slot) #0 {
entry:
  %pt = getelementptr inbounds i8, ptr %obj, i64 ptrtoint (ptr @E to i64)
  %old = load ptr, ptr %pt, align 8
  call void @Py_IncRef(ptr %type)
  %ps = getelementptr inbounds i8, ptr %obj, i64 ptrtoint (ptr @A to i64)
  store ptr %slot, ptr %ps, align 8
  store ptr %type, ptr %pt, align 8
  call void @Py_DecRef(ptr %old)
  ret void
}
"""
