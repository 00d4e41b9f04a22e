"""`reduce-ladder inspect`: the compiler census, on a machine with or without a GPU.

reduce-ladder inspect                         # every CUDA and Triton variant, float32, sm_90
                                              # (peers are listed: library calls, not compiled)
reduce-ladder inspect --arch sm_80 --variants cuda/v3-sequential triton/tile-256
reduce-ladder inspect --dtype all --format json
reduce-ladder inspect --dtype all --json docs/census-sm_90.json     # the doc's census input
reduce-ladder inspect --write-doc docs/porting.md                   # regenerate the doc
"""

from __future__ import annotations

import argparse
import json
import re

from harness.cli.common import (
    EXIT_OK,
    UsageError,
    check_writable,
    console,
    require_dtype,
    variant_ids,
    write_json,
)
from harness.core import catalogue, dtypes

COLUMNS = (
    ("regs", "registers per thread"),
    ("smem", "static shared memory, bytes"),
    ("dyn", "dynamic shared memory, bytes (Triton: its scratch)"),
    ("local", "stack + local memory bytes; spilled bytes"),
    ("BAR", "barriers"),
    ("SHFL", "warp shuffles"),
    ("REDUX", "warp reductions (redux.sync)"),
    ("LDS", "shared loads"),
    ("STS", "shared stores"),
    ("LDG 32/64/128", "global loads by width (bits)"),
    ("ATOM", "atomics and reductions to memory"),
    ("div/rem", "integer divide/modulo (PTX)"),
    ("loops", "backward branches"),
    ("insns", "SASS instructions"),
)


def row_cells(r) -> list[str]:
    c = r.counts
    local = r.stack_bytes + r.local_bytes
    return [
        str(r.registers),
        str(r.static_smem),
        str(r.dynamic_smem),
        f"{local}" + (f" (spill {r.spill_bytes})" if r.spill_bytes else ""),
        str(c.barriers),
        str(c.shuffles),
        str(c.warp_reductions),
        str(c.lds),
        str(c.sts),
        f"{c.ldg['32']}/{c.ldg['64']}/{c.ldg['128']}",
        str(c.atomics),
        str(r.int_divrem),
        str(c.back_edges),
        str(c.instructions),
    ]


def check_arch(arch: str) -> None:
    """--arch must name an architecture this NVRTC compiles for (an "a" / "f" suffix allowed):
    a usage error listing the valid ones, before anything is compiled."""
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


def stage_order() -> dict[str, int]:
    """Each stage's rank in ladder order (0, 1, ..., 8, the seeds' stages, fastest, peer)."""
    rank: dict[str, int] = {}
    for v in catalogue.ladder_order(catalogue.VARIANTS):
        rank.setdefault(v.stage, len(rank))
    return rank


def cmd_inspect(args: argparse.Namespace) -> int:
    from harness.compile import census, nvrtc

    if args.write_doc:
        from harness.report import porting_doc

        check_writable(args.write_doc, "--write-doc")
        path = porting_doc.write(args.write_doc, census_path=args.census)
        print(f"wrote {path}")
        return EXIT_OK
    ids = variant_ids(args.variants)
    dtype = None if args.dtype == "all" else args.dtype
    if dtype is not None and dtype not in dtypes.NAMES:
        raise UsageError(f"unknown dtype {dtype!r}; valid: {', '.join(dtypes.NAMES)}, all")
    check_arch(args.arch)
    check_writable(args.json)
    selected = [catalogue.get(i) for i in ids] if ids else list(catalogue.VARIANTS)
    skipped = census.not_compiled(selected, dtype)
    variants = [v for v in selected if census.compiled(v)]
    if not variants:
        raise UsageError("no CUDA or Triton variant selected (peers have no kernel to inspect)")
    if ids and dtype is not None:
        require_dtype(variants, dtype)
    try:
        rows = census.census(variants, dtype, args.arch)
    except (census.ToolMissing, nvrtc.NvrtcUnavailable) as e:
        raise UsageError(str(e)) from None
    if not rows:
        raise UsageError(f"none of the selected variants supports dtype {args.dtype}")
    doc = census.document(rows, args.arch, skipped)
    write_json(args.json, doc)
    if args.format == "json":
        print(json.dumps(doc, indent=1))
        return EXIT_OK
    from rich.table import Table

    tools = doc["tools"]
    table = Table(
        title=f"compiler census, {args.arch} (NVRTC {tools.get('nvrtc')}, Triton "
        f"{tools.get('triton')}, cuobjdump {tools.get('cuobjdump')}); static SASS counts",
        caption="; ".join(f"{h}: {d}" for h, d in COLUMNS),
    )
    table.add_column("variant", overflow="fold")
    table.add_column("st")
    table.add_column("dtype")
    for h, _ in COLUMNS:
        table.add_column(h, justify="right")
    rank = stage_order()
    for r in sorted(rows, key=lambda r: (rank.get(r.stage, len(rank)), r.backend)):
        table.add_row(r.variant, r.stage, r.dtype, *row_cells(r))
    out = console()
    out.print(table)
    if skipped:
        out.print(
            f"{census.NOT_COMPILED}: " + ", ".join(s["variant"] for s in skipped),
            highlight=False,
        )
    spilling = [r.variant for r in rows if r.spills]
    if spilling:
        out.print(f"[yellow]local memory / spills in: {', '.join(spilling)}[/]")
    return EXIT_OK


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "inspect",
        help="compiler census (registers, shared memory, spills, SASS instruction counts) of "
        "every CUDA and Triton variant; no GPU needed",
        description="Compile every CUDA variant (NVRTC) and Triton kernel (triton.compile, "
        "explicit target) without a GPU and count what the compilers produced.",
    )
    p.add_argument("--arch", default="sm_90", help="target architecture (default sm_90)")
    p.add_argument(
        "--variants", nargs="*", metavar="ID", help="variant ids (default: every CUDA/Triton one)"
    )
    p.add_argument(
        "--dtype",
        default="float32",
        help=f"{', '.join(dtypes.NAMES)} or all (default float32)",
    )
    p.add_argument("--format", choices=("table", "json"), default="table")
    p.add_argument("--json", metavar="PATH", help="also write the census document (JSON) here")
    p.add_argument(
        "--write-doc",
        metavar="PATH",
        help="regenerate the porting reference (docs/porting.md) from the committed census "
        "JSON, the sources and the committed results, then exit",
    )
    p.add_argument(
        "--census",
        metavar="PATH",
        default=None,
        help="census JSON the doc is generated from (default docs/census-sm_90.json)",
    )
    p.set_defaults(func=cmd_inspect)
