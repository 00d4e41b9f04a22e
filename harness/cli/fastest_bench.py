"""`reduce-ladder fastest-bench --json PATH [--dtypes ...] [--min 10 --max 30]`: the fastest pair
against the peers at every power of two n (harness.studies.fastest_bench, also runnable as
`python -m harness.studies.fastest_bench`). Needs a GPU with CuPy."""

from __future__ import annotations

import argparse

from harness.cli.common import run_study
from harness.studies import fastest_bench

COMMAND = "fastest-bench"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        COMMAND,
        add_help=False,  # its own parser (harness.studies.fastest_bench.main) answers --help
        help="the fastest pair against torch.sum, cupy.sum (CUB) and copy, n = 2^10..2^30; "
        "needs --json PATH and a GPU (options: reduce-ladder fastest-bench --help)",
    )
    p.set_defaults(func=cmd_fastest_bench, takes_study_argv=True)


def cmd_fastest_bench(args: argparse.Namespace) -> int:
    return run_study(
        COMMAND, fastest_bench.main, args.study_argv, "it times kernels against CuPy's and torch's"
    )
