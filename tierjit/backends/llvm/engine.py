"""The process-wide LLVM JIT: LLVM IR text in, optimised machine code at a stable address out.

Analogue: a dynamic loader that is also a compiler.  The engine lives for the whole process and
accumulates machine code; code is never unloaded, so an address handed out by
`CompiledModule.address()` stays valid until exit (dispatch slots and type slots point into it).
What is not code goes with its function: a module's IR is handed back to LLVM to free as soon
as its code is finalised, and the optimised IR text lives in the CompiledModule only.
MCJIT fixes the code-generator level per instance, and it dominates the cost of small modules
(~0.5 ms at level 0, ~1.5 ms at level 3), so there are two MCJIT instances behind the one
engine: opt 0-1 modules use fast instruction selection, opt 2-3 the aggressive code generator.
Every defined symbol is registered process-wide, so modules call each other across instances.

    compile_ir(text) = parse -> verify -> new-PM O<opt> pipeline (loop vectorise)
                       -> resolve external symbols -> add to MCJIT -> finalise -> addresses

llvmlite is imported inside functions only: `import tierjit` must not pay ~65 ms for LLVM.
Every touch of LLVM state (our private context, engine, target machine) happens under
`LLVMEngine.lock`, so a background compiler thread and the main thread can both compile;
llvmlite's ctypes calls release the GIL, so Python keeps running while LLVM works.

Unresolved external symbols are fatal inside MCJIT (it crashes the process rather than
raising), so every declaration a module names is resolved *before* the module is handed over:
C API and libc/libm symbols come from `ctypes.pythonapi` (dlopen(NULL)), compiler-runtime
helpers that LLVM's code generator calls on its own (i128 division, powi, half floats) from
libgcc_s, and anything unresolvable raises LookupError instead.
"""

from __future__ import annotations

import threading
import time

from tierjit.runtime import capi, perfmap

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - typing only
    import llvmlite.binding as llvm

DEFAULT_OPT = 3


def codegen_level(opt: int) -> int:
    """Code-generator level used for IR optimised at `opt`: 0 (fast isel) or 3 (aggressive)."""
    return 0 if opt <= 1 else 3


# Helpers the code generator may call without the IR ever declaring them.  Registered
# up-front from libgcc_s when present; MCJIT would otherwise crash on first use.
_COMPILER_RUNTIME_HELPERS = (
    "__divti3", "__udivti3", "__modti3", "__umodti3", "__udivmodti4", "__multi3",
    "__muloti4", "__mulodi4", "__ashlti3", "__ashrti3", "__lshrti3",
    "__powidf2", "__powisf2",
    "__floattidf", "__floattisf", "__floatuntidf", "__floatuntisf",
    "__fixdfti", "__fixsfti", "__fixunsdfti", "__fixunssfti",
    "__truncdfhf2", "__truncsfhf2", "__extendhfsf2", "__extendhfdf2",
    "__truncdfbf2", "__truncsfbf2", "__gnu_h2f_ieee", "__gnu_f2h_ieee",
    "__popcountdi2", "__popcountti2", "__clzti2", "__ctzti2",
)  # fmt: skip


class CompiledModule:
    """One optimised module loaded into the engine: analogous to a loaded shared object."""

    __slots__ = ("_addresses", "_asm", "_engine", "compile_seconds", "llvm_text", "opt")

    def __init__(
        self, engine: LLVMEngine, addresses: dict[str, int], llvm_text: str, opt: int,
        compile_seconds: float,
    ) -> None:  # fmt: skip
        self._engine = engine
        self._addresses = addresses
        self.llvm_text = llvm_text  # optimised IR, captured before MCJIT codegen touches it
        self.opt = opt
        self.compile_seconds = compile_seconds
        self._asm: str | None = None

    @property
    def symbols(self) -> tuple[str, ...]:
        """Names of the externally visible functions and globals this module defines."""
        return tuple(self._addresses)

    def address(self, name: str) -> int:
        """Address of a function or global defined (with external linkage) by this module."""
        try:
            return self._addresses[name]
        except KeyError:
            raise KeyError(
                f"{name!r} is not defined by this module; it defines {sorted(self._addresses)}"
            ) from None

    @property
    def asm(self) -> str:
        """Assembly text, produced on first access (costs a second code generation)."""
        if self._asm is None:
            self._asm = self._engine.emit_assembly(self.llvm_text, opt=self.opt)
        return self._asm

    def __repr__(self) -> str:
        return f"<CompiledModule O{self.opt} {', '.join(self._addresses)}>"


