"""What compute-sanitizer found, from the newest sanitize.json and the sanitize-*.json beside it:
a line per family in the guide, and what the appendix's section (porting/appendix.md) lists: the
clean kernels, the `volatile` forms' racecheck hazards, the wrong demonstrations, the seeds' bugs.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.demo_records import BY_ID as SEED_BUGS
from harness.core.demo_records import FAMILY as SEED_BUG_FAMILY
from harness.report.profile_tables import TOOLS, flagged_by, records_of, tools_of
from harness.report.profile_tables import merge_sanitize as merge_documents
from harness.report.profile_tables import sanitize_summary as summary
from porting import hardware


def committed(root: Path) -> tuple[str, dict] | None:
    """The newest device folder's sanitize.json and the sanitize-*.json beside it, merged; the
    path names every file read."""
    return hardware.committed(root, "sanitize.json", "sanitize", merge_documents)


def family(view: dict | None, ids: list[str]) -> list[tuple[str, list[str]]]:
    """The family's variants the documents hold, each with the tools that report on it."""
    return (
        [
            (v["variant"], flagged_by(v))
            for v in view["doc"].get("variants", [])
            if v["variant"] in ids
        ]
        if view
        else []
    )


def _bug(doc: dict, v: dict) -> dict:
    """A seed's kernel as written: the tools that flag it, with the kinds of report each printed."""
    kinds: dict[str, dict[str, int]] = {}
    for k in doc.get("kernels", []):
        if v["variant"] in k["variants"]:
            for kind, count in k["kinds"].items():
                at = kinds.setdefault(k["tool"], {})
                at[kind] = at.get(kind, 0) + count
    flagged = flagged_by(v)
    demo = SEED_BUGS.get(v["variant"])
    return {
        "id": v["variant"],
        "title": f" ({demo.title})" if demo else "",
        "flagged": flagged,
        "kinds": "; ".join(
            f"{t}: " + "; ".join(f"{n} x {kind!r}" for kind, n in kinds.get(t, {}).items())
            for t in flagged
        ),
        "counts": ", ".join(f"{t} {records_of(v, t)}" for t in tools_of(v)),
    }


def view(found: tuple[str, dict] | None) -> dict | None:
    """What the guide and the appendix say of the committed sanitize documents (None: none)."""
    if found is None:
        return None
    path, doc = found
    variants = doc.get("variants", [])
    default = [v for v in variants if not v.get("wrong")]
    raced = [v for v in default if records_of(v, "racecheck")]
    others = {t: sum(records_of(v, t) for v in default) for t in TOOLS if t != "racecheck"}
    quiet = [v for v in default if v.get("volatile") and not flagged_by(v)]
    return {
        "path": path,
        "doc": doc,
        "summary": summary(doc),
        "device": doc.get("device", {}).get("name", "?"),
        "version": doc.get("compute_sanitizer", "compute-sanitizer"),
        "sizes": ", ".join(f"{n:,}" for n in doc.get("sizes", [])),
        "tools": ", ".join(TOOLS),
        "default": default,
        "clean": [v for v in default if not flagged_by(v)],
        "others": ", ".join(f"{t} {count}" for t, count in others.items()),
        "raced": [v for v in raced if v.get("volatile")],
        "unexpected": [v for v in raced if not v.get("volatile")],
        "volatile_clean": quiet,
        "wrong": [v for v in variants if v.get("wrong") and v.get("family") != SEED_BUG_FAMILY],
        "bugs": [_bug(doc, v) for v in variants if v.get("family") == SEED_BUG_FAMILY],
    }
