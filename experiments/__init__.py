"""One-off experiments: each asked one question of the product, answered it with committed
numbers, and is kept as the record of how (experiments/README.md lists them).

Each is a folder experiments/NAME/ with its README.md (the question, how to run it, the finding
and the committed numbers it rests on), its code and a __main__.py: `python -m experiments.NAME`
from the repository root. Not installed with the package.

May import: harness (any layer) and triton_kernels. Nothing in harness/, triton_kernels/ or
benchmarks/ imports an experiment, but a `reduce-ladder` command kept as the alias of a moved one
(harness/cli/ablation.py), which imports it inside the function that runs it
(tests/test_layout.py).
"""
