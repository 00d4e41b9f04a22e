"""`reduce-ladder host`, `accuracy` and `distributed`: studies whose document has its own page.
Each checks its options first (exit 2, nothing run or written), then needs a GPU (`distributed
--cpu`: none)."""

from __future__ import annotations

import argparse
import itertools
import math
import sys
from dataclasses import fields
from functools import partial

from harness.check import battery
from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from harness.core import catalogue, device
from harness.report import distributed_tables
from harness.report.documents import ReportError
from harness.studies import accuracy as accuracy_study
from harness.studies import distributed
from harness.studies.distributed import Request

ACCURACY = """\
The accuracy study (docs/studies.md#the-accuracy-studys-files): every float32 variant and the peers
on the battery's families, in ulps of the exact sum; --reproducible-json: the reproducible
variants' result bits.

Exit: 0 done; 1 a variant raised, a reproducible variant was not faithful on data inside its
stated limit, or --reproducible-json found no reproducible variant to record (accuracy.json is
written all the same); 2 bad usage or no GPU (before any work).
"""
DISTRIBUTED = """\
One sum across K GPUs on NCCL; --render pools documents (one per step) into DIR/distributed.md.
Usage, checks and exit codes (0 every sum exact; 1 a sum wrong or a rank failed; 2 bad input,
before any process starts): docs/several-gpus.md.
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`host`, `accuracy` and `distributed`."""
    help = "seed 001: host-driven multi-pass sums from host memory, end to end (pageable vs "
    help += "pinned vs streams), with the stream sweep"
    chunk = "sweep chunk sizes in elements, rounded up to the 2048-element tile (default "
    pipeline = "streams and chunk of V3 / triton/001-streams in the table (default 4,2^22)"
    p = common.command(sub, "host", cmd_host, help, None,
        sizes="table sizes (default 2^11,...,2^30)",
        streams=dict(nargs="*", metavar="S", help="sweep stream counts (default 1,2,4,8)"),
        sweep_sizes=dict(nargs="*", metavar="N", help="default 2^25,2^30"),
        pipeline=dict(metavar="S,CHUNK", help=pipeline),
        variants="seed-001 variant ids",
        dtype=dict(default="float32", help="(default: float32)"),
        reps="timed trips (default: auto; 3 >= 2^28)",
        no_table=common.flag("skip the seed's table"),
        no_sweep=common.flag("skip the stream sweep"),
        no_adversarial=common.flag("skip the adversarial input"),
        json="write the study (JSON) here",
        quiet=common.flag("no per-row progress lines"),
    )  # fmt: skip
    p.add_argument("--chunk", "--chunks", nargs="*", metavar="N", help=chunk + "2^20,2^22,2^24)")

    help = "every float32 variant and the peers on the accuracy battery: ulps vs the exact sum"
    common.command(sub, "accuracy", cmd_accuracy, help, ACCURACY, "json",
        sizes="default 2^20 2^25",
        families=dict(nargs="*", metavar="F", help=f"of {', '.join(battery.NAMES)}"),
        variants="default: every one (see above)",
        reproducible_json=dict(metavar="PATH", help="write the reproducible variants' result bits"),
    )  # fmt: skip

    help = "one sum across K GPUs (NCCL): local sums, all_reduce / rank-order combines, weak or "
    help += "strong scaling, the all_reduce sweep; --render tabulates"
    sweep = "all_reduce 2^10..2^28 for K > 1 (alone: no sums unless --sizes)"
    calls = "scalar combine loop (0: off)"
    common.command(sub, "distributed", cmd_distributed, help, DISTRIBUTED,
        gpus=dict(nargs="+", metavar="K", help="process counts, e.g. 1,2,4 or 1 2 4"),
        sizes=dict(nargs="+", help="weak: n per GPU; strong: n total"),
        scaling=dict(choices=distributed.SCALINGS, default=Request.scaling),
        variant="catalogue id (default cuda/fastest; CPU: triton/fastest)",
        combines=dict(nargs="+", help="all_reduce, all_gather (default: both)"),
        reps=dict(default=Request.reps, help="timed repetitions (10)"),
        warmup=dict(type=common.positive_int, default=Request.warmup),
        seed=dict(type=int, default=Request.seed, help="rank r's generator: seed + r (0)"),
        sweep=common.flag(sweep),
        sweep_sizes=dict(nargs="+", metavar="N", help="the sweep's sizes instead"),
        combine_calls=dict(type=int, default=Request.combine_calls, help=calls),
        backend=dict(choices=distributed.BACKENDS, help="nccl (GPUs) or gloo (--cpu)"),
        cpu=common.flag("the CPU path: gloo, Triton interpreter"),
        timeout=dict(dest="timeout_s", type=float, default=Request.timeout_s,
                     help="process group timeout, s (60)"),
        json="write the document (with --render: the pooled one)",
        render=dict(nargs="+", help="tabulate documents; needs --out"),
        out="folder for --render's distributed.md",
    )  # fmt: skip


