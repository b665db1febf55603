"""Native loops offer the GIL, as CPython's interpreter does, in both native tiers.

CPython hands the GIL over when a waiting thread asks: a thread that has waited a switch
interval (5 ms by default; 0.5 ms while the compiler thread runs Python, runtime/compiler.py)
without the GIL changing hands sets a drop request, and the interpreter drops the GIL at its
next check between bytecodes. Native code makes no such check, so a long native call used to
keep the GIL from its first instruction to its last: the program's other threads stopped,
and so did the compiler thread's Python work (typing, passes, tier 0), so LLVM's code for a
function whose calls ran baseline code arrived only after those calls were over.

So at its signal polls (every 1024 loop back edges) native code reads CLOCK_MONOTONIC, and
once the period has passed since the last offer it releases the GIL and takes it again
(PyEval_SaveThread, PyEval_RestoreThread): a thread whose drop request is pending gets the
GIL then (CPython makes the releasing thread wait until the switch is made), and the loop goes
on once that thread gives it back, as an interpreted loop would. The period is twice the
switch interval: a release and retake counts as a switch, so offers closer together than the
interval would keep restarting a waiting thread's wait and it would never ask. Without a
thread waiting, an offer is an uncontended release and retake once per period; what every
poll adds is one clock read (vDSO) per 1024 back edges.

Native code keeps nothing across an offer that another thread could take from it: its arrays
are its callers' (their buffers cannot be resized while referenced), objects it made are in
its own owner list, baseline code is freed only once no baseline call is running, and LLVM's
is never freed.

STATE is process-wide words, read and written with the GIL held: the CLOCK_MONOTONIC time
(ns) of the next offer, the period in ns, and clock_gettime's timespec.
"""

from __future__ import annotations

import ctypes
import sys

CLOCK_MONOTONIC = 1                     # Linux
STATE = (ctypes.c_int64 * 4)()


def _now(k: str) -> str:
    return f"""  call i32 @clock_gettime(i32 {CLOCK_MONOTONIC}, ptr %gil.ts)
  %gil.s{k} = load i64, ptr %gil.ts, align 8
  %gil.n{k} = load i64, ptr %gil.tn, align 8
  %gil.s9{k} = mul i64 %gil.s{k}, 1000000000
  %gil.now{k} = add i64 %gil.s9{k}, %gil.n{k}"""


# The offer in LLVM IR, for both tiers: %state points at STATE; it ends in block `gil.done`.
OFFER_IR = f"""  %gil.ts = getelementptr i64, ptr %state, i64 2
  %gil.tn = getelementptr i64, ptr %state, i64 3
{_now("")}
  %gil.next = load i64, ptr %state, align 8
  %gil.due = icmp sge i64 %gil.now, %gil.next
  br i1 %gil.due, label %gil.offer, label %gil.done, !prof !{{!"branch_weights", i32 1, i32 1000}}
gil.offer:
  %gil.t = call ptr @PyEval_SaveThread()
  call void @PyEval_RestoreThread(ptr %gil.t)
{_now("2")}
  %gil.pp = getelementptr i64, ptr %state, i64 1
  %gil.period = load i64, ptr %gil.pp, align 8
  %gil.at = add i64 %gil.now2, %gil.period
  store i64 %gil.at, ptr %state, align 8
  br label %gil.done
gil.done:"""
DECLARATIONS = ("declare i32 @clock_gettime(i32, ptr)", "declare ptr @PyEval_SaveThread()",
                "declare void @PyEval_RestoreThread(ptr)")


def switch_interval_changed(seconds: float) -> None:
    """Offers every two switch intervals (runtime/compiler.py calls this when it lowers the
    interval and when it restores it)."""
    STATE[1] = int(seconds * 2e9)


switch_interval_changed(sys.getswitchinterval())
