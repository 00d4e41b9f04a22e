"""What `run` and `check` are asked to run (a Selection: variants, dtype, study note, sizes),
resolved before anything runs -- unknown ids, a dtype a named variant does not support, a study
with no variant in the selection, a selection that leaves nothing to check: each a UsageError that
says why -- and how they end (failures and skipped peers printed)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape

from harness.cli import common
from harness.cli.common import UsageError
from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.studies import session


@dataclass(frozen=True)
class Selection:
    ids: list[str]  # as named on the command line (empty: the default selection)
    variants: list[Variant]  # in ladder order
    dtype: str
    study: str | None  # a study note's number, e.g. "004"
    sizes: list[int] | None  # as given (None: the path's defaults)


def known_studies() -> list[str]:
    """Study notes some variant carries a label of ("000", "001", "002", "004")."""
    return sorted({s.split(":")[0] for v in catalogue.VARIANTS for s in v.seeds})


def study_and_dtype(study: str | None, dtype: str | None) -> tuple[str | None, str]:
    """--study and --dtype resolved: an unknown study is a usage error; without --dtype a study
    runs in its own first dtype (004: int32), otherwise float32."""
    if not study:
        return None, common.parse_dtype(dtype or "float32")
    study = study.strip().rstrip(":")
    if study not in known_studies():
        notes = ", ".join(known_studies())
        raise UsageError(f"unknown seed {study!r} (--study); study notes with variants: {notes}")
    own = session.seed_dtypes(study)
    dtype = common.parse_dtype(dtype or own[0])
    if dtype not in own:
        raise UsageError(f"study {study}'s variants support {', '.join(own)}, not {dtype}")
    return study, dtype


def carries_study(v: Variant, study: str) -> bool:
    """v is one of the note's own variants (labelled "<study>:..."), not a twin or a peer."""
    return any(s.startswith(f"{study}:") for s in v.seeds)


def _empty_study_error(study: str, ids: list[str], dtype: str) -> UsageError:
    own = [v for v in catalogue.VARIANTS if carries_study(v, study)]
    if not ids and all(v.family == "001" for v in own):
        return UsageError(
            f"study {study}'s variants run end to end from host memory, which `run` and `check` "
            f"do not measure: run `reduce-ladder host` for study {study}"
        )
    if ids:
        return UsageError(f"none of {', '.join(ids)} is study {study}'s: nothing to check")
    return UsageError(f"no variant of study {study} supports {dtype}: nothing to check")


def resolve(args: argparse.Namespace) -> Selection:
    """The selection `run` / `check` asked for; a UsageError for anything that cannot run."""
    ids = common.variant_ids(args.variants)
    if args.variants is not None and not ids:
        raise UsageError("--variants needs at least one id (reduce-ladder list); without it: all")
    study, dtype = study_and_dtype(args.study, args.dtype)
    common.require_dtype((catalogue.get(i) for i in ids), dtype)
    sizes = common.parse_sizes(args.sizes)
    variants = session.ladder_variants(dtype, ids or None, args.include_wrong, args.all)
    if study:
        variants = session.seed_variants(variants, study)
        if not any(carries_study(v, study) for v in variants):
            raise _empty_study_error(study, ids, dtype)
    if not variants:
        raise UsageError(f"no variant selected ({dtype}): nothing to check")
    return Selection(ids, variants, dtype, study, sizes)


def print_failures(rows: list[dict], console: Console) -> None:
    """Wrong demonstrations with their verdict (a racy kernel can happen to be right); every
    other row that is not ok, with its message."""
    for r in rows:
        if r.get("wrong_demo"):
            verdict = (
                "WRONG in this run (the race showed)"
                if r["status"] != "ok"
                else "right in this run (the race did not show; the code is still racy)"
            )
            console.print(f"  wrong demonstration {r['variant']} n={r['n']}: {verdict}")
        elif r["status"] != "ok" and not r.get("extra", {}).get(session.UNAVAILABLE):
            console.print(
                f"  [red]{r['variant']} n={r['n']}: {r['status']}: "
                f"{escape(r.get('message', ''))}[/]"
            )


def print_skipped(rows: list[dict], console: Console) -> None:
    """Peers that cannot run here (an optional library not installed): one line per reason, with
    the peers it skips and how to add them -- not an error, and not one line per row."""
    by_reason: dict[str, dict[str, None]] = {}  # the ids in order, each once
    for r in rows:
        if r.get("extra", {}).get(session.UNAVAILABLE):
            why = r.get("message", "").removeprefix("unavailable: ")
            by_reason.setdefault(why.removeprefix(f"{r['variant']}: "), {})[r["variant"]] = None
    for why, ids in by_reason.items():
        console.print(f"  skipped {', '.join(ids)}: {escape(why)}", highlight=False)
