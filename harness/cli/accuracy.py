"""`reduce-ladder accuracy [--sizes N ...] [--families F ...] [--variants ID ...] [--json PATH]
[--reproducible-json PATH]`: the accuracy study (docs/studies.md#the-accuracy-studys-files).

Exit: 0 done; 1 a variant raised, a reproducible variant was not faithful on data inside its
stated limit, or --reproducible-json found no reproducible variant to record (accuracy.json is
written all the same); 2 bad usage or no GPU (before any work).
"""

from __future__ import annotations

import argparse
from functools import partial

from harness.check import battery
from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from harness.core import catalogue
from harness.studies import accuracy as study


def selected_variants(values: list[str] | None) -> list[catalogue.Variant]:
    variants = study.study_variants()
    valid = [v.id for v in variants]
    if known := [i for i in common.split_ids(values) if i not in valid and i in catalogue.BY_ID]:
        raise UsageError(
            f"{', '.join(known)}: not in the accuracy study (it takes the float32 variants "
            "that are not wrong demonstrations nor seed 001's host-staged ones, and the "
            f"peers {', '.join(study.PEERS)})"
        )
    ids = common.variant_ids(values, valid)  # an unknown id: the close ones named
    return [v for v in variants if v.id in ids] if ids else variants


def cmd_accuracy(args: argparse.Namespace) -> int:
    sizes = common.parse_sizes(args.sizes) or list(study.DEFAULT_SIZES)
    with common.usage_errors(ValueError):  # an unknown family, named with the valid ones
        families = [battery.get(f).name for f in common.split_ids(args.families)]
    variants = selected_variants(args.variants)
    common.check_writable(args.json)
    common.check_writable(args.reproducible_json, "--reproducible-json")
    repro = study.reproducible_variants()
    common.require_gpu("accuracy", "it runs every variant on the battery", cupy=True)
    from harness.report import accuracy_tables

    log = partial(print, flush=True)
    doc = study.accuracy(variants, families or list(battery.NAMES), sizes, log=log)
    common.write_json(args.json, doc)
    print(accuracy_tables.markdown(doc))
    failed = accuracy_tables.failures(doc, {v.id for v in repro})
    if args.reproducible_json and not repro:
        failed.append(
            f"--reproducible-json: no variant of family {study.REPRODUCIBLE_FAMILY!r} in the "
            f"catalogue; {args.reproducible_json} not written"
        )
    elif args.reproducible_json:
        rdoc = study.reproducible(repro, log=log)
        common.write_json(args.reproducible_json, rdoc)
        for vid, by_key in rdoc["results"].items():
            failed += [f"{vid} {key}: {e['error']}" for key, e in by_key.items() if "error" in e]
    for line in failed:
        print(f"FAILED: {line}")
    return EXIT_FAILED if failed else EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    help = "every float32 variant and the peers on the accuracy battery: ulps vs the exact sum"
    p = common.command(sub, "accuracy", cmd_accuracy, help, __doc__)
    p.add_argument("--sizes", nargs="*", metavar="N", help="default 2^20 2^25")
    p.add_argument("--families", nargs="*", metavar="F", help=f"of {', '.join(battery.NAMES)}")
    p.add_argument("--variants", nargs="*", metavar="ID", help="default: every one (see above)")
    p.add_argument("--json", metavar="PATH", help="write the accuracy/1 document here")
    repro = "write the reproducible variants' result bits"
    p.add_argument("--reproducible-json", metavar="PATH", help=repro)
