"""The work of `reduce-ladder inspect` (harness.cli.census has checked the arguments): the census
as a table (compact or --wide) or JSON, or the porting guide regenerated (--write-doc). Errors
found here are usage errors too.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from harness.cli import common
from harness.compile import nvrtc
from harness.core import catalogue
from harness.report.documents import ReportError
from harness.report.markdown import Column, short_dtype, terminal_table, with_legend
from porting import census, doc, sass
from porting.census import COMPACT_COLUMNS, WIDE_COLUMNS, cell


def census_table(rows, title: str, *, wide: bool = False):
    """The census in ladder order with what each column counts in a legend under it."""
    counts = WIDE_COLUMNS if wide else COMPACT_COLUMNS
    columns = [
        Column("variant", lambda r: r.variant),
        Column("stage", lambda r: r.stage),
        Column("dtype", (lambda r: r.dtype) if wide else (lambda r: short_dtype(r.dtype))),
        *(Column(h, lambda r, f=f: cell(r, f), right=True) for h, _, f in counts),
    ]
    ordered = sorted(rows, key=lambda r: (catalogue.stage_key(r.stage), r.backend))
    table = terminal_table(title, columns, ordered, lambda r: "yellow" if r.spills else None)
    legend = "; ".join(f"{h}: {d}" for h, d, _ in counts)
    return with_legend(table, [legend + ("" if wide else " (every column: --wide)")])


def run(args: argparse.Namespace) -> int:
    if args.write_doc:
        common.check_writable(str(doc.appendix_path(Path(args.write_doc))), "--write-doc")
        with common.usage_errors(ReportError):  # an unreadable --census
            written = doc.write(args.write_doc, census_path=args.census)
        print("\n".join(f"wrote {path}" for path in written))
        return common.EXIT_OK
    ids = common.split_ids(args.variants)
    dtype = None if args.dtype == "all" else args.dtype
    selected = [catalogue.get(i) for i in ids] if ids else list(catalogue.VARIANTS)
    skipped = census.not_compiled(selected, dtype)
    if not (variants := [v for v in selected if census.compiled(v)]):
        raise common.UsageError(
            "no CUDA or Triton variant selected (peers have no kernel to inspect)"
        )
    if ids and dtype is not None:
        common.require_dtype(variants, dtype)
    with common.usage_errors(sass.ToolMissing, nvrtc.NvrtcUnavailable):
        rows = census.census(variants, dtype, args.arch)
    if not rows:
        raise common.UsageError(f"none of the selected variants supports dtype {args.dtype}")
    document = census.document(rows, args.arch, skipped)
    common.write_json(args.json, document)
    if args.format == "json":
        print(json.dumps(document, indent=1))
        return common.EXIT_OK
    tools = document["tools"]
    title = f"compiler census, {args.arch} (NVRTC {tools['nvrtc']}, Triton {tools['triton']}, "
    title += f"cuobjdump {tools['cuobjdump']}); static SASS counts"
    out = common.console()
    out.print(census_table(rows, title, wide=args.wide))
    if skipped:
        names = ", ".join(s["variant"] for s in skipped)
        out.print(f"{census.NOT_COMPILED}: {names}", highlight=False)
    if spilling := [r.variant for r in rows if r.spills]:
        out.print(f"[yellow]local memory / spills in: {', '.join(spilling)}[/]")
    return common.EXIT_OK
