"""`reduce-ladder report`, `compare` and `list`: what renders on any machine, no GPU needed."""

from __future__ import annotations

import argparse
import json
import shlex

from harness.cli.common import EXIT_OK, UsageError, command, console, parse_size, usage_errors
from harness.core import catalogue, dtypes
from harness.core.variant import Variant
from harness.report import devices, plots, run_report
from harness.report import markdown as terminal
from harness.report.documents import ReportError, write_document
from harness.report.ladder_table import ladder_console_table
from harness.report.markdown import Column, KeyedText, short_id

REPORT = """\
`reduce-ladder run --json` documents or pytest-benchmark JSON rendered (no GPU needed): the ladder
table on the terminal (compact, fits 100 columns; --wide: every column), DIR/report.md
and the PNG plots; several runs are each compared with the first. --host, --accuracy, --axis
and --callable render a study's page beside report.md and link it from there; --doc rewrites the
generated blocks of a Markdown file (docs/ladder.md, README.md). A run without timings (the CPU
path's) or an --n the run lacks is an error; nothing is written.
"""
COMPARE = """\
N device folders (results/<device>/; the first the baseline), rendered (no GPU needed), compared
variant by variant, per result source, dtype and n: each device's time, t(baseline) /
t(device) and the datasheets' ratio. Writes OUT/README.md, OUT/compare_<source>.png and
OUT/compare.json, byte-identical from the same folders. A missing or empty folder, one named
twice, fewer than two, or an --out that cannot be written: exit 2 before anything is written.
"""


def cmd_report(args: argparse.Namespace) -> int:
    # the studies' pages asked for: option -> its document(s)
    pages = {opt: _listed(getattr(args, opt)) for opt in run_report.PAGES if getattr(args, opt)}
    with usage_errors(ReportError):
        ref_n = parse_size(args.n) if args.n else None
        for doc in args.readme or ():
            run_report.check_readme(doc)  # before rendering: fail fast on no block
        written = run_report.write_report(args.runs, args.out, ref_n, pages)
        out, out_dir, main = console(), written.out_dir, written.runs[0]
        for dtype, n in written.ref_n.items():  # titled with the run's device, dtype and n
            out.print(ladder_console_table(main.rows, n, dtype, wide=args.wide))
        for table in devices.runs_rich_tables(written.runs, written.compared):
            out.print(table)
        for name in ("report.md", *written.plots, *written.pages):
            out.print(f"  wrote {out_dir / name}", highlight=False)
        if args.readme:
            argv = ["reduce-ladder", "report", *args.runs, "--out", args.out]
            for flag in ("n", *run_report.PAGES):
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


def twin(v: Variant, wide: bool = False) -> str:
    """The twin cell: a CUDA variant's Triton twin; on a Triton row the CUDA ids it twins (compact:
    how many, their rows name it); else the other backend's counterpart (the fastest pair: same
    goal, its own tiles), "(id)" when compact. Compact ids without their prefix."""
    if v.twin:
        return v.twin if wide else short_id(v.twin)
    if v.twin_of:
        return ", ".join(v.twin_of) if wide else f"{len(v.twin_of)} CUDA"
    if v.counterpart:
        return f"{v.counterpart} (counterpart)" if wide else f"({short_id(v.counterpart)})"
    return "-"


COMPACT_KEY = (
    "twin: a CUDA variant's Triton twin (same tiles); on a Triton row, how many CUDA variants "
    "it twins; (id): the other backend's counterpart, not a twin. wrong: a wrong "
    "demonstration (its race is the point). Seed labels and every column: --wide"
)


def catalogue_table(variants: list[Variant], *, wide: bool = False):
    """The catalogue in ladder order: compact (dtypes and twins shortened, tile mappings as keys
    spelled out in the legend under the table) or wide (seed labels too, every column in full)."""
    mappings, C = KeyedText(), Column
    columns = [
        C("id", lambda v: v.id, whole=True), C("stage", lambda v: v.stage),
        *([C("seeds", lambda v: " ".join(v.seeds) or "-")] if wide else []),
        C("dtypes", lambda v: ",".join(v.dtypes if wide else map(terminal.short_dtype, v.dtypes)),
          whole=not wide),
        C("twin", lambda v: twin(v, wide), whole=not wide),
        C("tile mapping", lambda v: v.tile_mapping) if wide
        else C("map", lambda v: mappings.key(v.tile_mapping)),
        C("wrong", lambda v: ("WRONG demo" if wide else "WRONG") if v.wrong else ""),
    ]  # fmt: skip
    title = f"reduce-ladder catalogue ({len(variants)} variants)"
    style = lambda v: "red" if v.wrong else None  # noqa: E731
    table = terminal.terminal_table(title, columns, catalogue.ladder_order(variants), style)
    if wide:
        return table
    legend = ["map: the tile mapping (blocks, tiles per block, threads)"]
    legend += [f"  {line}" for line in mappings.legend()]
    legend += ["dtypes: " + ", ".join(f"{terminal.short_dtype(d)} {d}" for d in dtypes.NAMES)]
    legend += [COMPACT_KEY]
    return terminal.with_legend(table, legend)


def cmd_list(args: argparse.Namespace) -> int:
    vs = catalogue.select(None, dtype=args.dtype, backend=args.backend, include_wrong=True)
    if args.format == "json":
        print(json.dumps([v.record() for v in vs], indent=1))
    else:
        console().print(catalogue_table(vs, wide=args.wide))
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`report`, `compare` and `list`."""
    help = "render runs (CLI or pytest-benchmark JSON) into tables, report.md and plots"
    blocks = "rewrite its generated blocks (ladder:begin/end, ladder-summary:begin/end); repeatable"
    per_call = "also the per-call-from-Python figures (several: one table, the later files' "
    per_call += "entries beside the first's, e.g. a REDUCE_LADDER_NATIVE=1 run)"
    p = command(sub, "report", cmd_report, help, REPORT,
        out=dict(required=True, help="output directory"),
        n=dict(metavar="N", help="n of the ladder table/plot (default: 2^25 or below)"),
        host=dict(metavar="HOST.json", help="also render a `reduce-ladder host` study"),
        accuracy=dict(metavar="ACCURACY.json", help="also render a `reduce-ladder accuracy` study"),
        axis=dict(nargs="+", metavar="AXIS.json", help="also `bench axis` runs, together"),
        wide="every column in the terminal table",
        callable=dict(nargs="+", metavar="CALLABLE.json", help=per_call),
    )  # fmt: skip
    p.add_argument("runs", nargs="+", metavar="RUN.json", help="one run, or several to compare")
    p.add_argument(
        "--doc", "--readme", dest="readme", action="append", metavar="FILE.md", help=blocks
    )
    help = "compare device folders (results/<device>/): time ratios beside the datasheet's"
    p = command(sub, "compare", cmd_compare, help, COMPARE,
                out=dict(required=True, help="output folder (created)"))  # fmt: skip
    p.add_argument("folders", nargs="+", metavar="DIR",
                   help="device folders; the first is the baseline")  # fmt: skip
    command(sub, "list", cmd_list, "print the catalogue", None,
        format=dict(choices=("table", "json"), default="table"),
        dtype="only the variants taking this dtype",
        backend=dict(choices=("cuda", "triton", "peer")),
        wide="every column: seed labels, twins, tile mappings in full (default: a table that fits "
        "100 columns)",
    )  # fmt: skip
