"""`reduce-ladder ablation --json PATH [--log2 ...]`: what each design choice of the fastest pair
bought, one at a time, and the launch probe. Needs a GPU with CuPy.

The ablation is a one-off experiment (experiments/fastest_ablation/, `python -m
experiments.fastest_ablation`); this command is kept as its alias, so that the command and its
exit codes still work. It is the one place the product reaches an experiment: lazily, inside
the function that runs it, after the output and GPU checks (tests/test_layout.py,
EXPERIMENT_ALIASES). The experiment is not installed with the package: from a checkout (an
editable install, or PYTHONPATH=.) it is found beside harness/; elsewhere the command says where
it lives and exits 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli.common import UsageError, run_study

COMMAND = "ablation"
EXPERIMENT = "experiments/fastest_ablation"
CHECKOUT = Path(__file__).resolve().parents[2]  # the repository root, when run from a checkout


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        COMMAND,
        add_help=False,  # the experiment's own parser answers --help
        help="the fastest pair's design choices, one by one, and the launch probe; needs "
        "--json PATH and a GPU (options: reduce-ladder ablation --help)",
    )
    p.set_defaults(func=cmd_ablation, takes_study_argv=True)


def experiment_main(argv: list[str], prog: str) -> int:
    """Import the experiment (only now: the alias's lazy import) and run its main."""
    if (CHECKOUT / EXPERIMENT).is_dir() and str(CHECKOUT) not in sys.path:
        sys.path.append(str(CHECKOUT))
    try:
        from experiments.fastest_ablation import experiment
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("experiments"):
            raise
        raise UsageError(
            f"`reduce-ladder {COMMAND}` runs the experiment in {EXPERIMENT}/ of the source "
            "checkout, which is not installed with the package: run it from a checkout "
            "(python -m experiments.fastest_ablation)"
        ) from None
    return experiment.main(argv, prog=prog)


def cmd_ablation(args: argparse.Namespace) -> int:
    return run_study(
        COMMAND, experiment_main, args.study_argv, "it times kernel variants on the GPU"
    )
