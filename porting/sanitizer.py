"""What compute-sanitizer found, worded from the newest sanitize.json and the sanitize-*.json
beside it: a line per family in the guide, and the appendix's section (the clean kernels, the
`volatile` forms' racecheck hazards, the wrong demonstrations, the seeds' two bugs).
"""

from __future__ import annotations

from pathlib import Path

from harness.core.demo_records import BY_ID as SEED_BUGS
from harness.core.demo_records import FAMILY as SEED_BUG_FAMILY
from harness.report.markdown import RIGHT, markdown_lines
from harness.report.sanitizer_log import TOOLS, flagged_by, merge_documents, records_of, tools_of
from porting import hardware as porting_hardware
from porting.lessons import TEXTS


def _kinds(doc: dict, vid: str, tool: str) -> str:
    """The report kinds (header text, numbers as N) a tool printed for the variant's kernels."""
    kinds: dict[str, int] = {}
    for k in doc.get("kernels", []):
        if k["tool"] == tool and vid in k["variants"]:
            for kind, count in k["kinds"].items():
                kinds[kind] = kinds.get(kind, 0) + count
    return "; ".join(f"{count} x {kind!r}" for kind, count in kinds.items())


def _hazard_table(first: str, variants: list[dict]) -> list[str]:
    rows = []
    for v in variants:
        race = v["tools"]["racecheck"]
        where = f" ({v['volatile']} memory)" if v.get("volatile") else ""
        rows.append([f"`{v['variant']}`{where}", f"{race['records']:,}", f"{race['hazards']:,}"])
    header = (first, "racecheck reports", "hazards")
    return [*markdown_lines(header, rows, align="l" + RIGHT * 2), ""]


def committed(root: Path) -> tuple[str, dict] | None:
    """The newest device folder's sanitize.json and the sanitize-*.json beside it, merged; the
    path names every file read."""
    return porting_hardware.committed(root, "sanitize.json", "sanitize", merge_documents)


def family_line(found: tuple[str, dict] | None, ids: list[str]) -> str:
    """One sentence on a family's kernels: clean under every tool, or which tools report."""
    variants = [v for v in found[1].get("variants", []) if v["variant"] in ids] if found else []
    if not variants:
        return (
            "**compute-sanitizer**: not run on this family yet (none of its variants is in the "
            "committed `results/*/sanitize*.json`)."
        )
    clean = [v for v in variants if not flagged_by(v)]
    reports = "; ".join(
        f"`{v['variant']}` ({', '.join(flagged_by(v))})" for v in variants if flagged_by(v)
    )
    return (
        f"**compute-sanitizer** (`{found[0]}`): {len(clean)} of its {len(variants)} variants clean "
        f"under {', '.join(TOOLS)}" + (f"; reports from {reports}" if reports else "") + "."
    )


def section(found: tuple[str, dict] | None) -> list[str]:
    if found is None:
        return []
    path, doc = found
    variants = doc.get("variants", [])
    default = [v for v in variants if not v.get("wrong")]
    clean = [v for v in default if not flagged_by(v)]  # clean_count's, listed
    device = doc.get("device", {}).get("name", "?")
    sizes = ", ".join(f"{n:,}" for n in doc.get("sizes", []))
    out = [
        '<a id="sanitizer"></a>',
        "",
        f"## What compute-sanitizer found ({device})",
        "",
        f"From `{path}` ({doc.get('compute_sanitizer', 'compute-sanitizer')}): every default "
        f"kernel, CUDA and Triton, at n = {sizes} (partial tiles), under "
        + ", ".join(TOOLS)
        + f". {len(clean)} of the {len(default)} default variants are clean under every tool.",
        "",
    ]
    others = {t: sum(records_of(v, t) for v in default) for t in TOOLS if t != "racecheck"}
    out += [
        "Reports from the other tools over the default variants: "
        + ", ".join(f"{t} {count}" for t, count in others.items())
        + ".",
        "",
    ]
    raced = [v for v in default if records_of(v, "racecheck") and v.get("volatile")]
    unexpected = [v for v in default if records_of(v, "racecheck") and not v.get("volatile")]
    volatile_clean = [v for v in clean if v.get("volatile")]
    wrong = [v for v in variants if v.get("wrong") and v.get("family") != SEED_BUG_FAMILY]
    tables = (
        (
            TEXTS["sanitizer-volatile"],
            "variant (volatile on)",
            raced,
        ),
        (
            "Racecheck hazards in kernels without the `volatile` form (to be explained):",
            "variant",
            unexpected,
        ),
    )
    for intro, first, listed in tables:
        if listed:
            out += [intro, "", *_hazard_table(first, listed)]
    if volatile_clean:
        out += [
            "Racecheck reports nothing for "
            + ", ".join(f"`{v['variant']}` ({v['volatile']} memory)" for v in volatile_clean)
            + ": racecheck checks shared memory, and their lockstep steps act on global memory.",
            "",
        ]
    if wrong:
        out += ["The labelled wrong demonstrations (never in a default run, never timed):", ""]
        out += _hazard_table("variant", wrong)
    bugs = [v for v in variants if v.get("family") == SEED_BUG_FAMILY]
    if bugs:
        out += ["The seeds' kernels as written, with their bugs:", ""]
        for v in bugs:
            flagged = flagged_by(v)
            counts = ", ".join(f"{t} {records_of(v, t)}" for t in tools_of(v))
            if flagged:
                what = "; ".join(f"{t}: {_kinds(doc, v['variant'], t)}" for t in flagged)
                text = f"flagged by {', '.join(flagged)} ({what}). Reports per tool: {counts}."
            else:
                text = TEXTS["sanitizer-no-tool"].format(counts=counts)
            demo = SEED_BUGS.get(v["variant"])
            title = f" ({demo.title})" if demo else ""
            out.append(f"- `{v['variant']}`{title}: {text}")
        out.append("")
    return out