def _ints(values: list[str] | None, option: str, example: str) -> list[int]:
    """The integers of a list option (comma or space separated); a UsageError otherwise."""
    try:
        return [int(s) for s in common.split_ids(values)]
    except ValueError:
        got = " ".join(values or ())
        raise UsageError(f"{option} takes integers, e.g. {example} (got {got})") from None


def _host_options(args: argparse.Namespace) -> tuple[dict, list[str]]:
    """host.cases' settings given on the command line (the others: its defaults; a part skipped:
    no sizes), and the variants named; UsageError (exit 2) for a bad one."""
    streams = _ints(args.streams, "--streams", "1,2,4,8")
    if any(k < 1 or k > 64 for k in streams):
        raise UsageError(f"stream counts must be in 1..64, got {streams}")
    ids = common.variant_ids(args.variants, [v.id for v in catalogue.select(family="001")])
    pipeline = None
    if args.pipeline is not None:
        pipeline = tuple(common.parse_sizes([args.pipeline]) or ())  # each at least 1
        if len(pipeline) != 2:
            raise UsageError(f"bad --pipeline {args.pipeline!r}: write STREAMS,CHUNK, e.g. 4,2^22")
    settings = {
        "sizes": [] if args.no_table else common.parse_sizes(args.sizes),
        "dtype": args.dtype,
        "pipeline": pipeline,
        "adversarial": not args.no_adversarial,
        "sweep_sizes": [] if args.no_sweep else common.parse_sizes(args.sweep_sizes),
        "streams": streams or None,
        "chunks": common.parse_sizes(args.chunk),
    }
    return {k: v for k, v in settings.items() if v is not None}, ids


def cmd_host(args: argparse.Namespace) -> int:
    opts, ids = _host_options(args)  # usage errors first, GPU or not
    common.check_writable(args.json)
    common.require_gpu("host", "it measures transfers from host memory to the GPU")
    from harness.studies import host, suites

    out = common.console()
    variants = host.host_variants(ids or None)
    cuda_ok, why_cuda = device.cupy_gpu()
    if not cuda_ok:
        out.print(f"[yellow]CUDA variants skipped: {why_cuda}[/]")
        variants = [v for v in variants if v.backend != "cuda"]

    def show(case: suites.Case, rows: list) -> None:
        r = rows[0]
        said = f"{r.median_ms:10.3f} ms" if r.median_ms else r.info.get("message", "")
        said += f" {r.bytes / r.median_ms / 1e6:8.2f} GB/s" if r.bytes and r.median_ms else ""
        out.print(f"  n=2^{math.log2(r.n):<5g} {r.variant:<28} {r.config:<30} {r.check:<6} {said}")

    found = [suites.Case("host", *c) for c in host.cases(variants, **opts)]
    options = opts | {"variants": [v.id for v in variants]}
    return suites.run_suite("host", found, args.json, options, args.reps,
                            progress=None if args.quiet else show)  # fmt: skip


def accuracy_variants(values: list[str] | None) -> list[catalogue.Variant]:
    variants = accuracy_study.study_variants()
    valid = [v.id for v in variants]
    if known := [i for i in common.split_ids(values) if i not in valid and i in catalogue.BY_ID]:
        raise UsageError(
            f"{', '.join(known)}: not in the accuracy study (it takes the float32 variants "
            "that are not wrong demonstrations nor seed 001's host-staged ones, and the "
            f"peers {', '.join(accuracy_study.PEERS)})"
        )
    ids = common.variant_ids(values, valid)  # an unknown id: the close ones named
    return [v for v in variants if v.id in ids] if ids else variants