class LLVMEngine:
    """The process's JIT: host target machines and their MCJIT instances, one per codegen level."""

    def __init__(self) -> None:
        import llvmlite.binding as llvm

        self._llvm = llvm
        self.lock = threading.RLock()  # guards all of this engine's LLVM state
        # Private LLVMContexts (this one for the MCJIT instances' empty seed modules, one per
        # compiled module): other llvmlite users in this process (Numba, the stencil builder)
        # use the global context from their own threads without taking our lock.
        self._context = llvm.create_context()
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        llvm.initialize_native_asmparser()
        # Vectorise loops whose float sums must stay in order (chunks.py): the terms are
        # computed in vectors and added one by one, in the program's order.
        llvm.set_option("tierjit", "-force-ordered-reductions")
        self.cpu_name: str = llvm.get_host_cpu_name()
        self.cpu_features: str = llvm.get_host_cpu_features().flatten()
        self._target = llvm.Target.from_triple(llvm.get_process_triple())
        self._machines: dict[int, tuple[llvm.TargetMachine, llvm.ExecutionEngine]] = {}
        tm, _ = self._machine(3)
        self.triple: str = tm.triple
        self.data_layout: str = str(tm.target_data)
        self._defined: dict[str, int] = {}  # symbol defined by a module -> its address
        self._registered: set[str] = set()  # names passed to llvm.add_symbol
        self._register_compiler_runtime()

    # ----------------------------------------------------------------- public

    def compile_ir(self, ir_text: str, *, opt: int = DEFAULT_OPT) -> CompiledModule:
        """Parse, verify, optimise and load one module; return its symbol addresses.

        Raises RuntimeError (with LLVM's message) for invalid IR, ValueError if the module
        redefines a symbol already in the engine, LookupError for an unresolvable declaration.
        """
        if not 0 <= opt <= 3:
            raise ValueError(f"opt must be 0..3, got {opt}")
        llvm = self._llvm
        with self.lock:
            start = time.perf_counter()
            # Each module is parsed into a context of its own and handed back to LLVM to
            # free, with that context (its types and constants, every address the module
            # bakes in), once its code is finalised: MCJIT keeps the code and RuntimeDyld
            # the symbols. Kept, a small function's IR stayed ~100 KB of the process for
            # good after the function was dropped.
            context = llvm.create_context()
            module = None
            in_engine = False
            try:
                module = llvm.parse_assembly(ir_text, context=context)
                if not module.triple:
                    module.triple = self.triple
                if not module.data_layout:
                    module.data_layout = self.data_layout
                module.verify()
                self._optimise(module, opt)
                defined = self._check_symbols(module)
                text = str(module)
                _, ee = self._machine(codegen_level(opt))
                perf = perfmap.watch(ee)  # Linux perf's map of the module's functions, when on
                ee.add_module(module)
                in_engine = True
                ee.finalize_object()
                addresses = {
                    name: (ee.get_function_address(name) if is_fn
                           else ee.get_global_value_address(name))
                    for name, is_fn in defined
                }  # fmt: skip
                ee.remove_module(module)
                in_engine = False
            finally:
                if not in_engine:  # else a failed finalisation: MCJIT may still read both
                    if module is not None:
                        module.close()
                    context.close()
            if not all(addresses.values()):
                missing = [n for n, a in addresses.items() if not a]
                raise RuntimeError(f"MCJIT produced no address for {missing}")
            if perf is not None:
                perf.note(addresses)
            compiled = CompiledModule(self, addresses, text, opt, time.perf_counter() - start)
            for name, address in addresses.items():
                self._defined[name] = address
                llvm.add_symbol(name, address)  # visible to the other MCJIT instance too
            return compiled

    def add_symbol(self, name: str, address: int) -> None:
        """Make `name` resolve to `address` in all later modules (e.g. a runtime helper)."""
        if not address:
            raise ValueError(f"null address for symbol {name!r}")
        with self.lock:
            self._llvm.add_symbol(name, address)
            self._registered.add(name)

    def emit_assembly(self, llvm_text: str, *, opt: int = DEFAULT_OPT) -> str:
        """Assembly for already-optimised IR, from a fresh parse (engine modules stay untouched)."""
        with self.lock:
            context = self._llvm.create_context()
            module = None
            try:
                module = self._llvm.parse_assembly(llvm_text, context=context)
                tm, _ = self._machine(codegen_level(opt))
                return tm.emit_assembly(module)
            finally:
                if module is not None:
                    module.close()  # before its context
                context.close()

    # ----------------------------------------------------------------- internals

    def _machine(self, level: int) -> tuple[llvm.TargetMachine, llvm.ExecutionEngine]:
        """The target machine and MCJIT instance for one codegen level, created on demand."""
        if level not in self._machines:
            llvm = self._llvm
            # jit=True picks the JIT code model and relocation defaults.
            tm = self._target.create_target_machine(
                cpu=self.cpu_name, features=self.cpu_features, opt=level, jit=True
            )
            seed = llvm.parse_assembly("", context=self._context)
            seed.triple, seed.data_layout = tm.triple, str(tm.target_data)
            self._machines[level] = (tm, llvm.create_mcjit_compiler(seed, tm))
        return self._machines[level]

    def _optimise(self, module: llvm.ModuleRef, opt: int) -> None:
        llvm = self._llvm
        pto = llvm.create_pipeline_tuning_options(speed_level=opt)
        if opt >= 2:
            pto.loop_vectorization = True
            # No SLP vectoriser: what it pairs in our code is a[3 * i] with a[3 * i + 1], into
            # 16-byte loads of memory that the loop before wrote 8 bytes at a time (nbody's
            # positions, read by the next step's pair loop). Such a load cannot be forwarded
            # from the two pending stores, which is the likely reason it cost nbody, whose
            # steps form one chain of latencies: 20.3 -> 17.0 ms without it (best of 40, same
            # process). No other kernel's vector code changes (it comes from the loop
            # vectoriser), nor its time.
            pto.slp_vectorization = False
        builder = llvm.create_pass_builder(self._machine(3)[0], pto)
        builder.getModulePassManager().run(module, builder)

    def _check_symbols(self, module: llvm.ModuleRef) -> list[tuple[str, bool]]:
        """Resolve every declaration; return (name, is_function) of external definitions."""
        llvm = self._llvm
        local = (llvm.Linkage.internal, llvm.Linkage.private)
        # available_externally bodies are never emitted: the symbol must come from elsewhere.
        imported = llvm.Linkage.available_externally
        defined: list[tuple[str, bool]] = []
        for value, is_fn in [(f, True) for f in module.functions] + [
            (g, False) for g in module.global_variables
        ]:
            name = value.name
            if value.is_declaration or value.linkage == imported:
                if not name.startswith("llvm."):
                    self._resolve(name)
            elif value.linkage not in local:
                # Definitions are registered process-wide (see compile_ir), so one named like a
                # libc or C API function would hijack every later module's calls to it.
                if name in self._defined or capi.symbol_address(name):
                    raise ValueError(
                        f"symbol @{name} is already defined in the JIT engine or the process; "
                        "code generators must use unique names (or internal linkage)"
                    )
                defined.append((name, is_fn))
        return defined

    def _resolve(self, name: str) -> None:
        if name in self._defined or name in self._registered:
            return
        address = capi.symbol_address(name) or self._llvm.address_of_symbol(name)
        if not address:
            raise LookupError(
                f"module declares @{name}, which is neither a symbol of this "
                "process nor defined by an earlier module"
            )
        self._llvm.add_symbol(name, address)
        self._registered.add(name)

    def _register_compiler_runtime(self) -> None:
        import ctypes

        def candidates():
            # The soname first: where it loads (Linux), the search (ctypes.util, which
            # imports subprocess and runs ldconfig: ~5 ms) would find the same library.
            yield "libgcc_s.so.1"
            import ctypes.util
            yield ctypes.util.find_library("gcc_s")

        for lib_name in candidates():
            if not lib_name:
                continue
            try:
                lib = ctypes.CDLL(lib_name)
            except OSError:
                continue
            for name in _COMPILER_RUNTIME_HELPERS:
                address = capi.symbol_address(name)
                if not address and hasattr(lib, name):
                    address = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
                if address:
                    self._llvm.add_symbol(name, address)
                    self._registered.add(name)
            return


