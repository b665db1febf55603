"""Tier 1, the baseline: copy-and-patch of machine-code stencils LLVM builds once (see
docs/baseline.md). `code.compile_baseline` is the entry point; nothing here is imported until
a function is compiled in this tier."""
