"""`reduce-ladder ablation --json PATH [--log2 ...]`: what each design choice of the fastest pair
buys, one at a time (harness.studies.fastest_ablation, also runnable as
`python -m harness.studies.fastest_ablation`). Needs a GPU with CuPy."""

from __future__ import annotations

import argparse

from harness.cli.common import run_study
from harness.studies import fastest_ablation

COMMAND = "ablation"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        COMMAND,
        add_help=False,  # its own parser (harness.studies.fastest_ablation.main) answers --help
        help="the fastest pair's design choices, one by one, and the launch probe; needs "
        "--json PATH and a GPU (options: reduce-ladder ablation --help)",
    )
    p.set_defaults(func=cmd_ablation, takes_study_argv=True)


def cmd_ablation(args: argparse.Namespace) -> int:
    return run_study(
        COMMAND, fastest_ablation.main, args.study_argv, "it times kernel variants on the GPU"
    )
