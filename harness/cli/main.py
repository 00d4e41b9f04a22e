"""reduce-ladder: the command line. Each sub-command lives in its own module, registered below by
an explicit import (a renamed or broken module fails loudly, it does not vanish from the CLI).

    reduce-ladder                      verify and time the ladder (default sizes 2^24, 2^25)
    reduce-ladder run | check | list | report | inspect | host | fastest-bench | bench | ablation
                                       | profile | sanitize | accuracy | compare
    reduce-ladder distributed          one sum across K GPUs on NCCL
    reduce-ladder COMMAND --help       its options

Exit codes: 0 success (also the CPU path on a machine without a GPU, when it checked something
and its checks pass); 1 a variant failed (wrong sum or error; wrong demonstrations do not count),
or a result could not be written after the work (a full disk); 2 bad usage (unknown variant or
dtype, bad size, an output path that cannot be written, a selection that leaves nothing to
check, a GPU-only command without a GPU). Missing output folders are created.
"""

from __future__ import annotations

import argparse
import difflib
import sys
import tomllib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

from harness.cli import (
    ablation,
    accuracy,
    bench,
    census,
    compare,
    distributed,
    fastest_bench,
    host,
    list_variants,
    profile,
    report,
    run,
)
from harness.cli.common import EXIT_FAILED, EXIT_USAGE, UsageError, WriteFailed

# Every sub-command module, in the order `reduce-ladder --help` lists them. `run` registers `run`
# and `check`; the others one command each, through add_parser(sub), setting `func`.
COMMAND_MODULES = (
    run,
    list_variants,
    report,
    census,
    host,
    fastest_bench,
    bench,
    ablation,
    profile,  # and sanitize
    accuracy,
    compare,
    distributed,
)
DEFAULT_COMMAND = "run"


def version() -> str:
    """The version of the code running: the checkout's pyproject.toml when run from a checkout
    (PYTHONPATH=., as on the GPU machines), else the installed package's metadata."""
    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
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
    run.add_parsers(sub)
    for module in COMMAND_MODULES[1:]:
        module.add_parser(sub)
    return parser


def command_names(parser: argparse.ArgumentParser) -> list[str]:
    """The commands, in the order `reduce-ladder --help` lists them."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return list(sub.choices)


def unknown_command(name: str, parser: argparse.ArgumentParser) -> str:
    """'unknown command 'frobnicate'; commands: run, check, ...' (with the close one first)."""
    names = command_names(parser)
    close = difflib.get_close_matches(name, names, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown command {name!r}{hint}; commands: {', '.join(names)}"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        if argv and not argv[0].startswith("-") and argv[0] not in command_names(parser):
            raise UsageError(unknown_command(argv[0], parser))
        if not argv or argv[0] not in [*command_names(parser), "-h", "--help", "--version"]:
            argv = [DEFAULT_COMMAND, *argv]
        args, extra = parser.parse_known_args(argv)
        if getattr(args, "takes_study_argv", False):
            args.study_argv = extra  # a study's own options, for its own parser
        elif extra:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        return args.func(args)
    except SystemExit as e:  # argparse: --help / --version (0) or a usage error (2)
        return EXIT_USAGE if isinstance(e.code, str) else e.code or 0
    except UsageError as e:
        print(f"reduce-ladder: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except WriteFailed as e:
        print(f"reduce-ladder: error: {e}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("reduce-ladder: interrupted", file=sys.stderr)
        return 130
