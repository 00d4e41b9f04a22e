"""`reduce-ladder list`: the catalogue, as a table or as JSON records.

reduce-ladder list [--format json] [--dtype int32] [--backend cuda|triton|peer]
"""

from __future__ import annotations

import argparse
import json

from harness.cli.common import EXIT_OK, console, parse_dtype
from harness.core import catalogue


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("list", help="print the catalogue")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--dtype", default=None, help="only the variants that support this dtype")
    p.add_argument("--backend", choices=("cuda", "triton", "peer"), default=None)
    p.set_defaults(func=cmd_list)


def cmd_list(args: argparse.Namespace) -> int:
    dtype = parse_dtype(args.dtype) if args.dtype else None
    vs = catalogue.select(None, dtype=dtype, backend=args.backend, include_wrong=True)
    if args.format == "json":
        print(json.dumps([v.record() for v in vs], indent=1))
        return EXIT_OK
    from rich.table import Table

    table = Table(title=f"reduce-ladder catalogue ({len(vs)} variants)")
    for h in ("id", "stage", "seeds", "twin", "dtypes", "tile mapping", "wrong"):
        table.add_column(h, overflow="fold")
    for v in catalogue.ladder_order(vs):
        table.add_row(
            v.id,
            v.stage,
            " ".join(v.seeds) or "-",
            v.twin or (", ".join(v.twin_of) if v.twin_of else "-"),
            ",".join(v.dtypes),
            v.tile_mapping,
            "WRONG demo" if v.wrong else "",
        )
    console().print(table)
    return EXIT_OK
