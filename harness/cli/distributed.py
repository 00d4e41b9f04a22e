"""`reduce-ladder distributed`: one sum across K GPUs on NCCL; --render pools documents (one per
step) into DIR/distributed.md. Usage, checks and exit codes (0 every sum exact; 1 a sum wrong or a
rank failed; 2 bad input, before any process starts): docs/several-gpus.md.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import fields

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from harness.report import distributed_tables
from harness.report.documents import ReportError
from harness.studies import distributed
from harness.studies.distributed import Request

COMMAND = "distributed"


def add_parser(sub: argparse._SubParsersAction) -> None:
    help = "one sum across K GPUs (NCCL): local sums, all_reduce / rank-order combines, weak or "
    help += "strong scaling, the all_reduce sweep; --render tabulates"
    p = common.command(sub, COMMAND, cmd_distributed, help, __doc__)
    add = p.add_argument
    add("--gpus", nargs="+", metavar="K", help="process counts, e.g. 1,2,4 or 1 2 4")
    add("--sizes", nargs="+", metavar="N", help="weak: n per GPU; strong: n total")
    add("--scaling", choices=distributed.SCALINGS, default=Request.scaling)
    add("--variant", help="catalogue id (default cuda/fastest; CPU: triton/fastest)")
    add("--combines", nargs="+", help="all_reduce, all_gather (default: both)")
    add("--reps", type=common.positive_int, default=Request.reps, help="timed repetitions (10)")
    add("--warmup", type=common.positive_int, default=Request.warmup)
    add("--seed", type=int, default=Request.seed, help="rank r's generator: seed + r (0)")
    sweep = "all_reduce 2^10..2^28 for K > 1 (alone: no sums unless --sizes)"
    add("--sweep", action="store_true", help=sweep)
    add("--sweep-sizes", nargs="+", metavar="N", help="the sweep's sizes instead")
    calls = "scalar combine loop (0: off)"
    add("--combine-calls", type=int, default=Request.combine_calls, help=calls)
    add("--backend", choices=distributed.BACKENDS, help="nccl (GPUs) or gloo (--cpu)")
    add("--cpu", action="store_true", help="the CPU path: gloo, Triton interpreter")
    timeout = "process group timeout, s (60)"
    add("--timeout", dest="timeout_s", type=float, default=Request.timeout_s, help=timeout)
    add("--json", help="write the document (with --render: the pooled one)")
    add("--render", nargs="+", metavar="JSON", help="tabulate documents; needs --out")
    add("--out", help="folder for --render's distributed.md")


def request_from(args: argparse.Namespace) -> Request:
    """The Request of the command line, its options parsed (UsageError: one line, exit 2)."""
    if not args.gpus:
        raise UsageError("--gpus K is needed (or --render JSON ... --out DIR)")
    if args.combine_calls < 0 or args.timeout_s <= 0:
        raise UsageError("--combine-calls must be >= 0 and --timeout > 0")
    if args.variant:
        common.variant_ids([args.variant])  # unknown id: the usual message with suggestions
    try:
        gpus = tuple(int(s) for s in common.split_ids(args.gpus))
    except ValueError:
        raise UsageError(f"--gpus takes integers, e.g. 1,2,4 (got {' '.join(args.gpus)})") from None
    given = {f.name: getattr(args, f.name) for f in fields(Request) if f.name in vars(args)}
    sizes, sweep_sizes = common.parse_sizes(args.sizes), common.parse_sizes(args.sweep_sizes)
    given |= dict(gpus=gpus, sizes=sizes and tuple(sizes), sweep=args.sweep or bool(sweep_sizes))
    given["sweep_sizes"] = tuple(sweep_sizes) if sweep_sizes else Request.sweep_sizes
    given["combines"] = tuple(common.split_ids(args.combines)) or Request.combines
    return Request(**given)


def cmd_distributed(args: argparse.Namespace) -> int:
    common.check_writable(args.json)
    if args.render:
        if not args.out:
            raise UsageError("--render needs --out DIR")
        with common.usage_errors(ReportError):
            doc, written = distributed_tables.render(args.render, args.out)
        common.write_json(args.json, doc)
        print(distributed_tables.markdown(doc))
        _say("\n".join(f"  wrote {path}" for path in written))
        return EXIT_OK
    if args.out:
        raise UsageError("--out goes with --render")
    with common.usage_errors(distributed.DistributedUsageError):
        req = distributed.resolve(request_from(args))
    where = "GPUs" if req.on_gpu else "CPU processes"
    sizes = common.size_list(req.sizes) or "the sweep only"
    ks, done = ", ".join(map(str, req.gpus)), itertools.count(1)
    _say(
        f"distributed: K = {ks} {where}, {req.variant} ({req.backend}), n = {sizes} ({req.scaling})"
    )
    try:
        doc = distributed.study(
            req,
            lambda k, s: _say(f"  K = {k}: done in {s:.1f} s ({next(done)} of {len(req.gpus)})"),
        )
    except distributed.RankFailure as e:
        return common.fail(COMMAND, str(e))
    common.write_json(args.json, doc)
    print(distributed_tables.markdown(doc))
    wrong = [r for r in doc["runs"] if not r.get("ok", True)]
    for r in wrong:
        print(f"WRONG: {r['kind']} K={r['gpus']} {r.get('combine', '')} {r}")
    return EXIT_FAILED if wrong else EXIT_OK


def _say(line: str) -> None:
    print(line, file=sys.stderr)  # progress: stdout keeps the tables
