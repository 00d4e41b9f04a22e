"""How a `run` / `check` ends: the rows that are not ok printed with their message, the wrong
demonstrations with their verdict, and the exit code."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from harness.cli.common import EXIT_FAILED, EXIT_OK
from harness.studies import session


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
    by_reason: dict[str, list[str]] = {}
    for r in rows:
        if r.get("extra", {}).get(session.UNAVAILABLE):
            why = r.get("message", "").removeprefix("unavailable: ")
            why = why.removeprefix(f"{r['variant']}: ")
            ids = by_reason.setdefault(why, [])
            if r["variant"] not in ids:
                ids.append(r["variant"])
    for why, ids in by_reason.items():
        console.print(f"  skipped {', '.join(ids)}: {escape(why)}", highlight=False)


def exit_code(rows: list[dict]) -> int:
    """1 when a variant (not a wrong demonstration) erred or summed wrong, else 0."""
    return EXIT_FAILED if session.failed(rows) else EXIT_OK
