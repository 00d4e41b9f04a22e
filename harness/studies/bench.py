"""Run a named suite (harness.studies.suites) from the command line: its cases, selected, measured
and written as one ROWS document, a table per dtype printed.

--variants, --dtypes and --sizes replace the suite's defaults; --list prints the cases and runs
nothing (no GPU needed). Exit 2 for bad input or no GPU (before any work); 1 when a variant's sum
was wrong or it failed (wrong demonstrations excepted); else 0.

`reduce-ladder bench SUITE` is main; the older names: `reduce-ladder fastest-bench` (fastest_bench,
its own options) and `python -m harness.studies.callable_bench` (bench callable).
"""

from __future__ import annotations

import argparse
import sys
import time

from harness.core import catalogue, device, dtypes, sizes
from harness.report import axis_tables, documents, records, tables
from harness.report.documents import ReportError
from harness.studies import axis_bench, call_entries, suites


def _sizes_text(s: suites.Suite) -> str:
    """A suite's default sizes as its listing gives them ("2^10..2^30": every power between)."""
    ks = [n.bit_length() - 1 for n in s.sizes]
    if len(ks) > 3 and list(s.sizes) == [2**k for k in range(ks[0], ks[-1] + 1)]:
        return f"2^{ks[0]}..2^{ks[-1]}"
    return ", ".join(sizes.size_label(n) for n in s.sizes) or "the shapes of --shapes"


