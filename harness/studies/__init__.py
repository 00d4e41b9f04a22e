"""The programs that produce results a user runs or the report reads: the ladder session, seed
001's host study, the fastest pair's bench, the accuracy study, the per-call bench, the
several-GPU sum, Nsight Compute and compute-sanitizer runs. (One-off experiments, such as the
ablation that chose the fastest pair's design and Inductor's code capture, live in experiments/,
outside the package: they import harness, never the reverse.)
May import: every layer below (core, compile, launch, check, report).
"""
