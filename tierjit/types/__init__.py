"""Types: the lattice, per-op rules and inference."""
