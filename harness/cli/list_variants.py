"""`reduce-ladder list`: the catalogue, as a table or as JSON records. The table fits 100
columns by default (id, stage, dtypes shortened, twin, a key to the tile mapping spelled out under
the table); --wide shows every column in full (seed labels, the twin ids, the tile mapping's
words, the wrong flag)."""

from __future__ import annotations

import argparse
import json

from harness.cli.common import EXIT_OK, command, console
from harness.core import catalogue, dtypes
from harness.core.variant import Variant
from harness.report import markdown as terminal
from harness.report.markdown import KeyedText, TermColumn, short_id


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
    mappings, C = KeyedText(), TermColumn
    columns = [
        C("id", lambda v: v.id, whole=True), C("stage", lambda v: v.stage),
        *([C("seeds", lambda v: " ".join(v.seeds) or "-")] if wide else []),
        C("dtypes", lambda v: ",".join(v.dtypes) if wide else terminal.short_dtypes(v.dtypes),
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
    legend += ["dtypes: " + terminal.dtype_key(dtypes.NAMES), COMPACT_KEY]
    return terminal.with_legend(table, legend)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = command(sub, "list", cmd_list, "print the catalogue")
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--dtype", choices=dtypes.NAMES, help="only the variants taking this dtype")
    p.add_argument("--backend", choices=("cuda", "triton", "peer"))
    wide = "every column: seed labels, twins, tile mappings in full (default: a table that fits "
    p.add_argument("--wide", action="store_true", help=wide + "100 columns)")


def cmd_list(args: argparse.Namespace) -> int:
    vs = catalogue.select(None, dtype=args.dtype, backend=args.backend, include_wrong=True)
    if args.format == "json":
        print(json.dumps([v.record() for v in vs], indent=1))
    else:
        console().print(catalogue_table(vs, wide=args.wide))
    return EXIT_OK
