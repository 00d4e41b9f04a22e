"""`reduce-ladder profile` and `reduce-ladder sanitize`: NVIDIA's tools over the variants, each
run in a driver process under the tool (docs/correctness.md); usage and exit codes below."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, fail

PROFILE = """`reduce-ladder profile`: each variant's hardware counters under Nsight Compute (ncu).

    reduce-ladder profile [--variants ID ...] [--sizes N ...] [--dtype D] [--json PATH] [--raw DIR]
    reduce-ladder profile --render profile.json --out DIR      (tables + plot, no GPU needed)

Default: the float32 ladder (CUDA stages and their Triton twins), the fastest pair and the peers'
kernels (torch.sum, cupy.sum with and without CUB) at n = 2^24. ncu runs as a subprocess on
harness.studies.profile_driver; its raw output (.ncu-rep, CSV exports, log) goes to --raw
(default: beside --json, "<stem>-raw/"). Exit: 0 ok; 1 profiling failed; 2 bad usage, or ncu /
a GPU / readable performance counters missing (one line).
"""
SANITIZE = """`reduce-ladder sanitize`: every default kernel under compute-sanitizer's four tools.

    reduce-ladder sanitize [--variants ID ...] [--include-wrong] [--sizes N ...]
                           [--tools memcheck racecheck ...] [--json PATH] [--raw DIR]

