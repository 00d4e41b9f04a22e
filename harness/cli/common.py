"""What every sub-command shares: exit codes, the console, and the checks that turn bad input into
a UsageError before any work starts (sizes, dtypes, variant ids, output paths, a GPU where one is
needed); harness.cli.main prints it as one `reduce-ladder: error: ...` line and exits 2."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
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
    """Rich console: the terminal's width, or COLUMNS (rich reads it); 200 into a file or a pipe."""
    width_given = os.environ.get("COLUMNS", "").isdigit()
    return Console(width=None if width_given or sys.stdout.isatty() else 200)


def plural(count: int, noun: str) -> str:
    """'1 Triton twin', '3 Triton twins'."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def command(sub, name: str, func: Callable, help: str, doc=None, *shared: str, **options):
    """A sub-command's parser, run by func (a description's line breaks kept), with its options."""
    raw = doc and "\n" in doc
    fmt = argparse.RawDescriptionHelpFormatter if raw else argparse.HelpFormatter
    p = sub.add_parser(name, help=help, description=doc, formatter_class=fmt)
    p.set_defaults(func=func)
    return add_options(p, *shared, **options)


def add_options(p: argparse.ArgumentParser, *shared: str, **options: str | dict):
    """`shared`: options of OPTIONS with their own help; `options`: a name (json: --json,
    sweep_sizes: --sweep-sizes) and its help, or add_argument's settings (over OPTIONS')."""
    for key, spec in [*((k, {}) for k in shared), *options.items()]:
        spec = {"help": spec} if isinstance(spec, str) else spec
        p.add_argument("--" + key.replace("_", "-"), **OPTIONS.get(key, {}) | spec)
    return p


def flag(help: str) -> dict:
    """An option that is on or off (add_options' settings)."""
    return dict(action="store_true", help=help)


def positive_int(text: str) -> int:
    """argparse `type=` for counts such as --reps: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


# The options several commands take, as add_argument settings (a command adds its help, and may
# override one: nargs="+" where giving none is an error).
OPTIONS: dict[str, dict] = {
    "variants": dict(nargs="*", metavar="ID"),
    "sizes": dict(nargs="*", metavar="N"),
    "dtype": dict(choices=dtypes.NAMES, metavar="DTYPE"),
    "dtypes": dict(nargs="+", choices=dtypes.NAMES, metavar="D"),
    "json": dict(metavar="PATH", help="write the document (JSON) here"),
    "reps": dict(type=positive_int, help="timed repetitions (default: auto)"),
    "out": dict(metavar="DIR"),
    "raw": dict(metavar="DIR"),
    "render": dict(metavar="JSON"),
    "quiet": flag("only the summary and the verdict (and failures)"),
    "wide": flag("every column (default: a table that fits 100 columns)"),
}


def parse_size(text: str) -> int:
    """harness.core.sizes.parse_size; a bad size (a negative one: "at least 1") a usage error."""
    try:
        return sizes.parse_size(text)
    except ValueError as e:
        if not text.strip().removeprefix("-").isdigit():
            raise UsageError(str(e)) from None
        raise UsageError(f"bad size {text!r}: sizes must be at least 1 (got {int(text)})") from None


def parse_sizes(values: Sequence[str] | None) -> list[int] | None:
    """Sizes from several arguments and / or comma-separated; None when none are given."""
    return [parse_size(s) for s in split_ids(values)] if values else None


def size_list(ns: Iterable[int]) -> str:
    """'2^24, 2^25' (the labels tables use)."""
    return ", ".join(sizes.size_label(n) for n in ns)


def require_dtype(variants: Iterable[Variant], dtype: str) -> None:
    """A named variant that does not support dtype is a usage error (never dropped in silence)."""
    if bad := [v for v in variants if dtype not in v.dtypes]:
        raise UsageError(
            "; ".join(f"{v.id} supports {', '.join(v.dtypes)}, not {dtype}" for v in bad)
        )


def split_ids(values: Sequence[str] | None) -> list[str]:
    """Ids given as several arguments and / or comma-separated."""
    return [s.strip() for v in values or () for s in v.split(",") if s.strip()]


def variant_ids(values: Sequence[str] | None, valid: Sequence[str] | None = None) -> list[str]:
    """The ids given (empty: none given), each a known catalogue id (or one of `valid`). An
    unknown id is named with the close ones ("did you mean cuda/v3-sequential?"); the valid ids
    are listed when nothing is close, or when they are few."""
    ids, valid = split_ids(values), list(catalogue.BY_ID if valid is None else valid)
    if not (unknown := [i for i in ids if i not in valid]):
        return ids
    lines, lost = [], []
    for i in unknown:
        if close := catalogue.close_ids(i, valid):  # the same words as the API's KeyError
            lines.append(f"unknown variant id {i!r}; did you mean {' or '.join(close)}?")
        else:
            lost.append(i)
    if lost:
        lines.append(f"unknown variant id(s): {', '.join(lost)}")
    if lost or len(valid) <= 12:  # short enough to print with every error (seed 001's ten ids)
        lines.append("valid ids (reduce-ladder list):\n  " + "\n  ".join(valid))
    raise UsageError("\n".join(lines))


@contextmanager
def usage_errors(*errors: type[Exception]):
    """Turn these errors (bad input found by a library function) into a UsageError."""
    try:
        yield
    except errors as e:
        raise UsageError(str(e)) from None


def check_writable(path: str | None, option: str = "--json", folder: bool = False) -> Path | None:
    """Fail before the work, not after it (harness.report.documents.check_output's rule)."""
    with usage_errors(ReportError):
        return documents.check_output(path, folder=folder, option=option) if path else None


def write_json(path: str | None, doc: dict) -> None:
    """Write doc (path checked earlier with check_writable); a failure now is WriteFailed."""
    if path:
        documents.write_document(path, doc)


def require_gpu(command: str, why_needed: str, *, cupy: bool = False) -> None:
    """Without a GPU, exit 2 with one line, before anything is run or written."""
    ok, why = device.cupy_gpu() if cupy else device.torch_gpu()
    if not ok:
        raise UsageError(f"`reduce-ladder {command}` needs an NVIDIA GPU ({why_needed}): {why}")


def fail(command: str, message: str) -> int:
    """`reduce-ladder COMMAND: message` on stderr; exit 1 (a failure after the checks)."""
    print(f"reduce-ladder {command}: {message}", file=sys.stderr)
    return EXIT_FAILED
