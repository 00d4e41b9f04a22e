"""`reduce-ladder bench SUITE` and `fastest-bench` (the suite "fastest" under its older command and
options): both end in suites.run_suite; the same cases run as `pytest benchmarks/ -k SUITE`."""

from __future__ import annotations

import argparse

from harness.cli import common
from harness.cli.common import EXIT_OK, UsageError
from harness.core import catalogue, sizes
from harness.studies import axis_bench, call_entries, suites

BENCH_DOC = """\
Run a named suite (harness.studies.suites): its cases (--variants, --dtypes and --sizes replace its
defaults), measured and written as one ROWS document, a table per dtype printed. Exit 2 for bad
input or no GPU (before any work; --list needs none); 1 when a variant's sum was wrong or it
failed (wrong demonstrations excepted); else 0.
"""

FASTEST_DOC = """\
The fastest pair against torch.sum, cupy.sum (CUB) and the copy, n = 2^min .. 2^max: the suite
"fastest" (`reduce-ladder bench fastest`) under its older command and options.

    reduce-ladder fastest-bench --json out.json [--dtypes float32 int32] [--min 10 --max 30]
        [--variants cuda/fastest triton/fastest cuda/reproducible ...]

Writes the suite's ROWS document and prints its table per dtype; exit 1 when one of --variants
(not a peer) failed.
"""


def _sizes_text(s: suites.Suite) -> str:
    """A suite's default sizes as its listing gives them ("2^10..2^30": every power between)."""
    ks = [n.bit_length() - 1 for n in s.sizes]
    if len(ks) > 3 and list(s.sizes) == [2**k for k in range(ks[0], ks[-1] + 1)]:
        return f"2^{ks[0]}..2^{ks[-1]}"
    return ", ".join(sizes.size_label(n) for n in s.sizes) or "the shapes of --shapes"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`fastest-bench` and `bench`."""
    help = "the fastest pair against torch.sum, cupy.sum (CUB) and copy, n = 2^10..2^30; needs "
    common.command(sub, "fastest-bench", fastest_bench, help + "--json PATH and a GPU", FASTEST_DOC,
        json=dict(required=True, help="where to write the results"),
        dtypes=dict(default=["float32", "int32"], help="default: float32 int32"),
        min=dict(type=int, default=10, help="smallest log2 n (default 10)"),
        max=dict(type=int, default=30, help="largest log2 n (default 30)"),
        variants=dict(nargs="+", default=[*call_entries.FASTEST], help="default: the pair"),
    )  # fmt: skip
    listing = "\n".join(
        f"  {s.name:<9} {s.description}\n            {', '.join(s.dtypes)}; {_sizes_text(s)}"
        for s in suites.SUITES.values()
    )
    help = "run a named suite and write its rows; the suites and options: reduce-ladder bench "
    doc = BENCH_DOC + "\nsuites:\n" + listing
    p = common.command(sub, "bench", bench, help + "--help", doc, "dtypes",
        json="write the ROWS document here",
        variants=dict(nargs="+", help="variant (or per-call entry) ids"),
        sizes=dict(nargs="+", help="e.g. 2^10 2^20,2^24"),
        reps="repetitions (per-call suite: loops) per case",
        rounds=dict(type=common.positive_int, help="measure the cases of each input in turn this "
                    "many times (default 1); a row's median is then the rounds' median"),
        shapes=dict(default="reference", choices=axis_bench.SHAPE_SETS,
                    help="the axis suite's shapes (default: reference)"),
        list=common.flag("print the cases; run nothing"),
    )  # fmt: skip
    p.add_argument("suite", choices=suites.SUITES, metavar="SUITE", help="one of the suites above")


def select(a: argparse.Namespace) -> list[suites.Case]:
    """The cases asked for; a UsageError for anything that cannot run."""
    ids = common.variant_ids(a.variants, suites.get(a.suite).known()) or None
    ns = common.parse_sizes(a.sizes)
    if a.suite == "axis" and ns:
        raise UsageError("the axis suite takes --shapes, not --sizes")
    found = suites.cases(a.suite, variants=ids, dtypes=a.dtypes, sizes=ns, shape_set=a.shapes)
    if not found:
        raise UsageError(f"nothing to run: no {a.suite} case takes that selection")
    return found


def bench(a: argparse.Namespace) -> int:
    found = select(a)
    if a.list:
        print("\n".join(c.id for c in found))
        return EXIT_OK
    common.check_writable(a.json)
    common.require_gpu("bench", "it measures the suite's cases")
    keys = ("variants", "dtypes", "sizes", "reps", "rounds")
    options = {k: getattr(a, k) for k in keys if getattr(a, k)}
    return suites.run_suite(a.suite, found, a.json, options, a.reps, rounds=a.rounds or 1)


def fastest_bench(a: argparse.Namespace) -> int:
    if bad := [v for v in a.variants if v not in catalogue.BY_ID or not catalogue.get(v).launch]:
        raise UsageError(f"not a variant with a kernel: {', '.join(bad)}")
    common.check_writable(a.json)
    common.require_gpu("fastest-bench", "it times kernels against CuPy's and torch's", cupy=True)
    ns = [2**k for k in range(a.min, a.max + 1)]
    found = suites.cases(
        "fastest", variants=[*a.variants, *suites.FASTEST_PEERS], dtypes=a.dtypes, sizes=ns
    )
    options = {k: getattr(a, k) for k in ("json", "dtypes", "min", "max", "variants")}
    return suites.run_suite("fastest", found, a.json, options, counted=a.variants)
