"""`reduce-ladder host`: seed 001's study (harness.studies.host), end to end from host memory: the
seed's table, the stream sweep of V3's pipeline against the copy-engine bound, and every variant's
error on an adversarial input, printed as the page `reduce-ladder report --host` writes (host.md).
Without a GPU: exit 2 after the usage checks, nothing written."""

from __future__ import annotations

import argparse
import math

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from harness.core import catalogue, device, dtypes


def add_parser(sub: argparse._SubParsersAction) -> None:
    help = "seed 001: host-driven multi-pass sums from host memory, end to end (pageable vs "
    p = common.command(sub, "host", cmd_host, help + "pinned vs streams), with the stream sweep")
    p.add_argument("--sizes", nargs="*", metavar="N", help="table sizes (default 2^11,...,2^30)")
    streams = "sweep stream counts (default 1,2,4,8)"
    p.add_argument("--streams", nargs="*", metavar="S", help=streams)
    chunk = "sweep chunk sizes in elements, rounded up to the 2048-element tile (default "
    p.add_argument("--chunk", "--chunks", nargs="*", metavar="N", help=chunk + "2^20,2^22,2^24)")
    p.add_argument("--sweep-sizes", nargs="*", metavar="N", help="default 2^25,2^30")
    pipeline = "streams and chunk of V3 / triton/001-streams in the table (default 4,2^22)"
    p.add_argument("--pipeline", default="4,2^22", metavar="S,CHUNK", help=pipeline)
    p.add_argument("--variants", nargs="*", metavar="ID", help="seed-001 variant ids")
    p.add_argument("--dtype", default="float32", choices=dtypes.NAMES, help="(default: float32)")
    reps = "timed trips (default: auto; 3 >= 2^28)"
    p.add_argument("--reps", type=common.positive_int, default=None, help=reps)
    p.add_argument("--no-table", action="store_true", help="skip the seed's table")
    p.add_argument("--no-sweep", action="store_true", help="skip the stream sweep")
    p.add_argument("--no-adversarial", action="store_true", help="skip the adversarial input")
    p.add_argument("--json", metavar="PATH", help="write the study (JSON) here")
    p.add_argument("--quiet", action="store_true", help="no per-row progress lines")


def _parse(args: argparse.Namespace) -> dict:
    from harness.studies import host

    try:
        streams = [int(s) for s in common.split_ids(args.streams)]
    except ValueError:
        raise UsageError(f"bad --streams {args.streams}: write integers such as 1,2,4,8") from None
    if any(k < 1 or k > 64 for k in streams):
        raise UsageError(f"stream counts must be in 1..64, got {streams}")
    ids = common.variant_ids(args.variants, [v.id for v in catalogue.select(family="001")])
    pipe = common.split_ids([args.pipeline])
    try:
        if len(pipe) != 2 or int(pipe[0]) < 1:
            raise ValueError
        pipeline = (int(pipe[0]), common.parse_sizes([pipe[1]])[0])
    except ValueError:
        why = f"bad --pipeline {args.pipeline!r}: write STREAMS,CHUNK (at least 1 stream) such as"
        raise UsageError(why + " 4,2^22") from None
    return {
        "sizes": common.parse_sizes(args.sizes) or list(host.DEFAULT_SIZES),
        "streams": streams or list(host.DEFAULT_STREAMS),
        "chunks": common.parse_sizes(args.chunk) or list(host.DEFAULT_CHUNKS),
        "sweep_sizes": common.parse_sizes(args.sweep_sizes) or list(host.DEFAULT_SWEEP_SIZES),
        "pipeline": pipeline,
        "ids": ids or None,
        "dtype": args.dtype,
    }


def cmd_host(args: argparse.Namespace) -> int:
    opts = _parse(args)  # usage errors first, GPU or not
    common.check_writable(args.json)
    common.require_gpu("host", "it measures transfers from host memory to the GPU")
    from harness.report import host_tables, readers
    from harness.report.documents import document_from
    from harness.studies import host

    out = common.console()
    variants = host.host_variants(opts.pop("ids"))
    cuda_ok, why_cuda = device.cupy_gpu()
    if not cuda_ok:
        out.print(f"[yellow]CUDA variants skipped: {why_cuda}[/]")
        variants = [v for v in variants if v.backend != "cuda"]
    doc = host.new_document()
    doc["options"] = opts | {"variants": [v.id for v in variants]}
    name = doc["device"].get("name")

    def show(row: dict) -> None:
        t = row.get("e2e_ms")
        extra = f"{t:10.3f} ms {row.get('gbps', 0):8.2f} GB/s" if t else row.get("message", "")
        label = row.get("variant") or f"V3 S={row.get('streams')} chunk={row.get('chunk')}"
        status = row.get("status", "ok" if row.get("ok") else "wrong")
        out.print(f"  n=2^{math.log2(row['n']):<5g} {label:<32} {status:<6} {extra}")

    progress = None if args.quiet else show
    failed = False
    if not args.no_table:
        out.print(f"{name}: seed 001 table, {opts['dtype']}, n = {opts['sizes']}")
        rows = host.table_rows(opts["sizes"], opts["dtype"], variants=variants, reps=args.reps,
                               pipeline=opts["pipeline"], progress=progress)  # fmt: skip
        doc["table"] = [readers.host_record(r).to_json() for r in rows]
        common.write_json(args.json, doc)
        for r in rows:
            if r["status"] != "ok":
                out.print(f"[red]  {r['variant']} n={r['n']}: {r['status']} {r.get('message', '')}")
                failed = True
    if not args.no_adversarial:
        doc["adversarial"] = host.adversarial_rows(variants=variants)
        common.write_json(args.json, doc)
        failed |= not all(r["ok"] for r in doc["adversarial"]["rows"])
    if not args.no_sweep and any(v.id == "cuda/001-v3-streams" for v in variants):
        sweep = host.stream_sweep(opts["sweep_sizes"], opts["streams"], opts["chunks"],
                                  opts["dtype"], reps=args.reps, progress=progress)  # fmt: skip
        doc["sweep"] = sweep
        common.write_json(args.json, doc)
        failed |= not all(c["ok"] for e in sweep["sizes"] for c in e["configs"])
    common.write_json(args.json, doc)  # every part skipped: the settings alone
    print(host_tables.markdown(document_from(doc, args.json or "host.json")))
    out.print("host study: " + ("[red]some checks FAILED[/]" if failed else "all checks ok"))
    return EXIT_FAILED if failed else EXIT_OK