_engine: LLVMEngine | None = None
_engine_lock = threading.Lock()


def get_engine() -> LLVMEngine:
    """The process-wide engine, created on first use (this is where llvmlite gets imported)."""
    global _engine
    if _engine is None:
        with _engine_lock:
            if _engine is None:
                _engine = LLVMEngine()
                # Leak one reference on purpose: entry types and dispatch slots point into
                # this engine's code until the process exits, including during interpreter
                # shutdown, so it must never be disposed.
                import ctypes

                ctypes.pythonapi.Py_IncRef(ctypes.py_object(_engine))
    return _engine


def compile_ir(ir_text: str, *, opt: int = DEFAULT_OPT) -> CompiledModule:
    """Compile one module of LLVM IR text into the process-wide engine (see LLVMEngine)."""
    return get_engine().compile_ir(ir_text, opt=opt)


def target_triple() -> str:
    """The host triple generated modules should declare (`target triple = "..."`)."""
    return get_engine().triple


def target_data_layout() -> str:
    """The host data layout generated modules should declare (`target datalayout = "..."`)."""
    return get_engine().data_layout


def ir_header() -> str:
    """The two header lines a generated module should start with."""
    engine = get_engine()
    return f'target datalayout = "{engine.data_layout}"\ntarget triple = "{engine.triple}"\n'
