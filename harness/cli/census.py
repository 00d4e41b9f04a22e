"""`reduce-ladder inspect`: the compiler census, with or without a GPU. This module checks the
arguments (exit 2 before any work); porting.inspect_cmd does the work, reached through the one
lazy entry from harness into porting/ (porting_entry, when the command runs)."""

from __future__ import annotations

import argparse
import re
from types import ModuleType

from harness.cli.common import UsageError, check_writable, command, variant_ids
from harness.core import dtypes


def porting_entry() -> ModuleType:
    """porting.inspect_cmd, imported when `inspect` runs (tests/test_layout.py: the only one)."""
    from porting import inspect_cmd

    return inspect_cmd


def check_arch(arch: str) -> None:
    """--arch must name an architecture this NVRTC compiles for ("a" / "f" suffixes allowed)."""
    from harness.compile import nvrtc

    m = re.fullmatch(r"(sm_\d+)[a-z]?", arch)
    if not m:
        raise UsageError(f"bad architecture {arch!r}: write e.g. sm_80, sm_90, sm_100")
    try:
        valid = nvrtc.supported_archs()
    except nvrtc.NvrtcUnavailable:
        return  # the census says NVRTC is missing, as a usage error of its own
    if m.group(1) not in valid:
        raise UsageError(
            f"architecture {arch!r} is not one NVRTC {nvrtc.version()} compiles for; valid: "
            + ", ".join(valid)
        )


def cmd_inspect(args: argparse.Namespace) -> int:
    check_writable(args.write_doc, "--write-doc")
    if not args.write_doc:
        variant_ids(args.variants)  # unknown ids: a usage error, with suggestions
        check_arch(args.arch)
        check_writable(args.json)
    return porting_entry().run(args)


def add_parser(sub: argparse._SubParsersAction) -> None:
    help = "compiler census (registers, shared memory, spills, SASS instruction counts) of "
    help += "every CUDA and Triton variant; no GPU needed"
    doc = "Compile every CUDA variant (NVRTC) and Triton kernel (triton.compile, explicit target) "
    doc += "without a GPU and count what the compilers produced."
    wide = "every count (shared loads/stores, global load widths, atomics, ...); default: a table "
    write_doc = "regenerate the porting reference (docs/porting.md) from the committed census "
    write_doc += "JSON, the sources and the committed results, then exit"
    command(sub, "inspect", cmd_inspect, help, doc,
        arch=dict(default="sm_90", help="target architecture (default sm_90)"),
        variants="variant ids (default: every CUDA/Triton one)",
        dtype=dict(default="float32", choices=(*dtypes.NAMES, "all"),
                   help=f"{', '.join(dtypes.NAMES)} or all (default float32)"),
        format=dict(choices=("table", "json"), default="table"),
        wide=wide + "that fits 100 columns",
        json="also write the census document (JSON) here",
        write_doc=dict(metavar="PATH", help=write_doc),
        census=dict(metavar="PATH", help="census JSON the doc is generated from (default "
                    "docs/census-sm_90.json)"),
    )  # fmt: skip
