"""The programs that produce results a user runs or the report reads: the named suites
(suites.py: the ladder session, the sweep, seed 004, the fastest pair's bench, the per-call
bench, and their one runner, run by `reduce-ladder bench` and by benchmarks/; axis_bench.py: the
axis family's), seed 001's host study, the accuracy study, the several-GPU sum, Nsight Compute and
compute-sanitizer runs. (One-off experiments, such as the ablation that chose the fastest pair's
design and Inductor's code capture, live in experiments/, outside the package: they import
harness, never the reverse.)
May import: every layer below (core, compile, launch, check, report).
"""
