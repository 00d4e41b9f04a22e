"""`reduce-ladder profile`: each variant's hardware counters under Nsight Compute (ncu).

    reduce-ladder profile [--variants ID ...] [--sizes N ...] [--dtype D] [--json PATH] [--raw DIR]
    reduce-ladder profile --render profile.json --out DIR      (tables + plot, no GPU needed)

Default: the float32 ladder (CUDA stages and their Triton twins), the fastest pair and the peers'
kernels (torch.sum, cupy.sum with and without CUB) at n = 2^24. ncu runs as a subprocess on
harness.studies.profile_driver; its raw output (.ncu-rep, CSV exports, log) goes to --raw
(default: beside --json, "<stem>-raw/"). Exit: 0 ok; 1 profiling failed; 2 bad usage, or ncu /
a GPU / readable performance counters missing (one line).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    check_writable,
    check_writable_dir,
    fail,
    split_ids,
    write_json,
)


def raw_dir_for(json_path: str | None, raw: str | None) -> Path:
    if raw:
        return Path(raw)
    if json_path:
        p = Path(json_path)
        return p.with_name(p.stem + "-raw")
    return Path("profile-raw")


def render(doc_path: str, out: str) -> int:
    """profile.md (seed 004's table, seed 000's column, the ladder's counters) and the plot."""
    from harness.report import documents, profile_tables

    try:
        doc = documents.load_document(doc_path, "profile").raw
    except documents.ReportError as e:
        return fail("profile", f"cannot read {doc_path}: {e}")
    out_dir = check_writable_dir(out)
    documents.output_path(out_dir, folder=True)
    dtypes = sorted({r["dtype"] for r in doc.get("results", [])})
    parts = [f"# Measured by the hardware ({doc.get('device', {}).get('name', '?')})\n"]
    if any(r["family"] == "004" for r in doc.get("results", [])):
        parts += ["## Seed 004: global-memory sectors\n", profile_tables.seed004_table(doc)]
    if "float32" in dtypes:
        parts += ["## Seed 000: per stage\n", profile_tables.seed000_column(doc)]
    for dtype in dtypes:
        for n in sorted({r["n"] for r in doc["results"] if r["dtype"] == dtype}):
            parts += [f"## Counters per stage, {dtype}, n = {n:,}\n"]
            parts += [profile_tables.ladder_counters_table(doc, n, dtype)]
            if profile_tables.ladder_stages(doc, n, dtype):
                png = f"counters-{dtype}-{n}.png"
                profile_tables.plot_ladder(doc, out_dir / png, n, dtype)
                parts += [f"![counters along the ladder]({png})\n"]
    (out_dir / "profile.md").write_text("\n".join(parts))
    print(f"wrote {out_dir / 'profile.md'}")
    return EXIT_OK


def cmd_profile(args: argparse.Namespace) -> int:
    if args.render:
        if not args.out:
            return fail("profile", "--render needs --out DIR")
        return render(args.render, args.out)
    from harness.core import dtypes, sizes
    from harness.report import profile_tables
    from harness.studies import gpu_tools
    from harness.studies import profile as profile_study
    from harness.studies.profile_driver import lookup

    check_writable(args.json)  # before any work: a run is not lost to a bad path
    if args.dtype not in dtypes.NAMES:
        return fail("profile", f"unknown dtype {args.dtype!r}; valid: {', '.join(dtypes.NAMES)}")
    try:
        ns = sizes.parse_sizes(args.sizes) or list(profile_study.DEFAULT_SIZES)
        ids = split_ids(args.variants)
        variants = [lookup(i) for i in ids] or profile_study.default_variants(args.dtype)
    except (ValueError, KeyError) as e:
        return fail("profile", str(e.args[0] if e.args else e))
    unsupported = [v.id for v in variants if args.dtype not in v.dtypes]
    if unsupported:
        return fail("profile", f"{', '.join(unsupported)} do(es) not support {args.dtype}")
    raw = raw_dir_for(args.json, args.raw)
    try:
        doc = profile_study.profile(
            variants, ns, args.dtype, raw, progress=lambda s: print(s, flush=True)
        )
    except gpu_tools.ToolUnavailable as e:
        return fail("profile", str(e))
    except profile_study.ProfileError as e:
        return fail("profile", str(e), EXIT_FAILED)
    write_json(args.json, doc)
    print(profile_tables.terminal_summary(doc))
    for run in doc["runs"]:
        print(f"  {run['raw_csv']}: {run['kernels']} kernels, NVTX check {run['nvtx_check']}")
    bad = [r["variant"] for r in doc["results"] if r["check"].get("ok") is False]
    if bad:
        print(f"wrong sums in the warm-up check: {', '.join(bad)}")
    print(f"raw ncu output in {raw}" + (f"; document {args.json}" if args.json else ""))
    return EXIT_FAILED if bad else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "profile",
        help="hardware counters per variant under Nsight Compute (ncu)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--variants", nargs="*", metavar="ID", help="default: ladder, twins, peers")
    p.add_argument("--sizes", nargs="*", metavar="N", help="default 2^24")
    p.add_argument("--dtype", default="float32")
    p.add_argument("--json", metavar="PATH", help="write the profile document here")
    p.add_argument("--raw", metavar="DIR", help="raw ncu output (default: beside --json)")
    p.add_argument("--render", metavar="PROFILE.json", help="render a document; no profiling")
    p.add_argument("--out", metavar="DIR", help="with --render: where profile.md and plots go")
    p.set_defaults(func=cmd_profile)
