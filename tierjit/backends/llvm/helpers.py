"""Small LLVM functions that native code calls for Python's harder scalar operations.

Each is a line-for-line port of the CPython (or NumPy) C code named in its comment, so its
results are bit-identical; where CPython would raise, it reports failure instead and the
caller deoptimises.
"""

from __future__ import annotations

from ..float_pow import float_pow_ir
from ..gil import DECLARATIONS as GIL_DECLARATIONS
from ..gil import OFFER_IR


def _libc_fmod(f: str) -> str:
    # The C library's fmod, not LLVM's `frem`: called as CPython and NumPy call it, it gives
    # their NaN (inf % 2.0 is the x86 default NaN, sign bit set), where LLVM rewrites a
    # `frem` by a power of two as arithmetic whose NaN has the dividend's sign. (`#0`:
    # nobuiltin, so that LLVM does not turn the call back into `frem`.)
    return "fmod" if f == "double" else "fmodf"


def _floordiv(f: str, sfx: str) -> str:
    # CPython Objects/floatobject.c _float_div_mod (NumPy's npy_divmod is the same)
    return f"""
define internal {f} @tj_floordiv{sfx}({f} %vx, {f} %wx) alwaysinline {{
entry:
  %mod = call {f} @{_libc_fmod(f)}({f} %vx, {f} %wx) #0
  %d0 = fsub {f} %vx, %mod
  %div = fdiv {f} %d0, %wx
  %modnz = fcmp une {f} %mod, 0.0
  %wneg = fcmp olt {f} %wx, 0.0
  %mneg = fcmp olt {f} %mod, 0.0
  %diff = xor i1 %wneg, %mneg
  %adj = and i1 %modnz, %diff
  %div1 = fsub {f} %div, 1.0
  %div2 = select i1 %adj, {f} %div1, {f} %div
  %divnz = fcmp une {f} %div2, 0.0
  br i1 %divnz, label %nz, label %z
nz:
  %fl = call {f} @llvm.floor.{sfx or 'f64'}({f} %div2)
  %dd = fsub {f} %div2, %fl
  %big = fcmp ogt {f} %dd, 0.5
  %fl1 = fadd {f} %fl, 1.0
  %r = select i1 %big, {f} %fl1, {f} %fl
  ret {f} %r
z:
  %q = fdiv {f} %vx, %wx
  %r0 = call {f} @llvm.copysign.{sfx or 'f64'}({f} 0.0, {f} %q)
  ret {f} %r0
}}
"""


def _fmod(f: str, sfx: str) -> str:
    # CPython Objects/floatobject.c float_rem
    return f"""
define internal {f} @tj_fmod{sfx}({f} %vx, {f} %wx) alwaysinline {{
entry:
  %mod = call {f} @{_libc_fmod(f)}({f} %vx, {f} %wx) #0
  %modnz = fcmp une {f} %mod, 0.0
  %wneg = fcmp olt {f} %wx, 0.0
  %mneg = fcmp olt {f} %mod, 0.0
  %diff = xor i1 %wneg, %mneg
  %adj = and i1 %modnz, %diff
  %m1 = fadd {f} %mod, %wx
  %m2 = select i1 %adj, {f} %m1, {f} %mod
  %z = call {f} @llvm.copysign.{sfx or 'f64'}({f} 0.0, {f} %wx)
  %r = select i1 %modnz, {f} %m2, {f} %z
  ret {f} %r
}}
"""


