"""reduce-ladder: every sub-command registered from an explicit import (a broken module fails
loudly): a module's add_parser(sub), or a study with its own parser (STUDIES). Exit codes: 0 ok, 1
a variant failed or a result could not be written after the work, 2 bad usage (before any work)."""

from __future__ import annotations

import argparse
import difflib
import sys
import tomllib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from harness.cli import bench, census, profile, report, run, studies
from harness.cli.common import (
    EXIT_FAILED,
    EXIT_USAGE,
    UsageError,
    check_writable,
    require_gpu,
)
from harness.report.documents import WriteFailed

CHECKOUT = Path(__file__).resolve().parents[2]  # the repository root, when run from a checkout


def ablation(argv: list[str], prog: str) -> int:
    """`reduce-ladder ablation`, the old name of experiments/fastest_ablation/ (not installed with
    the package: found beside harness/ in a checkout, elsewhere exit 2); --json and the GPU
    checked first (its own parser answers --help)."""
    if not {"-h", "--help"} & set(argv):
        pre = argparse.ArgumentParser(add_help=False)
        pre.add_argument("--json")
        check_writable(pre.parse_known_args(argv)[0].json)
        require_gpu("ablation", "it times kernel variants on the GPU", cupy=True)
    if (CHECKOUT / "experiments/fastest_ablation").is_dir() and str(CHECKOUT) not in sys.path:
        sys.path.append(str(CHECKOUT))
    try:
        from experiments.fastest_ablation import experiment
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("experiments"):
            raise
        raise UsageError(
            "`reduce-ladder ablation` runs the experiment in experiments/fastest_ablation/ of the "
            "source checkout, which is not installed with the package: run it from a checkout "
            "(python -m experiments.fastest_ablation)"
        ) from None
    return experiment.main(argv, prog=prog)


# Studies that keep their own parser (it answers their --help and says `reduce-ladder NAME`; its
# argparse's exit, main's): name: (its main(argv, prog), the help line).
STUDIES = {
    "ablation": (
        ablation,
        "the fastest pair's design choices, one by one, and the launch probe; needs "
        "--json PATH and a GPU (options: reduce-ladder ablation --help)",
    ),
}
# In the order `reduce-ladder --help` lists them (a module registers several commands).
COMMANDS = (run, report, census, studies, bench, *STUDIES, profile)
DEFAULT_COMMAND = "run"


def version() -> str:
    """The checkout's pyproject.toml version (PYTHONPATH=.), else the installed package's."""
    pyproject = CHECKOUT / "pyproject.toml"
    if pyproject.is_file():
        return tomllib.loads(pyproject.read_text())["project"]["version"]
    try:
        return metadata.version("reduce-ladder")
    except metadata.PackageNotFoundError:
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reduce-ladder",
        description="The CUDA parallel-reduction ladder beside its Triton twins: verified and "
        "timed on the GPU (with no GPU: the CPU path). Without a command: run.",
        epilog="Exit codes: 0 ok; 1 a variant failed; 2 bad usage.",
    )
    parser.add_argument("--version", action="version", version=f"reduce-ladder {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for entry in COMMANDS:
        if entry in STUDIES:
            sub.add_parser(entry, add_help=False, help=STUDIES[entry][1])  # its own parser: --help
        else:
            entry.add_parser(sub)
    return parser


def command_names(parser: argparse.ArgumentParser) -> list[str]:
    """The commands, in the order `reduce-ladder --help` lists them."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    names = command_names(parser)
    try:
        if argv and not argv[0].startswith("-") and argv[0] not in names:
            close = difflib.get_close_matches(argv[0], names, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise UsageError(f"unknown command {argv[0]!r}{hint}; commands: {', '.join(names)}")
        if not argv or argv[0] not in [*names, "-h", "--help", "--version"]:
            argv = [DEFAULT_COMMAND, *argv]
        args, extra = parser.parse_known_args(argv)
        if args.command in STUDIES:  # its own options, for its own parser
            return STUDIES[args.command][0](extra, f"reduce-ladder {args.command}")
        if extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return args.func(args)
    except SystemExit as e:  # argparse: --help / --version (0) or a usage error (2)
        return EXIT_USAGE if isinstance(e.code, str) else e.code or 0
    except (UsageError, WriteFailed) as e:  # WriteFailed: the work was done, its result lost
        print(f"reduce-ladder: error: {e}", file=sys.stderr)
        return EXIT_USAGE if isinstance(e, UsageError) else EXIT_FAILED
    except KeyboardInterrupt:
        print("reduce-ladder: interrupted", file=sys.stderr)
        return 130
