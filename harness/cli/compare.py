"""`reduce-ladder compare DIR DIR [DIR ...] --out DIR`

Renders on any machine (no GPU): N device folders (results/<device>/, one GPU session each; the
first is the baseline) compared variant by variant. Per result source (ladder-*.json, fastest*.json,
bench.json, seed004.json, callable.json: those present), dtype and n: each device's time, the
ratio t(baseline) / t(device) and the ratio the datasheets' memory bandwidth predicts. Writes
OUT/README.md (devices, versions from env.txt, what stands out, tables), OUT/compare_<source>.png
(ratio against n per variant family, the datasheet line dashed) and OUT/compare.json (every row).
The output depends only on the folders: it regenerates byte-identical.

A folder that does not exist or holds no result file, a folder named twice, fewer than two
folders, or an --out that cannot be written: exit 2 before anything is read or written.
"""

from __future__ import annotations

import argparse
import shlex

from harness.cli.common import EXIT_OK, UsageError, command, console
from harness.report import devices, plots, run_report
from harness.report.documents import ReportError, write_document


def cmd_compare(args: argparse.Namespace) -> int:
    try:
        folders = devices.check_folders(args.folders)
        out = run_report.writable_dir(args.out)  # created if missing
        runs = [devices.load_device(f) for f in folders]
    except ReportError as e:
        raise UsageError(str(e)) from None
    rows = devices.device_rows(runs)
    if not rows:
        raise UsageError(
            "the folders share no timed result (same source, variant, dtype and n) with the "
            f"baseline {runs[0].label}; nothing to compare"
        )
    command = shlex.join(["reduce-ladder", "compare", *args.folders, "--out", args.out])
    try:
        drawn = plots.plot_devices(out, rows, runs)
        (out / "README.md").write_text(devices.render(runs, out, drawn, command))
        write_document(out / "compare.json", devices.compare_json(runs, out))
    except (ReportError, OSError) as e:
        raise UsageError(str(e)) from None
    con = console()
    for line in devices.stand_out(runs, rows):
        con.print(line, highlight=False, markup=False)
    for name in ("README.md", "compare.json", *drawn):
        con.print(f"  wrote {out / name}", highlight=False)
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    help = "compare device folders (results/<device>/): time ratios beside the datasheet's"
    p = command(sub, "compare", cmd_compare, help, __doc__)
    folders = "device folders; the first is the baseline"
    p.add_argument("folders", nargs="+", metavar="DIR", help=folders)
    p.add_argument("--out", required=True, metavar="DIR", help="output folder (created)")
