"""Correctness: golden sums, derived error bounds, verification of a variant's result.
May import: harness.core, harness.compile, harness.launch.
"""
