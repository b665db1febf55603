"""Variants: millions of run-time-generated functions without compiling each one.

    templates     template.py      one function, many values of some free names (bind)
    structures    structure.py     source / ast with float literals abstracted -> templates
    sources       source.py        parsing, linecache registration, building functions
    encoding      encoding.py      the compact array encoding of register-machine programs
    lowering      straightline.py  straight-line templates -> register code with const slots
    evaluation    population.py    tierjit.evaluate: plan, encode, run, call what remains
                  vm_ir.py, vm.py  the native evaluator (LLVM IR, compiled once per dtype)
                  reference.py     NumPy op at a time: the definition and the test oracle
    executors     executors.py     concurrent.futures Executors and Dask clients

The public entry points are tierjit.template, compile_source, compile_ast and evaluate;
`Programs`, `Op` and `random_programs` (the encoding) are importable from here.
"""

from __future__ import annotations

from .encoding import Op, Programs, random_programs

__all__ = ["Op", "Programs", "random_programs"]
