"""`reduce-ladder inspect`: the compiler census, on a machine with or without a GPU.

reduce-ladder inspect                         # every CUDA and Triton variant, float32, sm_90
                                              # (peers are listed: library calls, not compiled)
reduce-ladder inspect --arch sm_80 --variants cuda/v3-sequential triton/tile-256
reduce-ladder inspect --dtype all --format json
reduce-ladder inspect --wide                  # every count (default: fits 100 columns)
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

# Every column (--wide): header, what it counts (the legend under the table), the cell.
WIDE_COLUMNS = (
    ("regs", "registers per thread", lambda r: str(r.registers)),
    ("smem", "static shared memory, bytes", lambda r: str(r.static_smem)),
    ("dyn", "dynamic shared memory, bytes (Triton: its scratch)", lambda r: str(r.dynamic_smem)),
    ("local", "stack + local memory bytes; spilled bytes", lambda r: _local_cell(r)),
    ("BAR", "barriers", lambda r: str(r.counts.barriers)),
    ("SHFL", "warp shuffles", lambda r: str(r.counts.shuffles)),
    ("REDUX", "warp reductions (redux.sync)", lambda r: str(r.counts.warp_reductions)),
    ("LDS", "shared loads", lambda r: str(r.counts.lds)),
    ("STS", "shared stores", lambda r: str(r.counts.sts)),
    ("LDG 32/64/128", "global loads by width (bits)", lambda r: _ldg_cell(r)),
    ("ATOM", "atomics and reductions to memory", lambda r: str(r.counts.atomics)),
    ("div/rem", "integer divide/modulo (PTX)", lambda r: str(r.int_divrem)),
    ("loops", "backward branches", lambda r: str(r.counts.back_edges)),
    ("insns", "SASS instructions", lambda r: str(r.counts.instructions)),
)
# The default (fits 100 columns): resources, then the two counts that tell the ladder's story
# (barriers give way to warp shuffles), then the size of the kernel.
COMPACT_COLUMNS = (
    ("regs", "registers per thread", lambda r: str(r.registers)),
    ("smem", "shared memory, static + dynamic, bytes", lambda r: str(_smem(r))),
    ("local", "stack + local memory bytes", lambda r: str(r.stack_bytes + r.local_bytes)),
    ("spill", "spilled bytes", lambda r: str(r.spill_bytes)),
    ("BAR", "barriers", lambda r: str(r.counts.barriers)),
    ("SHFL", "warp shuffles", lambda r: str(r.counts.shuffles)),
    ("insns", "SASS instructions", lambda r: str(r.counts.instructions)),
)


def _smem(r) -> int:
    return r.static_smem + r.dynamic_smem


def _local_cell(r) -> str:
    local = r.stack_bytes + r.local_bytes
    return f"{local}" + (f" (spill {r.spill_bytes})" if r.spill_bytes else "")


def _ldg_cell(r) -> str:
    ldg = r.counts.ldg
    return f"{ldg['32']}/{ldg['64']}/{ldg['128']}"


def census_table(rows, title: str, *, wide: bool = False):
    """The census in ladder order with what each column counts in a legend under it."""
    from harness.report.terminal import TermColumn, short_dtype, terminal_table, with_legend

    counts = WIDE_COLUMNS if wide else COMPACT_COLUMNS
    columns = [
        TermColumn("variant", lambda r: r.variant),
        TermColumn("stage", lambda r: r.stage),
        TermColumn("dtype", (lambda r: r.dtype) if wide else (lambda r: short_dtype(r.dtype))),
        *(TermColumn(h, cell, right=True) for h, _, cell in counts),
    ]
    rank = stage_order()
    ordered = sorted(rows, key=lambda r: (rank.get(r.stage, len(rank)), r.backend))
    table = terminal_table(title, columns, ordered, lambda r: "yellow" if r.spills else None)
    legend = "; ".join(f"{h}: {d}" for h, d, _ in counts)
    more = "" if wide else " (every column: --wide)"
    return with_legend(table, [legend + more])


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
    tools = doc["tools"]
    title = (
        f"compiler census, {args.arch} (NVRTC {tools.get('nvrtc')}, Triton "
        f"{tools.get('triton')}, cuobjdump {tools.get('cuobjdump')}); static SASS counts"
    )
    out = console()
    out.print(census_table(rows, title, wide=args.wide))
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
    p.add_argument(
        "--wide",
        action="store_true",
        help="every count (shared loads/stores, global load widths, atomics, ...); "
        "default: a table that fits 100 columns",
    )
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
