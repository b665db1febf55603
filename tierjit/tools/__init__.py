"""Tools of the `tierjit` command: what the JIT did, as a report, a trace, a plot, an
explanation. Imported by tierjit.cli only; nothing here is loaded by `import tierjit`."""
