"""reduce-ladder: the command line.

    reduce-ladder                      verify and time the ladder (default sizes 2^24, 2^25)
    reduce-ladder run --sizes 2^20 --dtype float32 --json out.json
    reduce-ladder list [--format json]
    reduce-ladder check [--variants ID ...] [--sizes ...] [--dtype ...] [--include-wrong]
    reduce-ladder run --seed 004 --dtype int32 --sizes 2^24    one seed's table (004: bandwidth)

Exit codes: 0 success (also the CPU path on a machine without a GPU, when its checks pass);
1 a variant failed (wrong sum or error; wrong demonstrations do not count); 2 bad usage
(unknown variant or dtype, bad size, unreadable file).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from harness.core import catalogue, device, dtypes, sizes

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


def parse_size(text: str) -> int:
    """harness.core.sizes.parse_size, with a bad size as a usage error."""
    try:
        return sizes.parse_size(text)
    except ValueError as e:
        raise UsageError(str(e)) from None


def parse_sizes(values: Sequence[str] | None) -> list[int] | None:
    try:
        return sizes.parse_sizes(values)
    except ValueError as e:
        raise UsageError(str(e)) from None


def _dtype(text: str) -> str:
    if text not in dtypes.NAMES:
        raise UsageError(f"unknown dtype {text!r}; valid: {', '.join(dtypes.NAMES)}")
    return text


def _seed_and_dtype(args: argparse.Namespace) -> tuple[str | None, str]:
    """--seed and --dtype resolved: an unknown seed is a usage error; without --dtype a seed
    runs in its own first dtype (004: int32), otherwise float32."""
    seed = getattr(args, "seed", None)
    if not seed:
        return None, _dtype(args.dtype or "float32")
    from harness.studies import session as ladder

    seed = seed.strip().rstrip(":")
    known = sorted({s.split(":")[0] for v in catalogue.VARIANTS for s in v.seeds})
    if seed not in known:
        raise UsageError(f"unknown seed {seed!r}; seeds with variants: {', '.join(known)}")
    dtypes = ladder.seed_dtypes(seed)
    dtype = _dtype(args.dtype or dtypes[0])
    if dtype not in dtypes:
        raise UsageError(f"seed {seed}'s variants support {', '.join(dtypes)}, not {dtype}")
    return seed, dtype


def _variant_ids(values: Sequence[str] | None) -> list[str] | None:
    if not values:
        return None
    ids = [s.strip() for v in values for s in v.split(",") if s.strip()]
    unknown = [i for i in ids if i not in catalogue.BY_ID]
    if unknown:
        raise UsageError(
            f"unknown variant id(s): {', '.join(unknown)}\nvalid ids:\n  "
            + "\n  ".join(catalogue.BY_ID)
        )
    return ids


def _console():
    from rich.console import Console

    return Console(width=200 if not sys.stdout.isatty() else None)


def _write_json(path: str | None, doc: dict) -> None:
    if not path:
        return
    p = Path(path)
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    except OSError as e:
        raise UsageError(f"cannot write {p}: {e.strerror or e}") from None


# ---------------------------------------------------------------------------------------------
# list


def cmd_list(args: argparse.Namespace) -> int:
    dtype = _dtype(args.dtype) if args.dtype else None
    vs = catalogue.select(None, dtype=dtype, backend=args.backend, include_wrong=True)
    if args.format == "json":
        print(json.dumps([v.record() for v in vs], indent=1))
        return EXIT_OK
    from rich.table import Table

    table = Table(title=f"reduce-ladder catalogue ({len(vs)} variants)")
    for h in ("id", "stage", "seeds", "twin", "dtypes", "tile mapping", "wrong"):
        table.add_column(h, overflow="fold")
    for v in catalogue.ladder_order(vs):
        table.add_row(
            v.id,
            v.stage,
            " ".join(v.seeds) or "-",
            v.twin or (", ".join(v.twin_of) if v.twin_of else "-"),
            ",".join(v.dtypes),
            v.tile_mapping,
            "WRONG demo" if v.wrong else "",
        )
    _console().print(table)
    return EXIT_OK


# ---------------------------------------------------------------------------------------------
# run / check


def _cpu_path(args: argparse.Namespace, ids: list[str] | None, dtype: str, console) -> int:
    """No GPU: Triton twins interpreted on the CPU at small n, CUDA sources compiled by NVRTC."""
    from harness.report import tables as render
    from harness.studies import session as ladder

    why = device.torch_gpu()[1]
    device.use_interpreter_if_no_gpu()
    sizes = parse_sizes(args.sizes) or list(ladder.CPU_SIZES)
    too_big = [n for n in sizes if n > 2**16]
    if too_big:
        console.print(
            f"[yellow]The CPU path interprets Triton; sizes above 2^16 are skipped "
            f"({', '.join(map(str, too_big))}).[/]"
        )
        sizes = [n for n in sizes if n <= 2**16]
    variants = ladder.ladder_variants(dtype, ids, args.include_wrong)
    if getattr(args, "seed", None):
        variants = ladder.seed_variants(variants, args.seed)
    variants = [v for v in variants if v.backend == "triton"]
    console.print(
        f"[bold]No GPU: {why}.[/] Timings need an NVIDIA GPU; running the CPU path: "
        f"{len(variants)} Triton twins under TRITON_INTERPRET=1 at n = "
        f"{', '.join(map(str, sizes))}, and every CUDA source compiled by NVRTC."
    )
    rows = ladder.run_selection(variants, dtype, sizes, timed=False)
    console.print(render.rich_checks(rows, "Triton twins, interpreted on the CPU"))
    _print_failures(rows, console)
    compiled = ladder.cpu_compile_rows()
    for c in compiled:
        detail = c.get("message") or f"{c.get('kernels', 0)} kernels, no spills"
        if c["status"] == "spills":
            detail = f"local memory in {', '.join(c['spilling'])}"
        console.print(f"  NVRTC {c['arch']} {c['source']}: {c['status']} ({detail})")
    doc = ladder.new_document("cpu")
    doc["results"], doc["compile"] = rows, compiled
    _write_json(args.json, doc)
    bad_compile = [c for c in compiled if c["status"] == "error"]
    nvrtc_missing = bad_compile and all(
        "libnvrtc not found" in c.get("message", "") for c in bad_compile
    )
    if nvrtc_missing:
        console.print(
            "[yellow]NVRTC is not installed, so the CUDA sources were not compiled "
            "(pip install -e '.[cuda13]').[/]"
        )
        bad_compile = []
    if ladder.failed(rows) or bad_compile:
        console.print("[red]Some checks failed.[/]")
        return EXIT_FAILED
    console.print("CPU path passed. Run on a machine with an NVIDIA GPU for the timed ladder.")
    return EXIT_OK


def _gpu_run(args: argparse.Namespace, timed: bool) -> int:
    from harness.report import ladder_table
    from harness.report import tables as render
    from harness.studies import session as ladder

    console = _console()
    ids = _variant_ids(args.variants)
    seed, dtype = _seed_and_dtype(args)
    args.seed = seed
    if not device.gpu_available():
        return _cpu_path(args, ids, dtype, console)
    sizes = parse_sizes(args.sizes) or (
        list(ladder.DEFAULT_SIZES) if timed else [1, 255, 256, 257, 1000, 2**20 + 3]
    )
    variants = ladder.ladder_variants(dtype, ids, args.include_wrong)
    if seed:
        variants = ladder.seed_variants(variants, seed)
    cuda_ok, why = device.cupy_gpu()
    if not cuda_ok:
        console.print(f"[yellow]CUDA variants skipped: {why}[/]")
        variants = [v for v in variants if v.backend != "cuda" and "cupy" not in v.id]
    doc = ladder.new_document("timed" if timed else "check")
    console.print(
        f"{doc['device'].get('name')}: {len(variants)} variants x {len(sizes)} sizes ({dtype})"
    )

    def progress(row: dict) -> None:
        if not args.quiet:
            t = row.get("total", {}).get("median_ms")
            extra = f" {t * 1e3:9.1f} µs" if t else ""
            console.print(
                f"  {row['variant']:<34} n={row['n']:<10} {row['status']}{extra}", highlight=False
            )

    rows = ladder.run_selection(
        variants, dtype, sizes, timed=timed, reps=args.reps, progress=progress
    )
    doc["results"] = rows
    if timed and seed:
        doc["seed_tables"] = []
        for n in sizes:
            srows = render.seed_rows(rows, n, dtype, seed)
            title = f"seed {seed}, {doc['device'].get('name')}, {dtype}, n = {n:,}"
            doc["seed_tables"].append(
                {"seed": seed, "n": n, "dtype": dtype, "title": title, "rows": srows}
            )
            console.print(render.rich_seed(srows, title))
            console.print(
                f"### {title}\n\n" + render.markdown_seed(srows), highlight=False, markup=False
            )
    _write_json(args.json, doc)
    if timed and not seed:
        for n in sizes:
            title = f"{doc['device'].get('name')}, {dtype}, n = {n:,}"
            console.print(ladder_table.ladder_console_table(rows, n, dtype, title=title))
            best = render.best_line(rows, n, dtype)
            if best:
                console.print(f"  {best}", highlight=False)
    else:
        console.print(render.rich_checks(rows, f"correctness, {dtype}"))
    summary = ladder.summarize(rows)
    console.print(f"summary: {summary}")
    _print_failures(rows, console)
    return EXIT_FAILED if ladder.failed(rows) else EXIT_OK


def _print_failures(rows: list[dict], console) -> None:
    from rich.markup import escape

    for r in rows:
        if r.get("wrong_demo"):
            verdict = (
                "WRONG in this run (the race showed)"
                if r["status"] != "ok"
                else "right in this run (the race did not show; the code is still racy)"
            )
            console.print(f"  wrong demonstration {r['variant']} n={r['n']}: {verdict}")
        elif r["status"] != "ok":
            console.print(
                f"  [red]{r['variant']} n={r['n']}: {r['status']}: "
                f"{escape(r.get('message', ''))}[/]"
            )


def cmd_run(args: argparse.Namespace) -> int:
    return _gpu_run(args, timed=True)


def cmd_check(args: argparse.Namespace) -> int:
    return _gpu_run(args, timed=False)


# ---------------------------------------------------------------------------------------------


def _selection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--variants",
        nargs="*",
        metavar="ID",
        help="variant ids (comma or space separated); default: every non-wrong one",
    )
    p.add_argument("--sizes", nargs="*", metavar="N", help="e.g. 2^24 2^25 or 1000,2^20+3")
    p.add_argument(
        "--dtype", default=None, help="element type (default float32; with --seed, the seed's)"
    )
    p.add_argument(
        "--seed",
        metavar="SEED",
        help="only one seed's variants, their Triton twins and the peers, e.g. 004; a timed run "
        "prints the seed's table (004: effective bandwidth, CUDA beside Triton)",
    )
    p.add_argument(
        "--include-wrong",
        action="store_true",
        help="also run the labelled wrong demonstrations (002 R5-wrong1/2)",
    )
    p.add_argument("--json", metavar="PATH", help="write the run document (JSON) here")
    p.add_argument("--reps", type=int, default=None, help="timed repetitions (default: auto)")
    p.add_argument("--quiet", action="store_true", help="no per-variant progress lines")


# Subcommands that live in their own modules: each module defines
#     add_parser(sub: argparse._SubParsersAction) -> None
# which registers its parser and sets `func` (taking the parsed args, returning an exit code).
PLUGIN_COMMANDS = {
    "report": "harness.cli.report",
    "inspect": "harness.cli.census",
    "host": "harness.cli.host",
    "profile": "harness.cli.profile",
    "sanitize": "harness.cli.sanitize",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reduce-ladder",
        description="The CUDA parallel-reduction ladder beside its Triton twins: verified and "
        "timed on the GPU (with no GPU: the CPU path).",
        epilog="Exit codes: 0 ok; 1 a variant failed; 2 bad usage.",
    )
    sub = parser.add_subparsers(dest="command")
    p_run = sub.add_parser("run", help="verify and time the ladder (the default command)")
    _selection_args(p_run)
    p_run.set_defaults(func=cmd_run)
    p_check = sub.add_parser("check", help="correctness only")
    _selection_args(p_check)
    p_check.set_defaults(func=cmd_check)
    p_list = sub.add_parser("list", help="print the catalogue")
    p_list.add_argument("--format", choices=("table", "json"), default="table")
    p_list.add_argument("--dtype", default=None)
    p_list.add_argument("--backend", choices=("cuda", "triton", "peer"), default=None)
    p_list.set_defaults(func=cmd_list)
    import importlib

    for module in PLUGIN_COMMANDS.values():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
            continue
        mod.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    known = {"run", "check", "list", "-h", "--help", *PLUGIN_COMMANDS}
    if not argv or argv[0] not in known:
        argv = ["run", *argv]
    try:
        args = parser.parse_args(argv)
        return args.func(args)
    except UsageError as e:
        print(f"reduce-ladder: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("reduce-ladder: interrupted", file=sys.stderr)
        return 130
