"""Sandbox kernels on the user's side: start, confine, pool, run, read back (local or on a gateway)."""
