"""`reduce-ladder distributed`: one sum across K GPUs on NCCL (docs/several-gpus.md).

    reduce-ladder distributed --gpus 1,2,4 [--sizes 2^30 ...] [--scaling weak|strong]
        [--variant cuda/fastest] [--combines all_reduce,all_gather] [--reps 10] [--sweep]
        [--json PATH] [--cpu --backend gloo] [--timeout 60]
    reduce-ladder distributed --render A.json [B.json ...] --out DIR [--json MERGED.json]

A run prints the tables (Markdown) and writes --json; --render pools documents (one per step)
into DIR/distributed.md and DIR/distributed.png, and with --json the pooled document.
Exit codes: 0 every sum exact; 1 a sum wrong or a rank failed (its message printed); 2 bad
input, found before any process starts (K < 1, K above the GPUs present, a size that does not
divide by K under strong scaling, NCCL missing, an unknown variant).
"""

from __future__ import annotations

import argparse
import itertools
import sys

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from harness.core.sizes import size_label
from harness.report import distributed_tables
from harness.report.documents import ReportError
from harness.studies import distributed

COMMAND = "distributed"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        COMMAND,
        help="one sum across K GPUs (NCCL): local sums, all_reduce / rank-order combines, "
        "weak or strong scaling, the all_reduce sweep; --render tabulates",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--gpus", nargs="+", metavar="K", help="process counts, e.g. 1,2,4 or 1 2 4")
    p.add_argument("--sizes", nargs="+", metavar="N", help="weak: n per GPU; strong: n total")
    p.add_argument("--scaling", choices=distributed.SCALINGS, default="weak")
    p.add_argument("--variant", help="catalogue id (default cuda/fastest; CPU: triton/fastest)")
    p.add_argument("--combines", nargs="+", help="all_reduce, all_gather (default: both)")
    p.add_argument("--reps", type=common.positive_int, default=10, help="timed repetitions (10)")
    p.add_argument("--warmup", type=common.positive_int, default=2)
    p.add_argument("--seed", type=int, default=0, help="rank r's generator: seed + r (0)")
    p.add_argument(
        "--sweep",
        action="store_true",
        help="all_reduce 2^10..2^28 for K > 1 (alone: no sums unless --sizes)",
    )
    p.add_argument("--sweep-sizes", nargs="+", metavar="N", help="the sweep's sizes instead")
    p.add_argument("--combine-calls", type=int, default=100, help="scalar combine loop (0: off)")
    p.add_argument("--backend", choices=distributed.BACKENDS, help="nccl (GPUs) or gloo (--cpu)")
    p.add_argument("--cpu", action="store_true", help="the CPU path: gloo, Triton interpreter")
    p.add_argument("--timeout", type=float, default=60.0, help="process group timeout, s (60)")
    p.add_argument("--json", help="write the document (with --render: the pooled one)")
    p.add_argument("--render", nargs="+", metavar="JSON", help="tabulate documents; needs --out")
    p.add_argument("--out", help="folder for --render's distributed.md and distributed.png")
    p.set_defaults(func=cmd_distributed)


def _split(values: list[str] | None) -> list[str]:
    """ "1,2,4" or "1 2 4" as one list."""
    return [s for v in values or () for s in v.split(",") if s.strip()]


def request_from(args: argparse.Namespace) -> distributed.Request:
    if not args.gpus:
        raise UsageError("--gpus K is needed (or --render JSON ... --out DIR)")
    if args.combine_calls < 0 or args.timeout <= 0:
        raise UsageError("--combine-calls must be >= 0 and --timeout > 0")
    if args.variant:
        common.variant_ids([args.variant])  # unknown id: the usual message with suggestions
    try:
        gpus = tuple(int(s) for s in _split(args.gpus))
    except ValueError:
        raise UsageError(f"--gpus takes integers, e.g. 1,2,4 (got {' '.join(args.gpus)})") from None
    sizes, sweep_sizes = common.parse_sizes(args.sizes), common.parse_sizes(args.sweep_sizes)
    same = ("scaling", "variant", "reps", "warmup", "seed", "backend", "cpu", "combine_calls")
    return distributed.Request(
        gpus=gpus,
        sizes=tuple(sizes) if sizes else None,
        combines=tuple(_split(args.combines)) or tuple(distributed.COMBINES),
        timeout_s=args.timeout,
        sweep=args.sweep or bool(sweep_sizes),
        sweep_sizes=tuple(sweep_sizes) if sweep_sizes else distributed.SWEEP_SIZES,
        **{k: getattr(args, k) for k in same},
    )


def cmd_distributed(args: argparse.Namespace) -> int:
    common.check_writable(args.json)
    if args.render:
        if not args.out:
            raise UsageError("--render needs --out DIR")
        try:
            doc, written = distributed_tables.render(args.render, args.out)
        except ReportError as e:
            raise UsageError(str(e)) from None
        common.write_json(args.json, doc)
        print(distributed_tables.markdown(doc))
        for path in written:
            print(f"  wrote {path}")
        return EXIT_OK
    if args.out:
        raise UsageError("--out goes with --render")
    try:
        resolved = distributed.resolve(request_from(args))
    except distributed.DistributedUsageError as e:
        raise UsageError(str(e)) from None
    try:
        doc = _study_with_progress(resolved)
    except distributed.RankFailure as e:
        return common.fail(COMMAND, str(e), EXIT_FAILED)
    common.write_json(args.json, doc)
    print(distributed_tables.markdown(doc))
    wrong = [r for r in doc["runs"] if not r.get("ok", True)]
    for r in wrong:
        print(f"WRONG: {r['kind']} K={r['gpus']} {r.get('combine', '')} {r}")
    return EXIT_FAILED if wrong else EXIT_OK


def _study_with_progress(resolved: distributed.Request) -> dict:
    """The study, a line on stderr as it starts and as each K ends (stdout keeps the tables)."""
    gpus, where = resolved.gpus, "GPUs" if resolved.on_gpu else "CPU processes"
    sizes = ", ".join(size_label(n) for n in resolved.sizes) or "the sweep only"
    print(
        f"distributed: K = {', '.join(map(str, gpus))} {where}, "
        f"{resolved.variant} ({resolved.backend}), n = {sizes} ({resolved.scaling})",
        file=sys.stderr,
    )
    done = itertools.count(1)

    def progress(k: int, seconds: float) -> None:
        print(f"  K = {k}: done in {seconds:.1f} s ({next(done)} of {len(gpus)})", file=sys.stderr)

    return distributed.study(resolved, progress)
