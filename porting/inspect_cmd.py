"""The work of `reduce-ladder inspect`, reached from harness.cli.census's lazy entry (it has
checked the arguments): the census of the selected variants as a table (compact or --wide) or
JSON, or the porting guide regenerated (--write-doc). Errors found here are usage errors too.
"""

from __future__ import annotations

import argparse
import json

from harness.cli.common import (
    EXIT_OK,
    UsageError,
    check_writable,
    console,
    require_dtype,
    variant_ids,
    write_json,
)
from harness.core import catalogue


def census_table(rows, title: str, *, wide: bool = False):
    """The census in ladder order with what each column counts in a legend under it."""
    from harness.report.terminal import TermColumn, short_dtype, terminal_table, with_legend
    from porting.census import COMPACT_COLUMNS, WIDE_COLUMNS, cell

    counts = WIDE_COLUMNS if wide else COMPACT_COLUMNS
    columns = [
        TermColumn("variant", lambda r: r.variant),
        TermColumn("stage", lambda r: r.stage),
        TermColumn("dtype", (lambda r: r.dtype) if wide else (lambda r: short_dtype(r.dtype))),
        *(TermColumn(h, lambda r, f=f: cell(r, f), right=True) for h, _, f in counts),
    ]
    # each stage's rank in ladder order (0, 1, ..., 8, the seeds' stages, fastest, peer)
    in_order = dict.fromkeys(v.stage for v in catalogue.ladder_order(catalogue.VARIANTS))
    rank = {st: i for i, st in enumerate(in_order)}
    ordered = sorted(rows, key=lambda r: (rank.get(r.stage, len(rank)), r.backend))
    table = terminal_table(title, columns, ordered, lambda r: "yellow" if r.spills else None)
    legend = "; ".join(f"{h}: {d}" for h, d, _ in counts)
    more = "" if wide else " (every column: --wide)"
    return with_legend(table, [legend + more])


def write_doc(args: argparse.Namespace) -> int:
    """The guide at --write-doc (checked by harness.cli.census) and its appendix beside it."""
    from pathlib import Path

    from porting import doc

    check_writable(str(doc.appendix_path(Path(args.write_doc))), "--write-doc")
    for path in doc.write(args.write_doc, census_path=args.census):
        print(f"wrote {path}")
    return EXIT_OK


def run(args: argparse.Namespace) -> int:
    """The census of the selected variants (arguments already checked by harness.cli.census)."""
    from harness.compile import nvrtc
    from porting import census, sass

    if args.write_doc:
        return write_doc(args)
    ids = variant_ids(args.variants)
    dtype = None if args.dtype == "all" else args.dtype
    selected = [catalogue.get(i) for i in ids] if ids else list(catalogue.VARIANTS)
    skipped = census.not_compiled(selected, dtype)
    variants = [v for v in selected if census.compiled(v)]
    if not variants:
        raise UsageError("no CUDA or Triton variant selected (peers have no kernel to inspect)")
    if ids and dtype is not None:
        require_dtype(variants, dtype)
    try:
        rows = census.census(variants, dtype, args.arch)
    except (sass.ToolMissing, nvrtc.NvrtcUnavailable) as e:
        raise UsageError(str(e)) from None
    if not rows:
        raise UsageError(f"none of the selected variants supports dtype {args.dtype}")
    doc = census.document(rows, args.arch, skipped)
    write_json(args.json, doc)
    if args.format == "json":
        print(json.dumps(doc, indent=1))
        return EXIT_OK
    tools = doc["tools"]
    title = (
        f"compiler census, {args.arch} (NVRTC {tools.get('nvrtc')}, Triton "
        f"{tools.get('triton')}, cuobjdump {tools.get('cuobjdump')}); static SASS counts"
    )
    out = console()
    out.print(census_table(rows, title, wide=args.wide))
    if skipped:
        out.print(
            f"{census.NOT_COMPILED}: " + ", ".join(s["variant"] for s in skipped),
            highlight=False,
        )
    spilling = [r.variant for r in rows if r.spills]
    if spilling:
        out.print(f"[yellow]local memory / spills in: {', '.join(spilling)}[/]")
    return EXIT_OK