HELPERS = {
    # keep a new reference alive until the native call returns (a list in *slot)
    "own": """
define internal void @tj_own(ptr %slot, ptr %obj) {
entry:
  %l = load ptr, ptr %slot
  %has = icmp ne ptr %l, null
  br i1 %has, label %append, label %new
new:
  %n = call ptr @PyList_New(i64 0)
  store ptr %n, ptr %slot
  br label %append
append:
  %lst = load ptr, ptr %slot
  %r = call i32 @PyList_Append(ptr %lst, ptr %obj)
  call void @Py_DecRef(ptr %obj)
  ret void
}
""",
    "floordiv": _floordiv("double", ""),
    "floordiv32": _floordiv("float", "f32").replace("@tj_floordivf32", "@tj_floordiv32"),
    "fmod": _fmod("double", ""),
    "fmod32": _fmod("float", "f32").replace("@tj_fmodf32", "@tj_fmod32"),
    # Python's int ** int for a non-negative exponent, by repeated squaring; i1 = overflow
    "ipow": """
define internal {i64, i1} @tj_ipow(i64 %b, i64 %e) {
entry:
  br label %loop
loop:
  %r = phi i64 [1, %entry], [%r2, %body]
  %base = phi i64 [%b, %entry], [%base2, %body]
  %ex = phi i64 [%e, %entry], [%ex2, %body]
  %of = phi i1 [false, %entry], [%of3, %body]
  %done = icmp eq i64 %ex, 0
  br i1 %done, label %out, label %body
body:
  %bit = and i64 %ex, 1
  %odd = icmp ne i64 %bit, 0
  %m = call {i64, i1} @llvm.smul.with.overflow.i64(i64 %r, i64 %base)
  %mv = extractvalue {i64, i1} %m, 0
  %mo = extractvalue {i64, i1} %m, 1
  %r2 = select i1 %odd, i64 %mv, i64 %r
  %of1 = and i1 %odd, %mo
  %ex2 = lshr i64 %ex, 1
  %more = icmp ne i64 %ex2, 0
  %sq = call {i64, i1} @llvm.smul.with.overflow.i64(i64 %base, i64 %base)
  %sqv = extractvalue {i64, i1} %sq, 0
  %sqo = extractvalue {i64, i1} %sq, 1
  %base2 = select i1 %more, i64 %sqv, i64 %base
  %of2 = and i1 %more, %sqo
  %of12 = or i1 %of1, %of2
  %of3 = or i1 %of, %of12
  br label %loop
out:
  %s = insertvalue {i64, i1} undef, i64 %r, 0
  %s2 = insertvalue {i64, i1} %s, i1 %of, 1
  ret {i64, i1} %s2
}
""",
    "fpow": float_pow_ir(),
    # around a call into Python, which may call native code again (sign 1 before, -1 after):
    # add the native calls nested below the caller's entry (low half of its depth word less
    # the high half, backends/nesting.py) to, or take them off, the published count at %cell
    "publish": """
define internal void @tj_publish(i64 %depth, ptr %cell, i64 %sign) alwaysinline {
entry:
  %below = trunc i64 %depth to i32
  %base.w = lshr i64 %depth, 32
  %base = trunc i64 %base.w to i32
  %mine.w = sub i32 %below, %base
  %mine = zext i32 %mine.w to i64
  %delta = mul i64 %mine, %sign
  %p0 = load i64, ptr %cell
  %p1 = add i64 %p0, %delta
  store i64 %p1, ptr %cell
  ret void
}
""",
    # at a signal poll: the GIL offered to a waiting thread once its time has come
    # (backends/gil.py)
    "offer_gil": f"""
define internal void @tj_offer_gil(ptr %state) noinline {{
entry:
{OFFER_IR}
  ret void
}}
""",
    # a deopt site's hand-over to tier 0 (codegen.deopt_body): box the n raw slots by kind
    # (0 a new reference, 1 int64, 2 double, 3 a borrowed reference) in place; unless one
    # failed, ask %callable (given slot 0, the frame state) for the resume function and call
    # it with the others itself (no Python frame of ours under tier 0's: a recursion
    # deoptimising at every level keeps CPython's depth); release them; NULL with an
    # exception set if anything failed. The native calls nested below the site's entry (its
    # depth word) are published in %cell while tier 0 runs.
    "resume": """
define internal ptr @tj_resume(ptr %callable, ptr %slots, ptr %kinds, i64 %n, i64 %depth,
                               ptr %cell) cold noinline {
entry:
  br label %head
head:
  %i = phi i64 [0, %entry], [%i1, %put]
  %bad = phi i1 [false, %entry], [%bad1, %put]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %boxed
body:
  %kp = getelementptr i8, ptr %kinds, i64 %i
  %k = load i8, ptr %kp
  %sp = getelementptr i64, ptr %slots, i64 %i
  %raw = load i64, ptr %sp
  switch i8 %k, label %owned [i8 1, label %int i8 2, label %flt i8 3, label %borrowed]
int:
  %oi = call ptr @PyLong_FromLongLong(i64 %raw)
  br label %put
flt:
  %d = bitcast i64 %raw to double
  %of = call ptr @PyFloat_FromDouble(double %d)
  br label %put
borrowed:
  %ob = inttoptr i64 %raw to ptr
  call void @Py_IncRef(ptr %ob)
  br label %put
owned:
  %oo = inttoptr i64 %raw to ptr
  br label %put
put:
  %o = phi ptr [%oi, %int], [%of, %flt], [%ob, %borrowed], [%oo, %owned]
  store ptr %o, ptr %sp
  %null = icmp eq ptr %o, null
  %bad1 = or i1 %bad, %null
  %i1 = add i64 %i, 1
  br label %head
boxed:
  br i1 %bad, label %release, label %call
call:
  call void @tj_publish(i64 %depth, ptr %cell, i64 1)
  %fn = call ptr @PyObject_Vectorcall(ptr %callable, ptr %slots, i64 1, ptr null)
  %nofn = icmp eq ptr %fn, null
  br i1 %nofn, label %called, label %resume
resume:
  %vals = getelementptr ptr, ptr %slots, i64 1
  %nv = sub i64 %n, 1
  %r0 = call ptr @PyObject_Vectorcall(ptr %fn, ptr %vals, i64 %nv, ptr null)
  call void @Py_DecRef(ptr %fn)
  br label %called
called:
  %r = phi ptr [null, %call], [%r0, %resume]
  call void @tj_publish(i64 %depth, ptr %cell, i64 -1)
  br label %release
release:
  %res = phi ptr [null, %boxed], [%r, %called]
  br label %rhead
rhead:
  %j = phi i64 [0, %release], [%j1, %rbody]
  %rmore = icmp ult i64 %j, %n
  br i1 %rmore, label %rbody, label %done
rbody:
  %rp = getelementptr ptr, ptr %slots, i64 %j
  %ro = load ptr, ptr %rp
  call void @Py_DecRef(ptr %ro)
  %j1 = add i64 %j, 1
  br label %rhead
done:
  ret ptr %res
}
""",
}

# what each helper needs declared in its module
_FMOD = ["declare double @fmod(double, double)"]
_FMODF = ["declare float @fmodf(float, float)"]
NEEDS = {
    "offer_gil": list(GIL_DECLARATIONS),
    "floordiv": _FMOD, "fmod": _FMOD, "floordiv32": _FMODF, "fmod32": _FMODF,
    "fpow": ["declare double @pow(double, double)"],
    "resume": ["declare ptr @PyLong_FromLongLong(i64)", "declare ptr @PyFloat_FromDouble(double)",
               "declare void @Py_IncRef(ptr)", "declare void @Py_DecRef(ptr)",
               "declare ptr @PyObject_Vectorcall(ptr, ptr, i64, ptr)"],
}
