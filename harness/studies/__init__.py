"""The programs that produce results: the named suites (suites.py, one runner for `reduce-ladder
bench`, run / check and benchmarks/), seed 001's host study, the accuracy study, the several-GPU
sum, Nsight Compute and compute-sanitizer runs. (One-off experiments live in experiments/: they
import harness, never the reverse.)
May import: every layer below (core, compile, launch, check, report).
"""
