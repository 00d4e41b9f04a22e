"""`reduce-ladder profile` and `reduce-ladder sanitize`: NVIDIA's tools over the variants, each
run in a driver process under the tool (docs/correctness.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError, fail
from harness.report.profile_tables import TOOLS

PROFILE = """Each variant's hardware counters under Nsight Compute (ncu). Default: the float32
ladder (CUDA stages, Triton twins), the fastest pair and the peers at n = 2^24; the axis family at
2^24 elements in rows of 256, or at each --shapes MxN:DIM it takes (peer/torch.sum beside it along
the same dim). --render DOC --out DIR: the tables and plots of a document, no GPU needed. Raw
output (.ncu-rep, CSV exports, log) goes to --raw (default: "<stem>-raw/" beside --json).
Exit: 0 ok; 1 profiling failed; 2 bad usage, or ncu / a GPU / readable counters missing."""
SANITIZE = """Every default kernel under compute-sanitizer's memcheck, racecheck, synccheck and
initcheck. Default: every non-wrong CUDA and Triton variant, every dtype, at n = 1000 and 2^12 + 3
(the axis family on odd shapes); --include-wrong adds the wrong demonstrations and the seeds' bugs
(cuda/demo-*). Exit: 0 every default kernel clean (racecheck hazards of the volatile forms are
reported, not failed) and every seed bug flagged; 1 otherwise; 2 bad usage, or compute-sanitizer /
a GPU missing (one line)."""


def _setup(args: argparse.Namespace, default_raw: str | None) -> tuple[list, Path | None]:
    """Checks before any work: --json writable, the named variants (the demonstrations too);
    (variants, the raw folder: --raw, else "<stem>-raw/" beside --json, else default_raw)."""
    from harness.studies.profile_driver import BY_ID

    common.check_writable(args.json)  # before any work: a run is not lost to a bad path
    named = [BY_ID[i] for i in common.variant_ids(args.variants, list(BY_ID))]
    raw = args.raw or (args.json and Path(args.json).with_name(Path(args.json).stem + "-raw"))
    return named, Path(raw or default_raw) if raw or default_raw else None


def _run(json_path: str | None, study_call, *args, **kwargs) -> dict:
    """The study's document, written to --json; a tool that cannot answer here (missing, no GPU,
    counters not readable) is a usage error: one line, exit 2."""
    from harness.studies.profile_driver import ToolUnavailable

    with common.usage_errors(ToolUnavailable):
        doc = study_call(*args, progress=lambda s: print(s, flush=True), **kwargs)
    common.write_json(json_path, doc)
    return doc


def cmd_profile(args: argparse.Namespace) -> int:
    from harness.report import documents, profile_tables
    from harness.studies import profile as study
    from harness.studies.profile_driver import parse_shape

    if args.render:
        if not args.out:
            raise UsageError("--render needs --out DIR")
        with common.usage_errors(documents.ReportError):
            doc = documents.load_document(args.render, "profile").raw
        print(f"wrote {profile_tables.render(doc, common.check_writable(args.out, '--out', True))}")
        return EXIT_OK
    named, raw = _setup(args, "profile-raw")
    ns = common.parse_sizes(args.sizes) or list(study.DEFAULT_SIZES)
    with common.usage_errors(ValueError):
        shapes = tuple(parse_shape(v) for v in args.shapes or ())
    # a 1-D variant has no shape; torch.sum is the one peer that sums along a dim here
    if shapes and not named:
        raise UsageError("--shapes needs --variants AXIS_ID ... [peer/torch.sum]")
    if other := [v.id for v in named if shapes and v.family != "axis" and v.id != "peer/torch.sum"]:
        msg = "--shapes takes axis variants and peer/torch.sum (summing along the same dim), not "
        raise UsageError(msg + ", ".join(other))
    variants = named or study.default_variants(args.dtype)
    common.require_dtype(variants, args.dtype)
    try:
        doc = _run(args.json, study.profile, variants, ns, args.dtype, raw, shapes=shapes)
    except study.ProfileError as e:
        return fail("profile", str(e))
    print(profile_tables.terminal_summary(doc))
    for run in doc["runs"]:
        print(f"  {run['raw_csv']}: {run['kernels']} kernels, NVTX check {run['nvtx_check']}")
    if bad := [r["variant"] for r in doc["results"] if r["check"].get("ok") is False]:
        print(f"wrong sums in the warm-up check: {', '.join(bad)}")
    print(f"raw ncu output in {raw}" + (f"; document {args.json}" if args.json else ""))
    return EXIT_FAILED if bad else EXIT_OK


def cmd_sanitize(args: argparse.Namespace) -> int:
    from harness.studies import sanitize as study

    named, raw = _setup(args, None)
    ns = tuple(common.parse_sizes(args.sizes) or study.DEFAULT_SIZES)
    tools = tuple(args.tools or study.TOOLS)
    doc = _run(args.json, study.sanitize, named or study.select(args.include_wrong), ns, tools, raw)
    for run in doc["runs"]:
        summary = f"errors {run['errors']}"
        if run["tool"] == "racecheck":
            summary = f"hazards {run['hazards_displayed']} ({run['hazard_errors']} errors, "
            summary += f"{run['hazard_warnings']} warnings)"
        state = "complete" if run["complete"] else "INCOMPLETE"
        print(f"  {run['tool']:<10} {run['batch']:<28} {state}: {summary}")
    for r in doc["variants"]:
        print(f"  {r['variant']:<36} {r['verdict']}")
    bad = study.failures(doc)
    for line in bad:
        print(f"FAIL {line}")
    print(f"{len(doc['variants'])} variants, {len(bad)} failure(s)")
    return EXIT_FAILED if bad else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    help = "hardware counters per variant under Nsight Compute (ncu)"
    common.command(sub, "profile", cmd_profile, help, PROFILE, "dtype",
        variants="default: ladder, twins, peers",
        sizes="default 2^24",
        shapes=dict(nargs="*", metavar="MxN:DIM", help="axis variants, peers: along DIM"),
        json="write the profile document here",
        raw="raw ncu output (default: beside --json)",
        render=dict(metavar="PROFILE.json", help="render a document; no profiling"),
        out="with --render: where profile.md and plots go",
    ).set_defaults(dtype="float32")  # fmt: skip
    help = "every default kernel under compute-sanitizer (memcheck, racecheck, ...)"
    common.command(sub, "sanitize", cmd_sanitize, help, SANITIZE,
        variants="default: every default kernel",
        include_wrong=common.flag("add the wrong demos, seed bugs"),
        sizes="default 1000 and 2^12+3",
        tools=dict(nargs="*", metavar="TOOL", choices=TOOLS, help="default: all four"),
        json="write the sanitize document here",
        raw="the tools' logs (default: beside --json)",
    )  # fmt: skip