def cmd_accuracy(args: argparse.Namespace) -> int:
    sizes = common.parse_sizes(args.sizes) or list(accuracy_study.DEFAULT_SIZES)
    with common.usage_errors(ValueError):  # an unknown family, named with the valid ones
        families = [battery.get(f).name for f in common.split_ids(args.families)]
    variants = accuracy_variants(args.variants)
    common.check_writable(args.json)
    common.check_writable(args.reproducible_json, "--reproducible-json")
    repro = accuracy_study.reproducible_variants()
    common.require_gpu("accuracy", "it runs every variant on the battery", cupy=True)
    from harness.report import accuracy_tables, documents

    log = partial(print, flush=True)
    written = accuracy_study.accuracy(variants, families or list(battery.NAMES), sizes, log=log)
    common.write_json(args.json, written)
    doc = documents.document_from(written, args.json or "accuracy")  # as the report reads it
    print(accuracy_tables.markdown(doc))
    failed = accuracy_tables.failures(doc, {v.id for v in repro})
    if args.reproducible_json and not repro:
        failed.append(
            f"--reproducible-json: no variant of family {accuracy_study.REPRODUCIBLE_FAMILY!r} "
            f"in the catalogue; {args.reproducible_json} not written"
        )
    elif args.reproducible_json:
        rdoc = accuracy_study.reproducible(repro, log=log)
        common.write_json(args.reproducible_json, rdoc)
        for vid, by_key in rdoc["results"].items():
            failed += [f"{vid} {key}: {e['error']}" for key, e in by_key.items() if "error" in e]
    for line in failed:
        print(f"FAILED: {line}")
    return EXIT_FAILED if failed else EXIT_OK


def request_from(args: argparse.Namespace) -> Request:
    """The Request of the command line, its options parsed (UsageError: one line, exit 2)."""
    if not args.gpus:
        raise UsageError("--gpus K is needed (or --render JSON ... --out DIR)")
    if args.combine_calls < 0 or args.timeout_s <= 0:
        raise UsageError("--combine-calls must be >= 0 and --timeout > 0")
    if args.variant:
        common.variant_ids([args.variant])  # unknown id: the usual message with suggestions
    gpus = tuple(_ints(args.gpus, "--gpus", "1,2,4"))
    given = {f.name: getattr(args, f.name) for f in fields(Request) if f.name in vars(args)}
    sizes, sweep_sizes = common.parse_sizes(args.sizes), common.parse_sizes(args.sweep_sizes)
    given |= dict(gpus=gpus, sizes=sizes and tuple(sizes), sweep=args.sweep or bool(sweep_sizes))
    given["sweep_sizes"] = tuple(sweep_sizes) if sweep_sizes else Request.sweep_sizes
    given["combines"] = tuple(common.split_ids(args.combines)) or Request.combines
    return Request(**given)


def cmd_distributed(args: argparse.Namespace) -> int:
    say = partial(print, file=sys.stderr)  # progress: stdout keeps the tables
    common.check_writable(args.json)
    if args.render:
        if not args.out:
            raise UsageError("--render needs --out DIR")
        with common.usage_errors(ReportError):
            doc, written = distributed_tables.render(args.render, args.out)
        common.write_json(args.json, doc)
        print(distributed_tables.markdown(doc))
        say("\n".join(f"  wrote {path}" for path in written))
        return EXIT_OK
    if args.out:
        raise UsageError("--out goes with --render")
    with common.usage_errors(distributed.DistributedUsageError):
        req = distributed.resolve(request_from(args))
    where = "GPUs" if req.on_gpu else "CPU processes"
    sizes = common.size_list(req.sizes) or "the sweep only"
    ks, done = ", ".join(map(str, req.gpus)), itertools.count(1)
    say(
        f"distributed: K = {ks} {where}, {req.variant} ({req.backend}), n = {sizes} ({req.scaling})"
    )
    try:
        doc = distributed.study(
            req, lambda k, s: say(f"  K = {k}: done in {s:.1f} s ({next(done)} of {len(req.gpus)})")
        )
    except distributed.RankFailure as e:
        return common.fail("distributed", str(e))
    common.write_json(args.json, doc)
    print(distributed_tables.markdown(doc))
    wrong = [r for r in doc["runs"] if not r.get("ok", True)]
    for r in wrong:
        print(f"WRONG: {r['kind']} K={r['gpus']} {r.get('combine', '')} {r}")
    return EXIT_FAILED if wrong else EXIT_OK
