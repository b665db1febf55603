"""x86-64 relocation types: the kinds of hole a stencil can have (psABI table 4.9).

Apart from elf.py, which reads them, so that patching stencils (emit.py) does not load the
ELF reader: a process that finds the stencil cache valid never parses an object file.
"""

R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32 = 1, 2, 4
R_X86_64_32, R_X86_64_32S = 10, 11
RELOC_NAMES = {R_X86_64_64: "R_X86_64_64", R_X86_64_PC32: "R_X86_64_PC32",
               R_X86_64_PLT32: "R_X86_64_PLT32", R_X86_64_32: "R_X86_64_32",
               R_X86_64_32S: "R_X86_64_32S"}
