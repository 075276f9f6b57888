"""Reading kernel source: one parse (source), the constructs Triton refuses (refusals), names bound only in
a loop (scopes), the rewrite that runs Triton's compile-time checks (rewrite, inserted_calls), and the
globals a kernel sees (kernel_globals)."""
