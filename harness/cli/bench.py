"""`reduce-ladder bench SUITE [--json PATH] [selection]`: any named suite (harness.studies.suites)
run and written as one ROWS document (its own parser: harness.studies.bench.main)."""

from __future__ import annotations

import argparse

from harness.cli.common import EXIT_USAGE
from harness.studies import bench

COMMAND = "bench"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        COMMAND,
        add_help=False,  # its own parser (harness.studies.bench.main) answers --help
        help="run a named suite (ladder, sweep, seed004, fastest, callable) and write its rows; "
        "options: reduce-ladder bench --help",
    )
    p.set_defaults(func=cmd_bench, takes_study_argv=True)


def cmd_bench(args: argparse.Namespace) -> int:
    try:
        return bench.main(args.study_argv, prog=f"reduce-ladder {COMMAND}")
    except SystemExit as e:  # its argparse: --help (0) or a usage error (2)
        return EXIT_USAGE if isinstance(e.code, str) else e.code or 0