Default: every non-wrong CUDA and Triton variant, in every dtype it supports, at n = 1000 and
2^12 + 3 (partial tiles; the axis family on odd 2-D and 3-D shapes, few long rows and tall-skinny
columns), under memcheck, racecheck, synccheck and initcheck. --include-wrong
adds the wrong demonstrations and the seeds' bugs (cuda/demo-*: seed 000's barrier inside a
divergent if, seed 004's early return), which also run when named. Exit: 0 every default kernel
clean (racecheck hazards of the volatile warp-synchronous forms are reported, not failed) and
every seed bug flagged; 1 otherwise; 2 bad usage, or compute-sanitizer / a GPU missing (one line).
"""
PROFILE_HELP = "hardware counters per variant under Nsight Compute (ncu)"
SANITIZE_HELP = "every default kernel under compute-sanitizer (memcheck, racecheck, ...)"


def raw_dir_for(json_path: str | None, raw: str | None, default: str | None = None) -> Path | None:
    """--raw, else "<stem>-raw/" beside --json, else the default (None: no raw output kept)."""
    if raw or not json_path:
        return Path(raw or default) if raw or default else None
    return Path(json_path).with_name(Path(json_path).stem + "-raw")


def _usage(command: str, e: Exception) -> int:
    return fail(command, str(e.args[0] if e.args else e))


def cmd_profile(args: argparse.Namespace) -> int:
    from harness.core import dtypes, sizes
    from harness.report import documents, profile_tables
    from harness.studies import gpu_tools
    from harness.studies import profile as study
    from harness.studies.profile_driver import lookup

    if args.render:
        if not args.out:
            return fail("profile", "--render needs --out DIR")
        try:
            doc = documents.load_document(args.render, "profile").raw
        except documents.ReportError as e:
            return fail("profile", f"cannot read {args.render}: {e}")
        path = profile_tables.render(doc, common.check_writable(args.out, "--out", folder=True))
        print(f"wrote {path}")
        return EXIT_OK
    common.check_writable(args.json)  # before any work: a run is not lost to a bad path
    if args.dtype not in dtypes.NAMES:
        return fail("profile", f"unknown dtype {args.dtype!r}; valid: {', '.join(dtypes.NAMES)}")
    try:
        ns = sizes.parse_sizes(args.sizes) or list(study.DEFAULT_SIZES)
        variants = [lookup(i) for i in common.split_ids(args.variants)]
    except (ValueError, KeyError) as e:
        return _usage("profile", e)
    variants = variants or study.default_variants(args.dtype)
    if unsupported := [v.id for v in variants if args.dtype not in v.dtypes]:
        return fail("profile", f"{', '.join(unsupported)} do(es) not support {args.dtype}")
    raw = raw_dir_for(args.json, args.raw, "profile-raw")
    try:
        doc = study.profile(variants, ns, args.dtype, raw, progress=lambda s: print(s, flush=True))
    except gpu_tools.ToolUnavailable as e:
        return fail("profile", str(e))
    except study.ProfileError as e:
        return fail("profile", str(e), EXIT_FAILED)
    common.write_json(args.json, doc)
    print(profile_tables.terminal_summary(doc))
    for run in doc["runs"]:
        print(f"  {run['raw_csv']}: {run['kernels']} kernels, NVTX check {run['nvtx_check']}")
    if bad := [r["variant"] for r in doc["results"] if r["check"].get("ok") is False]:
        print(f"wrong sums in the warm-up check: {', '.join(bad)}")
    print(f"raw ncu output in {raw}" + (f"; document {args.json}" if args.json else ""))
    return EXIT_FAILED if bad else EXIT_OK


def cmd_sanitize(args: argparse.Namespace) -> int:
    from harness.core import sizes
    from harness.studies import gpu_tools
    from harness.studies import sanitize as study

    common.check_writable(args.json)  # before any work: a run is not lost to a bad path
    try:
        variants = study.select(common.split_ids(args.variants), args.include_wrong)
        ns = tuple(sizes.parse_sizes(args.sizes) or study.DEFAULT_SIZES)
    except (KeyError, ValueError) as e:
        return _usage("sanitize", e)
    tools = tuple(args.tools or study.TOOLS)
    if unknown := [t for t in tools if t not in study.TOOLS]:
        valid = ", ".join(study.TOOLS)
        return fail("sanitize", f"unknown tool(s) {', '.join(unknown)}; valid: {valid}")
    raw = raw_dir_for(args.json, args.raw)
    try:
        doc = study.sanitize(variants, ns, tools, raw, progress=lambda s: print(s, flush=True))
    except gpu_tools.ToolUnavailable as e:
        return fail("sanitize", str(e))
    common.write_json(args.json, doc)
    for run in doc["runs"]:
        state = "complete" if run["complete"] else "INCOMPLETE"
        summary = f"errors {run['errors']}"
        if run["tool"] == "racecheck":
            summary = f"hazards {run['hazards_displayed']} ({run['hazard_errors']} errors, "
            summary += f"{run['hazard_warnings']} warnings)"
        print(f"  {run['tool']:<10} {run['batch']:<28} {state}: {summary}")
    for r in doc["variants"]:
        print(f"  {r['variant']:<36} {r['verdict']}")
    bad = study.failures(doc)
    for line in bad:
        print(f"FAIL {line}")
    print(f"{len(doc['variants'])} variants, {len(bad)} failure(s)")
    return EXIT_FAILED if bad else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = common.command(sub, "profile", cmd_profile, PROFILE_HELP, PROFILE)
    p.add_argument("--variants", nargs="*", metavar="ID", help="default: ladder, twins, peers")
    p.add_argument("--sizes", nargs="*", metavar="N", help="default 2^24")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--json", metavar="PATH", help="write the profile document here")
    p.add_argument("--raw", metavar="DIR", help="raw ncu output (default: beside --json)")
    p.add_argument("--render", metavar="PROFILE.json", help="render a document; no profiling")
    p.add_argument("--out", metavar="DIR", help="with --render: where profile.md and plots go")
    s = common.command(sub, "sanitize", cmd_sanitize, SANITIZE_HELP, SANITIZE)
    s.add_argument("--variants", nargs="*", metavar="ID", help="default: every default kernel")
    s.add_argument("--include-wrong", action="store_true", help="add the wrong demos, seed bugs")
    s.add_argument("--sizes", nargs="*", metavar="N", help="default 1000 and 2^12+3")
    s.add_argument("--tools", nargs="*", metavar="TOOL", help="default: all four")
    s.add_argument("--json", metavar="PATH", help="write the sanitize document here")
    s.add_argument("--raw", metavar="DIR", help="the tools' logs (default: beside --json)")
