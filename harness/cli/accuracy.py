"""`reduce-ladder accuracy`: every float32 variant and the peers on the accuracy battery, each
result's error in float32 ulps against the exact sum (harness.studies.accuracy).

    reduce-ladder accuracy [--sizes N ...] [--families F ...] [--variants ID ...]
                           [--json PATH] [--reproducible-json PATH]

Default: every family of harness.check.battery at n = 2^20 and 2^25, every non-wrong float32
variant (seed 001's host-staged family left out) and torch.sum, cupy.sum (CUB). --json writes
the accuracy/1 document (results/<device>/accuracy.json); --reproducible-json the reproducible
variants' result bits over the fixed input list (results/<device>/reproducible.json).
Exit: 0 done; 1 a variant raised, a reproducible variant was not faithful on data inside its
stated limit, or --reproducible-json found no reproducible variant to record (accuracy.json is
written all the same); 2 bad usage or no GPU (before any work).
"""

from __future__ import annotations

import argparse

from harness.check import battery
from harness.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    check_writable,
    parse_sizes,
    require_gpu,
    split_ids,
    unknown_ids_message,
    write_json,
)
from harness.core import catalogue
from harness.studies import accuracy as study

COMMAND = "accuracy"


def selected_families(values: list[str] | None) -> list[str]:
    names = split_ids(values)
    unknown = [f for f in names if f not in battery.NAMES]
    if unknown:
        raise UsageError(
            f"unknown data famil{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}; "
            f"valid: {', '.join(battery.NAMES)}"
        )
    return names or list(battery.NAMES)


def selected_variants(values: list[str] | None) -> list[catalogue.Variant]:
    valid = [v.id for v in study.study_variants()]
    ids = split_ids(values)
    unknown = [i for i in ids if i not in valid]
    if unknown:
        known = [i for i in unknown if i in catalogue.BY_ID]
        if known:
            raise UsageError(
                f"{', '.join(known)}: not in the accuracy study (it takes the float32 variants "
                "that are not wrong demonstrations nor seed 001's host-staged ones, and the "
                f"peers {', '.join(study.PEERS)})"
            )
        raise UsageError(unknown_ids_message(unknown, valid, "variant id"))
    chosen = set(ids)
    return [v for v in study.study_variants() if v.id in chosen] if ids else study.study_variants()


def cmd_accuracy(args: argparse.Namespace) -> int:
    sizes = parse_sizes(args.sizes) or list(study.DEFAULT_SIZES)
    if min(sizes) < 1:
        raise UsageError("sizes must be at least 1")
    families = selected_families(args.families)
    variants = selected_variants(args.variants)
    check_writable(args.json)
    check_writable(args.reproducible_json, "--reproducible-json")
    repro = study.reproducible_variants()
    require_gpu(COMMAND, "it runs every variant on the battery", cupy=True)
    from harness.report import accuracy_tables

    doc = study.accuracy(variants, families, sizes, log=lambda s: print(s, flush=True))
    write_json(args.json, doc)
    print(accuracy_tables.markdown(doc))
    failed = accuracy_tables.failures(doc, {v.id for v in repro})
    if args.reproducible_json and not repro:
        failed.append(
            f"--reproducible-json: no variant of family {study.REPRODUCIBLE_FAMILY!r} in the "
            f"catalogue; {args.reproducible_json} not written"
        )
    elif args.reproducible_json:
        rdoc = study.reproducible(repro, log=lambda s: print(s, flush=True))
        write_json(args.reproducible_json, rdoc)
        failed += [
            f"{vid} {key}: {entry['error']}"
            for vid, by_key in rdoc["results"].items()
            for key, entry in by_key.items()
            if "error" in entry
        ]
    for line in failed:
        print(f"FAILED: {line}")
    return EXIT_FAILED if failed else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        COMMAND,
        help="every float32 variant and the peers on the accuracy battery: ulps vs the exact sum",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--sizes", nargs="*", metavar="N", help="default 2^20 2^25")
    p.add_argument("--families", nargs="*", metavar="F", help=f"of {', '.join(battery.NAMES)}")
    p.add_argument("--variants", nargs="*", metavar="ID", help="default: every one (see above)")
    p.add_argument("--json", metavar="PATH", help="write the accuracy/1 document here")
    p.add_argument(
        "--reproducible-json", metavar="PATH", help="write the reproducible variants' result bits"
    )
    p.set_defaults(func=cmd_accuracy)
