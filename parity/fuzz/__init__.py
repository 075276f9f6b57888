"""Differential fuzzing of minitriton against real Triton: random kernel fragments, their verdicts, shrinking,
the rules that explain a GPU difference, and the run of record.

`gen` makes fragments (hypothesis), `case` packs them into kernels and judges outputs, `run` is the fuzz
section of `python -m parity`, `shrink` reduces a difference to a small kernel, `source` and `types` read a
fragment's syntax and Triton types, `explain` and `rules` name why the GPU differs, `record` sums runs into
the run of record (`python -m parity.fuzz.record`) and `amend` re-runs a run's unexplained kernels on the GPU
(`python -m parity.fuzz.amend`).
"""
