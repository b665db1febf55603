"""How deep calls between native functions may nest, in both native tiers.

Native code calls native code on the C stack, which Python's recursion limit does not see: a
deep enough recursion would overflow it. Past a bound on the nested native calls, a call
deoptimises to the frame state before it instead (not counted as a failed guard), tier 0
makes it, and every further level costs Python frames, so CPython's own recursion limit ends
a runaway recursion with RecursionError.

The baseline tier adds up the frames of its running calls in its code arena
(codemem.Arena.active): its frames hold every value of a function, so their size varies
most, and they may take NATIVE_STACK bytes. The LLVM tier passes the nesting in a register,
as a last argument of every core: the *depth word*, whose low 32 bits are the native calls
below this one and whose high 32 bits are the part of them made before the native code was
entered (its base). A counter in memory would
chain every call to the one before through a store and a load (fib ran 2.7 times slower).
Code that calls into Python, which may call native code again, first adds the calls it
nested itself (low minus base) to PUBLISHED, and takes them off after; an entry from Python
starts from PUBLISHED. Other threads' published calls count too (they run while this one
waits on the GIL in Python): an upper bound of this thread's nesting, never less.
"""

from __future__ import annotations

import ctypes

NATIVE_DEPTH = 2000          # LLVM frames: ~100 bytes to 1 KB (spills, call slots)
NATIVE_STACK = 2 << 20       # bytes of C stack for nested baseline frames (of 8 MB)

PUBLISHED = ctypes.c_int64(0)
