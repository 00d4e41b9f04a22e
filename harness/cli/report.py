"""`reduce-ladder report RUN.json [RUN2.json ...] --out DIR [--n N] [--doc FILE.md ...] [--wide]`

Renders on any machine (no GPU) `reduce-ladder run --json` documents or pytest-benchmark JSON:
the ladder table on the terminal (compact, fits 100 columns; --wide: every column), DIR/report.md
and the PNG plots; several runs are each compared with the first. --host, --accuracy, --axis
and --callable render a study's page beside report.md and link it from there; --doc rewrites the
generated blocks of a Markdown file (docs/ladder.md, README.md). A run without timings (the CPU
path's) or an --n the run lacks is an error; nothing is written.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from harness.cli.common import EXIT_OK, UsageError, command, console, parse_size, usage_errors
from harness.core.sizes import size_label
from harness.report import (
    accuracy_tables,
    axis_tables,
    devices,
    host_tables,
    plots,
    run_report,
    tables,
)
from harness.report.documents import ReportError, write_document
from harness.report.ladder_table import ladder_console_table

COMPARE = """`reduce-ladder compare DIR DIR [DIR ...] --out DIR`

Renders on any machine (no GPU): N device folders (results/<device>/; the first the baseline)
compared variant by variant, per result source, dtype and n: each device's time, t(baseline) /
t(device) and the datasheets' ratio. Writes OUT/README.md, OUT/compare_<source>.png and
OUT/compare.json, byte-identical from the same folders. A missing or empty folder, one named
twice, fewer than two, or an --out that cannot be written: exit 2 before anything is written.
"""

# The pages rendered beside report.md and linked from it: (option, its module, the link's title).
PAGES = (
    ("host", host_tables, "Seed 001: host-driven, end to end from host memory"),
    ("accuracy", accuracy_tables, "Accuracy: every variant against the exact sum"),
    ("axis", axis_tables, "Sums along an axis: the axis family against the peers"),
)


def cmd_report(args: argparse.Namespace) -> int:
    # The pages asked for: (its module, the link's title, the file(s) it renders).
    pages = [(page, title, getattr(args, opt)) for opt, page, title in PAGES if getattr(args, opt)]
    with usage_errors(ReportError):
        ref_n = parse_size(args.n) if args.n else None
        for doc in args.readme or ():
            run_report.check_readme(doc)  # before rendering: fail fast on no block
        for page, _, source in pages:
            page.load(source)  # checked before anything is written
        callable_doc = tables.load_callable(*args.callable) if args.callable else None
        written = run_report.write_report(args.runs, args.out, ref_n)
        out, out_dir, main = console(), written.out_dir, written.runs[0]
        for page, title, source in pages:
            for name in page.write(source, out_dir):
                out.print(f"  wrote {name}", highlight=False)
            names, link = ", ".join(Path(s).name for s in _listed(source)), page.MARKDOWN_NAME
            report_md = out_dir / "report.md"  # a section that links the page
            text = f"\n## {title}\n\nSee [{link}]({link}) (rendered from `{names}`).\n"
            report_md.write_text(report_md.read_text() + text)
        if callable_doc is not None:
            for name in tables.write_callable(callable_doc, out_dir, main.records, args.callable):
                out.print(f"  wrote {out_dir / name}", highlight=False)
        for dtype, n in written.ref_n.items():
            title = f"{main.device}, {dtype}, n = {n:,} ({size_label(n)})"
            out.print(ladder_console_table(main.records, n, dtype, wide=args.wide, title=title))
        for table in devices.runs_rich_tables(written.runs, written.compared):
            out.print(table)
        for name in ("report.md", *written.plots):
            out.print(f"  wrote {out_dir / name}", highlight=False)
        if args.readme:
            argv = ["reduce-ladder", "report", *args.runs, "--out", args.out]
            for flag in ("n", "host", "accuracy", "callable", "axis"):
                given = getattr(args, flag)
                argv += [f"--{flag}", *_listed(given)] if given else []
            command = shlex.join(argv + [a for doc in args.readme for a in ("--doc", doc)])
            for doc in args.readme:
                run_report.update_readme(doc, written, command)
                out.print(f"  updated the generated blocks in {doc}", highlight=False)
    return EXIT_OK


def _listed(given: str | list[str]) -> list[str]:
    """An option's value as a list (one file, or the files of an nargs="+" option)."""
    return [given] if isinstance(given, str) else given


def cmd_compare(args: argparse.Namespace) -> int:
    with usage_errors(ReportError):
        folders = devices.check_folders(args.folders)
        out = run_report.writable_dir(args.out)  # created if missing
        runs = [devices.load_device(f) for f in folders]
    rows = devices.device_rows(runs)
    if not rows:
        raise UsageError(
            "the folders share no timed result (same source, variant, dtype and n) with the "
            f"baseline {runs[0].label}; nothing to compare"
        )
    command = shlex.join(["reduce-ladder", "compare", *args.folders, "--out", args.out])
    with usage_errors(ReportError, OSError):
        drawn = plots.plot_devices(out, rows, runs)
        (out / "README.md").write_text(devices.render(runs, out, drawn, command))
        write_document(out / "compare.json", devices.compare_json(runs, out))
    con = console()
    for line in devices.stand_out(runs, rows):
        con.print(line, highlight=False, markup=False)
    for name in ("README.md", "compare.json", *drawn):
        con.print(f"  wrote {out / name}", highlight=False)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    help = "render runs (CLI or pytest-benchmark JSON) into tables, report.md and plots"
    add = command(sub, "report", cmd_report, help, __doc__).add_argument
    add("runs", nargs="+", metavar="RUN.json", help="one run, or several to compare with the first")
    add("--out", required=True, metavar="DIR", help="output directory")
    add("--n", metavar="N", help="n of the ladder table/plot (default: 2^25 or below)")
    blocks = "rewrite its generated blocks (ladder:begin/end, ladder-summary:begin/end); repeatable"
    add("--doc", "--readme", dest="readme", action="append", metavar="FILE.md", help=blocks)
    add("--host", metavar="HOST.json", help="also render a `reduce-ladder host` study")
    add("--accuracy", metavar="ACCURACY.json", help="also render a `reduce-ladder accuracy` study")
    axis = "also render `bench axis` runs (their rows together)"
    add("--axis", nargs="+", metavar="AXIS.json", help=axis)
    add("--wide", action="store_true", help="every column in the terminal table")
    per_call = "also the per-call-from-Python figures (several: one table, the later files' "
    per_call += "entries beside the first's, e.g. a REDUCE_LADDER_NATIVE=1 run)"
    add("--callable", nargs="+", metavar="CALLABLE.json", help=per_call)
    help = "compare device folders (results/<device>/): time ratios beside the datasheet's"
    p = command(sub, "compare", cmd_compare, help, COMPARE)
    folders = "device folders; the first is the baseline"
    p.add_argument("folders", nargs="+", metavar="DIR", help=folders)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
