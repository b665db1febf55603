"""CPython's float power as LLVM IR, shared by both native tiers (the LLVM tier's helper
functions, backends/llvm/helpers.py, and the baseline tier's `pow_ffp` stencil, which inlines
it): a line-for-line port of Objects/floatobject.c float_pow, bit-identical to it."""

from __future__ import annotations

INF = "0x7FF0000000000000"          # +inf, as LLVM IR writes a double


def float_pow_ir(nobuiltin: str = "#0", inline: str = "") -> str:
    """`{double, i1} @tj_fpow(double %v, double %w)`: v ** w as float_pow computes it, and
    i1 = "let tier 0 do it" where float_pow raises (0.0 ** negative: ZeroDivisionError;
    negative ** fraction: a complex; a finite power overflowing: OverflowError). Its special
    cases come first, as there: a NaN or an infinity (a program fed NaN deoptimised at every
    call until its code was given up). `nobuiltin`: the attribute group that keeps LLVM from
    rewriting the call of pow; `inline`: " alwaysinline" for the baseline tier's stencil."""
    return f"""
define internal {{double, i1}} @tj_fpow(double %v, double %w){inline} {{
entry:
  %wz = fcmp oeq double %w, 0.0
  br i1 %wz, label %one, label %w.nz
one:
  ret {{double, i1}} {{double 1.0, i1 false}}
w.nz:
  %vnan = fcmp uno double %v, 0.0
  br i1 %vnan, label %nan.v, label %v.num
nan.v:
  %sv = insertvalue {{double, i1}} undef, double %v, 0
  %sv2 = insertvalue {{double, i1}} %sv, i1 false, 1
  ret {{double, i1}} %sv2
v.num:
  %wnan = fcmp uno double %w, 0.0
  br i1 %wnan, label %nan.w, label %w.num
nan.w:
  %v.one = fcmp oeq double %v, 1.0
  %rw = select i1 %v.one, double 1.0, double %w
  %sw = insertvalue {{double, i1}} undef, double %rw, 0
  %sw2 = insertvalue {{double, i1}} %sw, i1 false, 1
  ret {{double, i1}} %sw2
w.num:
  %av = call double @llvm.fabs.f64(double %v)
  %aw = call double @llvm.fabs.f64(double %w)
  %m2 = frem double %aw, 2.0
  %odd = fcmp oeq double %m2, 1.0
  %winf = fcmp oeq double %aw, {INF}
  br i1 %winf, label %inf.w, label %w.fin
inf.w:
  %av.one = fcmp oeq double %av, 1.0
  %wpos = fcmp ogt double %w, 0.0
  %vbig = fcmp ogt double %av, 1.0
  %big = icmp eq i1 %wpos, %vbig
  %ri0 = select i1 %big, double {INF}, double 0.0
  %ri = select i1 %av.one, double 1.0, double %ri0
  %si = insertvalue {{double, i1}} undef, double %ri, 0
  %si2 = insertvalue {{double, i1}} %si, i1 false, 1
  ret {{double, i1}} %si2
w.fin:
  %vinf = fcmp oeq double %av, {INF}
  br i1 %vinf, label %inf.v, label %finite
inf.v:
  %wpos2 = fcmp ogt double %w, 0.0
  %rp = select i1 %odd, double %v, double %av
  %z = call double @llvm.copysign.f64(double 0.0, double %v)
  %rn = select i1 %odd, double %z, double 0.0
  %rv = select i1 %wpos2, double %rp, double %rn
  %sr = insertvalue {{double, i1}} undef, double %rv, 0
  %sr2 = insertvalue {{double, i1}} %sr, i1 false, 1
  ret {{double, i1}} %sr2
finite:
  %vz = fcmp oeq double %v, 0.0
  br i1 %vz, label %zero, label %vnz
zero:
  %wneg = fcmp olt double %w, 0.0
  br i1 %wneg, label %fail, label %zok
zok:
  %zr = select i1 %odd, double %v, double 0.0
  %zs = insertvalue {{double, i1}} undef, double %zr, 0
  %zs2 = insertvalue {{double, i1}} %zs, i1 false, 1
  ret {{double, i1}} %zs2
vnz:
  %vneg = fcmp olt double %v, 0.0
  %fl = call double @llvm.floor.f64(double %w)
  %frac = fcmp une double %fl, %w
  %bad = and i1 %vneg, %frac
  br i1 %bad, label %fail, label %go
go:
  %neg = and i1 %vneg, %odd
  %isone = fcmp oeq double %av, 1.0
  %p = call double @pow(double %av, double %w) {nobuiltin}
  %p1 = select i1 %isone, double 1.0, double %p
  %ap = call double @llvm.fabs.f64(double %p1)
  %ovf = fcmp oeq double %ap, {INF}
  %np = fneg double %p1
  %r = select i1 %neg, double %np, double %p1
  %s = insertvalue {{double, i1}} undef, double %r, 0
  %s2 = insertvalue {{double, i1}} %s, i1 %ovf, 1
  ret {{double, i1}} %s2
fail:
  ret {{double, i1}} {{double 0.0, i1 true}}
}}
"""