def parser(prog: str) -> argparse.ArgumentParser:
    listing = "\n".join(
        f"  {s.name:<9} {s.description}\n            {', '.join(s.dtypes)}; {_sizes_text(s)}"
        for s in suites.SUITES.values()
    )
    p = argparse.ArgumentParser(
        prog=prog,
        description=__doc__.split("\n\n")[0] + "\n\nsuites:\n" + listing,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("suite", help="one of: " + ", ".join(suites.SUITES))
    p.add_argument("--json", metavar="PATH", help="write the ROWS document here")
    p.add_argument("--variants", nargs="+", metavar="ID", help="variant (or per-call entry) ids")
    p.add_argument("--dtypes", nargs="+", metavar="D", help="element types")
    p.add_argument("--sizes", nargs="+", metavar="N", help="e.g. 2^10 2^20,2^24")
    p.add_argument("--reps", type=int, help="repetitions (per-call suite: loops) per case")
    shapes = "the axis suite's shapes: reference (default), tritonbench, all"
    p.add_argument("--shapes", default="reference", metavar="SET", help=shapes)
    p.add_argument("--list", action="store_true", help="print the cases; run nothing")
    return p


def select(p: argparse.ArgumentParser, a: argparse.Namespace) -> list[suites.Case]:
    """The cases asked for; p.error (exit 2) for anything that cannot run."""
    if a.suite not in suites.SUITES:
        p.error(f"unknown suite {a.suite!r}; suites: {', '.join(suites.SUITES)}")
    suite = suites.get(a.suite)
    ids = [i.strip() for v in a.variants or () for i in v.split(",") if i.strip()] or None
    valid = suites.valid_ids(suite)
    unknown = [i for i in ids or () if i not in valid]
    if unknown:
        close = {i: catalogue.close_ids(i, valid) for i in unknown}
        p.error("; ".join(f"not in suite {a.suite}: {i!r}" + (f" (did you mean "
                f"{' or '.join(c)}?)" if c else "") for i, c in close.items()))  # fmt: skip
    bad = [d for d in a.dtypes or () if d not in dtypes.NAMES]
    if bad:
        p.error(f"unknown dtype(s) {', '.join(bad)}; valid: {', '.join(dtypes.NAMES)}")
    if a.reps is not None and a.reps < 1:
        p.error("--reps must be at least 1")
    try:
        ns = sizes.parse_sizes(a.sizes)
    except ValueError as e:
        p.error(str(e))
    if a.suite == "axis" and a.shapes not in axis_bench.SHAPE_SETS:
        p.error(f"unknown shape set {a.shapes!r}; sets: {', '.join(axis_bench.SHAPE_SETS)}")
    if a.suite == "axis" and ns:
        p.error("the axis suite takes --shapes, not --sizes")
    found = suites.cases(a.suite, variants=ids, dtypes=a.dtypes, sizes=ns, shape_set=a.shapes)
    if not found:
        p.error(f"nothing to run: no {a.suite} case takes that selection")
    return found


def main(argv: list[str] | None = None, prog: str = "reduce-ladder bench") -> int:
    p = parser(prog)
    a = p.parse_args(argv)
    found = select(p, a)
    if a.list:
        print("\n".join(c.id for c in found))
        return 0
    if a.json:
        try:
            documents.check_output(a.json, option="--json")
        except ReportError as e:
            p.error(str(e))
    ok, why = device.torch_gpu()
    if not ok:
        print(f"{prog} {a.suite}: needs an NVIDIA GPU: {why}", file=sys.stderr)
        return 2
    options = {k: getattr(a, k) for k in ("variants", "dtypes", "sizes", "reps") if getattr(a, k)}
    return run_suite(a.suite, found, a.json, options, a.reps)


FASTEST_DOC = """\
The fastest pair against torch.sum, cupy.sum (CUB) and the copy, n = 2^min .. 2^max: the suite
"fastest" (`reduce-ladder bench fastest`) under its older command and options.

    reduce-ladder fastest-bench --json out.json [--dtypes float32 int32] [--min 10 --max 30]
        [--variants cuda/fastest triton/fastest cuda/reproducible ...]

Writes the suite's ROWS document and prints its table per dtype; exit 1 when one of --variants
(not a peer) failed.
"""


def fastest_bench(argv: list[str] | None = None, prog: str = "reduce-ladder fastest-bench") -> int:
    """`reduce-ladder fastest-bench` (FASTEST_DOC); its --json path and the GPU are checked
    before it is called (harness.cli.common.run_study)."""
    p = argparse.ArgumentParser(
        prog=prog, description=FASTEST_DOC, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--json", required=True, help="where to write the results")
    p.add_argument("--dtypes", nargs="+", default=["float32", "int32"])
    p.add_argument("--min", type=int, default=10, help="smallest log2 n (default 10)")
    p.add_argument("--max", type=int, default=30, help="largest log2 n (default 30)")
    default = list(suites.FASTEST_DEFAULT)
    p.add_argument("--variants", nargs="+", default=default, help="default: the fastest pair")
    a = p.parse_args(argv)
    if bad := [v for v in a.variants if v not in catalogue.BY_ID or not catalogue.get(v).launch]:
        p.error(f"not a variant with a kernel: {', '.join(bad)}")
    ns = [2**k for k in range(a.min, a.max + 1)]
    found = suites.cases(
        "fastest", variants=[*a.variants, *suites.FASTEST_PEERS], dtypes=a.dtypes, sizes=ns
    )
    return run_suite("fastest", found, a.json, vars(a), counted=a.variants)


def run_suite(name, found, json_path, options, reps=None, counted=None) -> int:
    """The cases measured, their ROWS document written (json_path, checked before), a table per
    dtype printed (axis: its own pivot), and the failures; 1 when a variant failed (counted: only
    these ids count), else 0. `bench` and `fastest-bench` both end here."""
    chosen = None  # the fastest suite's document names the Triton configurations chosen
    if name == "fastest":
        from triton_kernels.fastest import chosen
    t0 = time.time()
    rows = suites.run(found, reps, progress=_progress)
    head = {"triton_configs": chosen()} if chosen else {}
    doc = records.rows_document(rows, suite=name, device=device.device_info(), options=options,
                                wall_s=time.time() - t0, **head)  # fmt: skip
    if json_path:
        documents.write_document(json_path, doc)
    if name == "axis":  # per (dtype, shape, dim), the stages and the peers: its own pivot
        print(axis_tables.markdown(rows, doc["device"].get("name", "")))
    for dtype in dict.fromkeys(r.dtype for r in rows) if name != "axis" else ():
        print(f"\n{name}, {dtype}: microseconds (x torch.sum = its time / this time)")
        print(tables.suite_table(rows, dtype))
    over = call_entries.overheads(rows) if name == "callable" else []
    if over:  # reduce_sum's cost over the cached launch it runs (its `launch ...` entries ran)
        print("\n".join(["\nreduce_sum over its cached launch:", *over]))
    bad = [r for r in suites.failed(rows) if counted is None or r.variant in counted]
    for r in bad:
        print(f"  {r.variant} {r.dtype} n={r.n}: {r.check} {r.info.get('message', '')}")
    if head:
        print(f"triton configs: {head['triton_configs']}")
    print(f"summary: {len(found)} cases, {len(rows)} rows, {len(bad)} wrong/error")
    return 1 if bad else 0


def _progress(case: suites.Case, rows: list) -> None:
    bad = [r for r in rows if r.check in ("wrong", "error")]
    if bad:
        print(f"  {case.id}: {bad[0].check} {bad[0].info.get('message', '')}", file=sys.stderr)
