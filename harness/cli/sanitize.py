"""`reduce-ladder sanitize`: every default kernel under compute-sanitizer's four tools.

    reduce-ladder sanitize [--variants ID ...] [--include-wrong] [--sizes N ...]
                           [--tools memcheck racecheck ...] [--json PATH] [--raw DIR]

Default: every non-wrong CUDA and Triton variant, in every dtype it supports, at n = 1000 and
2^12 + 3 (partial tiles), under memcheck, racecheck, synccheck and initcheck. --include-wrong
adds the wrong demonstrations and the seeds' bugs (cuda/demo-*: seed 000's barrier inside a
divergent if, seed 004's early return), which also run when named. Exit: 0 every default kernel
clean (racecheck hazards of the volatile warp-synchronous forms are reported, not failed) and
every seed bug flagged; 1 otherwise; 2 bad usage, or compute-sanitizer / a GPU missing (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    check_writable,
    fail,
    split_ids,
    write_json,
)


def cmd_sanitize(args: argparse.Namespace) -> int:
    from harness.core import sizes
    from harness.studies import gpu_tools
    from harness.studies import sanitize as sanitize_study

    check_writable(args.json)  # before any work: a run is not lost to a bad path
    try:
        ids = split_ids(args.variants)
        variants = sanitize_study.select(ids, args.include_wrong)
        ns = tuple(sizes.parse_sizes(args.sizes) or sanitize_study.DEFAULT_SIZES)
    except (KeyError, ValueError) as e:
        return fail("sanitize", str(e.args[0] if e.args else e))
    tools = tuple(args.tools or sanitize_study.TOOLS)
    unknown = [t for t in tools if t not in sanitize_study.TOOLS]
    if unknown:
        return fail(
            "sanitize",
            f"unknown tool(s) {', '.join(unknown)}; valid: {', '.join(sanitize_study.TOOLS)}",
        )
    raw = Path(args.raw) if args.raw else None
    if raw is None and args.json:
        raw = Path(args.json).with_name(Path(args.json).stem + "-raw")
    try:
        doc = sanitize_study.sanitize(
            variants, ns, tools, raw, progress=lambda s: print(s, flush=True)
        )
    except gpu_tools.ToolUnavailable as e:
        return fail("sanitize", str(e))
    write_json(args.json, doc)
    for run in doc["runs"]:
        state = "complete" if run["complete"] else "INCOMPLETE"
        summary = f"errors {run['errors']}"
        if run["tool"] == "racecheck":
            summary = (
                f"hazards {run['hazards_displayed']} ({run['hazard_errors']} errors, "
                f"{run['hazard_warnings']} warnings)"
            )
        print(f"  {run['tool']:<10} {run['batch']:<28} {state}: {summary}")
    for r in doc["variants"]:
        print(f"  {r['variant']:<36} {r['verdict']}")
    bad = sanitize_study.failures(doc)
    for line in bad:
        print(f"FAIL {line}")
    print(f"{len(doc['variants'])} variants, {len(bad)} failure(s)")
    return EXIT_FAILED if bad else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sanitize",
        help="every default kernel under compute-sanitizer (memcheck, racecheck, ...)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--variants", nargs="*", metavar="ID", help="default: every default kernel")
    p.add_argument("--include-wrong", action="store_true", help="add the wrong demos, seed bugs")
    p.add_argument("--sizes", nargs="*", metavar="N", help="default 1000 and 2^12+3")
    p.add_argument("--tools", nargs="*", metavar="TOOL", help="default: all four")
    p.add_argument("--json", metavar="PATH", help="write the sanitize document here")
    p.add_argument("--raw", metavar="DIR", help="the tools' logs (default: beside --json)")
    p.set_defaults(func=cmd_sanitize)
