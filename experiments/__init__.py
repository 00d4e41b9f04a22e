"""One-off experiments: each asked one question of the product, answered it with committed
numbers, and is kept as the record of how (experiments/README.md lists them).

Each is a folder experiments/NAME/ with its README.md (the question, how to run it, the finding
and the committed numbers it rests on), its code and a __main__.py: `python -m experiments.NAME`
from the repository root. Not installed with the package.

May import: harness (any layer), triton_kernels and porting. Nothing in harness/, triton_kernels/ or
benchmarks/ imports an experiment, but a `reduce-ladder` command kept as the alias of a moved one
(harness/cli/main.py), which imports it inside the function that runs it
(tests/test_layout.py).
"""


def finish(doc: dict, path: str) -> int:
    """Write an experiment's document and say its wrong verdicts (rows of {"n", "verdicts"}):
    the exit code, 1 if any verdict is not "ok"."""
    from harness.report import documents

    documents.write_document(path, doc)
    bad = [(r["n"], k) for r in doc["rows"] for k, v in r["verdicts"].items() if v != "ok"]
    print(f"\nwall {doc['wall_s']:.0f} s; {len(bad)} wrong: {bad}")
    return 1 if bad else 0
