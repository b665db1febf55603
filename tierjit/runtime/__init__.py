"""Runtime: dispatchers, native entry objects, deoptimisation."""
