"""What every sub-command shares: exit codes, the usage error, the console, and the checks that
turn bad input into a clear message before any work starts (sizes, dtypes, variant ids, output
paths, a GPU for the commands that need one).

Every check raises UsageError; harness.cli.main prints it as one `reduce-ladder: error: ...`
line (more lines only for a list of valid choices) and exits EXIT_USAGE.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from rich.console import Console

from harness.core import catalogue, device, dtypes, sizes
from harness.core.catalogue import Variant
from harness.report import documents
from harness.report.documents import ReportError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad input: the message says what is wrong and, where there are any, the valid choices."""


def console() -> Console:
    """Rich console for tables: the terminal's width, or COLUMNS where set; 200 columns when the
    output is a file or a pipe (logs keep long lines)."""
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() else (None if sys.stdout.isatty() else 200)
    return Console(width=width)


def plural(count: int, noun: str) -> str:
    """'1 Triton twin', '3 Triton twins'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def command(sub: argparse._SubParsersAction, name: str, func: Callable, help: str, doc=None):
    """A sub-command's parser, run by func; a description that has line breaks keeps them."""
    raw = doc and "\n" in doc
    fmt = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
    p = sub.add_parser(name, help=help, description=doc, formatter_class=fmt)
    p.set_defaults(func=func)
    return p


def parse_size(text: str) -> int:
    """harness.core.sizes.parse_size, with a bad size as a usage error (a negative integer:
    "at least 1", as for 0, not "write an integer")."""
    try:
        return sizes.parse_size(text)
    except ValueError as e:
        try:
            value = int(text.strip())
        except ValueError:
            raise UsageError(str(e)) from None
        raise UsageError(f"bad size {text!r}: sizes must be at least 1 (got {value})") from None


def parse_sizes(values: Sequence[str] | None) -> list[int] | None:
    """Sizes from several arguments and / or comma-separated; None when none are given."""
    return [parse_size(s) for s in split_ids(values)] if values else None


def size_list(ns: Iterable[int]) -> str:
    """'2^24, 2^25' (the labels tables use)."""
    return ", ".join(sizes.size_label(n) for n in ns)


def positive_int(text: str) -> int:
    """argparse `type=` for counts such as --reps: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def parse_dtype(text: str) -> str:
    """A catalogue dtype name; a usage error naming the valid ones otherwise."""
    if text not in dtypes.NAMES:
        raise UsageError(f"unknown dtype {text!r}; valid: {', '.join(dtypes.NAMES)}")
    return text


def require_dtype(variants: Iterable[Variant], dtype: str) -> None:
    """Every variant named on the command line must support dtype: one that does not is a usage
    error naming the dtypes it does support (never dropped from the run in silence)."""
    if bad := [v for v in variants if dtype not in v.dtypes]:
        raise UsageError(
            "; ".join(f"{v.id} supports {', '.join(v.dtypes)}, not {dtype}" for v in bad)
        )


def split_ids(values: Sequence[str] | None) -> list[str]:
    """Ids given as several arguments and / or comma-separated."""
    return [s.strip() for v in values or () for s in v.split(",") if s.strip()]


def unknown_ids_message(unknown: Sequence[str], valid: Sequence[str], what: str) -> str:
    """'unknown variant id 'v3-sequential'; did you mean cuda/v3-sequential?' -- the list of
    valid ids only when nothing is close, or when it is short."""
    lines, lost = [], []
    for i in unknown:
        close = catalogue.close_ids(i, valid)  # the same words as the API's KeyError
        if close:
            lines.append(f"unknown {what} {i!r}; did you mean {' or '.join(close)}?")
        else:
            lost.append(i)
    if lost:
        lines.append(f"unknown {what}(s): {', '.join(lost)}")
    if lost or len(valid) <= 12:  # short enough to print with every error (seed 001's ten ids)
        lines.append("valid ids (reduce-ladder list):\n  " + "\n  ".join(valid))
    return "\n".join(lines)


def variant_ids(values: Sequence[str] | None, valid: Sequence[str] | None = None) -> list[str]:
    """The ids given (empty: none given), each a known catalogue id (or one of `valid`)."""
    ids, valid = split_ids(values), list(catalogue.BY_ID if valid is None else valid)
    if unknown := [i for i in ids if i not in valid]:
        raise UsageError(unknown_ids_message(unknown, valid, "variant id"))
    return ids


def check_writable(path: str | None, option: str = "--json", folder: bool = False) -> Path | None:
    """Fail before the work, not after it: harness.report.documents.check_output (the one rule
    for every output, a file or a folder: missing folders are created when written; a file in
    the way, a folder given for a file, or a place nothing can be written is a usage error)."""
    try:
        return documents.check_output(path, folder=folder, option=option) if path else None
    except ReportError as e:
        raise UsageError(str(e)) from None


class WriteFailed(Exception):
    """The work was done but its result could not be written (a full disk): exit 1, not 2."""


def write_json(path: str | None, doc: dict) -> None:
    """Write doc as indented JSON (path checked earlier with check_writable); a failure now is
    WriteFailed (harness.cli.main: one line, exit 1)."""
    try:
        if path:
            documents.write_document(path, doc)
    except OSError as e:
        raise WriteFailed(f"cannot write {path}: {e.strerror or e}") from None


def require_gpu(command: str, why_needed: str, *, cupy: bool = False) -> None:
    """The one policy for commands that only measure on a GPU (host, fastest-bench, ablation):
    without one, exit 2 with one line, before anything is run or written."""
    ok, why = device.cupy_gpu() if cupy else device.torch_gpu()
    if not ok:
        raise UsageError(f"`reduce-ladder {command}` needs an NVIDIA GPU ({why_needed}): {why}")


def run_study(command: str, study_main: Callable[..., int], why_needed: str | None) -> Callable:
    """The sub-command running a study's own main(argv) (it stays runnable as `python -m ...`):
    its --json path is checked first, then (where why_needed says why) the GPU policy, then its
    own parser takes over (its --help works anywhere, and says `reduce-ladder COMMAND`)."""

    def cmd(args: argparse.Namespace) -> int:
        argv = args.study_argv
        if why_needed and not {"-h", "--help"} & set(argv):
            pre = argparse.ArgumentParser(add_help=False)
            pre.add_argument("--json")
            check_writable(pre.parse_known_args(argv)[0].json)
            require_gpu(command, why_needed, cupy=True)
        try:
            return study_main(argv, prog=f"reduce-ladder {command}")
        except SystemExit as e:  # its argparse: --help (0) or a usage error (2)
            return EXIT_USAGE if isinstance(e.code, str) else e.code or 0

    return cmd


def fail(command: str, message: str, code: int = EXIT_FAILED) -> int:
    """Print `reduce-ladder COMMAND: message` to stderr and return the exit code: a run that
    failed after the usage checks (a rank of the several-GPU sum, ncu's counters unattributed)."""
    print(f"reduce-ladder {command}: {message}", file=sys.stderr)
    return code
