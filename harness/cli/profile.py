"""`reduce-ladder profile` and `reduce-ladder sanitize`: NVIDIA's tools over the variants, each
run in a driver process under the tool (docs/correctness.md); usage and exit codes below."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError, fail
from harness.core import dtypes

PROFILE = """`reduce-ladder profile`: each variant's hardware counters under Nsight Compute (ncu).

    reduce-ladder profile [--variants ID ...] [--sizes N ...] [--dtype D] [--json PATH] [--raw DIR]
    reduce-ladder profile --variants AXIS_ID ... peer/torch.sum --shapes 2048x120:0 ...
    reduce-ladder profile --render profile.json --out DIR      (tables + plot, no GPU needed)

Default: the float32 ladder (CUDA stages and their Triton twins), the fastest pair and the peers'
kernels (torch.sum, cupy.sum with and without CUB) at n = 2^24. ncu runs as a subprocess on
harness.studies.profile_driver; its raw output (.ncu-rep, CSV exports, log) goes to --raw
(default: beside --json, "<stem>-raw/"). The axis family runs at 2^24 elements in rows of 256, or
with --shapes at each given shape it takes, the peers beside it summing along the same dim.
Exit: 0 ok; 1 profiling failed; 2 bad usage, or ncu / a GPU / readable performance counters
missing (one line).
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
    if json_path and not raw:
        return Path(json_path).with_name(Path(json_path).stem + "-raw")
    return Path(raw or default) if raw or default else None


def named_variants(values: list[str] | None) -> list:
    """The variants named (catalogue ids or the sanitizer's demonstrations); empty: none named."""
    from harness.studies.profile_driver import lookup

    try:
        return [lookup(i) for i in common.split_ids(values)]
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def tool_run(study_call, *args, **kwargs) -> dict:
    """The study's document; a tool that cannot answer here (missing, no GPU, counters not
    readable) is a usage error: one line, exit 2."""
    from harness.studies import gpu_tools

    with common.usage_errors(gpu_tools.ToolUnavailable):
        return study_call(*args, progress=lambda s: print(s, flush=True), **kwargs)


def cmd_profile(args: argparse.Namespace) -> int:
    from harness.report import documents, profile_tables
    from harness.studies import profile as study

    if args.render:
        if not args.out:
            raise UsageError("--render needs --out DIR")
        try:
            doc = documents.load_document(args.render, "profile").raw
        except documents.ReportError as e:
            raise UsageError(f"cannot read {args.render}: {e}") from None
        print(f"wrote {profile_tables.render(doc, common.check_writable(args.out, '--out', True))}")
        return EXIT_OK
    common.check_writable(args.json)  # before any work: a run is not lost to a bad path
    ns = common.parse_sizes(args.sizes) or list(study.DEFAULT_SIZES)
    named = named_variants(args.variants)
    shapes = _shapes(args.shapes, named)
    variants = named or study.default_variants(args.dtype)
    common.require_dtype(variants, args.dtype)
    raw = raw_dir_for(args.json, args.raw, "profile-raw")
    try:
        doc = tool_run(study.profile, variants, ns, args.dtype, raw, shapes=shapes)
    except study.ProfileError as e:
        return fail("profile", str(e))
    common.write_json(args.json, doc)
    print(profile_tables.terminal_summary(doc))
    for run in doc["runs"]:
        print(f"  {run['raw_csv']}: {run['kernels']} kernels, NVTX check {run['nvtx_check']}")
    if bad := [r["variant"] for r in doc["results"] if r["check"].get("ok") is False]:
        print(f"wrong sums in the warm-up check: {', '.join(bad)}")
    print(f"raw ncu output in {raw}" + (f"; document {args.json}" if args.json else ""))
    return EXIT_FAILED if bad else EXIT_OK


def _shapes(values: list[str] | None, named: list) -> tuple:
    """--shapes parsed, beside the named axis variants and peer/torch.sum only (a 1-D variant
    has no shape; torch.sum is the one peer that sums along a dim here)."""
    from harness.studies.profile_driver import parse_shape

    if not values:
        return ()
    with common.usage_errors(ValueError):
        shapes = tuple(parse_shape(v) for v in values)
    if not named:
        raise UsageError("--shapes needs --variants AXIS_ID ... [peer/torch.sum]")
    if other := [v.id for v in named if v.family != "axis" and v.id != "peer/torch.sum"]:
        raise UsageError(
            f"--shapes takes axis variants and peer/torch.sum (summing along the same dim), "
            f"not {', '.join(other)}"
        )
    return shapes


def cmd_sanitize(args: argparse.Namespace) -> int:
    from harness.studies import sanitize as study

    common.check_writable(args.json)  # before any work: a run is not lost to a bad path
    variants = named_variants(args.variants) or study.select(args.include_wrong)
    ns = tuple(common.parse_sizes(args.sizes) or study.DEFAULT_SIZES)
    tools = tuple(args.tools or study.TOOLS)
    if unknown := [t for t in tools if t not in study.TOOLS]:
        valid = ", ".join(study.TOOLS)
        raise UsageError(f"unknown tool(s) {', '.join(unknown)}; valid: {valid}")
    doc = tool_run(study.sanitize, variants, ns, tools, raw_dir_for(args.json, args.raw))
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
    p.add_argument("--dtype", default="float32", choices=dtypes.NAMES)
    p.add_argument(
        "--shapes", nargs="*", metavar="MxN:DIM", help="axis variants, peers: sums along DIM"
    )
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
