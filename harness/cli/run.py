"""`reduce-ladder run` (the default command) and `reduce-ladder check`: the same selection, timed
or checked only. On a GPU every variant is verified (and, for `run`, timed); without one the CPU
path (harness.cli.cpu_path) checks what can be checked there. The selection: selection.py."""

from __future__ import annotations

import argparse
from functools import partial

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError
from harness.cli.cpu_path import run_cpu_path
from harness.cli.selection import Selection, print_failures, print_skipped, resolve
from harness.core import device, dtypes
from harness.core.catalogue import Variant
from harness.studies import session

# `check` on a GPU: the edges of a tile (255, 256, 257), a non-power of two and a size with many
# blocks and a ragged tail.
CHECK_SIZES = (1, 255, 256, 257, 1000, 2**20 + 3)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`run` and `check`."""
    help, run = "verify and time the ladder (the default command)", "Verify and time the ladder "
    run += "on a GPU (without one: the CPU path, no times)."
    p = common.command(sub, "run", partial(run_or_check, timed=True), help, run)
    selection_arguments(p)
    p.add_argument("--reps", type=common.positive_int, help="timed repetitions (default: auto)")
    check = "Verify the selection (no timing); without a GPU: the CPU path."
    p = common.command(sub, "check", partial(run_or_check, timed=False), "correctness only", check)
    selection_arguments(p)
    p.set_defaults(reps=None)


def selection_arguments(p: argparse.ArgumentParser) -> None:
    add = p.add_argument
    ids = "variant ids (comma or space separated); default: every non-wrong one"
    add("--variants", nargs="*", metavar="ID", help=ids)
    add("--sizes", nargs="*", metavar="N", help="e.g. 2^24 2^25 or 1000,2^20+3")
    add("--dtype", help="element type (default float32; with --study, the study's)")
    study = "only one study note's variants (e.g. 004), their Triton twins and the peers; a timed "
    study += "run prints the note's table (004: effective bandwidth, CUDA beside Triton)"
    add("--study", metavar="NOTE", help=study)
    # The old name, kept working (it read like a random seed): listed in --help.
    add("--seed", dest="study", metavar="NOTE", help="the old name of --study")
    wrong = "also run the labelled wrong demonstrations (002 R5-wrong1/2)"
    add("--include-wrong", action="store_true", help=wrong)
    every = "also the variants left out by default: the torch.compile peers (static, dynamic "
    every += "shapes, cooperative; each first call compiles for seconds)"
    add("--all", action="store_true", help=every)
    add("--json", metavar="PATH", help="write the run document (JSON) here")
    add("--quiet", action="store_true", help="only the summary and the verdict (and failures)")
    wide = "every column (default: a table that fits 100 columns)"
    add("--wide", action="store_true", help=wide)


def run_or_check(args: argparse.Namespace, timed: bool) -> int:
    sel = resolve(args)  # usage errors first, GPU or not
    common.check_writable(args.json)
    if not device.gpu_available():
        return run_cpu_path(args, sel, common.console())
    return run_on_gpu(args, sel, timed, common.console())


def gpu_sizes(sel: Selection, timed: bool) -> tuple[list[int], list[str]]:
    """The sizes to run on this GPU, and why any given were left out (above every selected
    variant's limit, or an input larger than the GPU's memory)."""
    import torch

    given = sel.sizes or list(session.DEFAULT_SIZES if timed else CHECK_SIZES)
    limit = max(v.max_n for v in sel.variants)
    memory = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    itemsize = dtypes.get(sel.dtype).itemsize
    too_big = [n for n in given if n > limit]
    no_room = [n for n in given if n <= limit and n * itemsize > memory]
    notes = []
    if too_big:
        notes.append(
            f"above every selected variant's limit of {limit:,}: {common.size_list(too_big)}"
        )
    if no_room:
        gib = f"{memory / 2**30:.0f} GiB"
        notes.append(f"{sel.dtype} inputs larger than the GPU's {gib}: {common.size_list(no_room)}")
    if not (kept := [n for n in given if n not in too_big and n not in no_room]):
        raise UsageError("nothing to run: every size is skipped (" + "; ".join(notes) + ")")
    return kept, notes


def run_on_gpu(args: argparse.Namespace, sel: Selection, timed: bool, out: Console) -> int:
    from harness.report import tables
    from harness.report.ladder_table import ladder_console_table

    sizes, notes = gpu_sizes(sel, timed)
    for note in notes:
        out.print(f"[yellow]Sizes skipped, {note}.[/]")
    variants = sel.variants
    cuda_ok, why = device.cupy_gpu()
    if not cuda_ok:
        out.print(f"[yellow]CUDA variants skipped: {why}[/]")
        variants = [v for v in variants if v.backend != "cuda" and "cupy" not in v.id]
        if not variants:
            raise UsageError(f"nothing to run: every selected variant needs CuPy ({why})")
    dtype, study, name, head = sel.dtype, sel.study, device.device_info().get("name"), {}
    counts = f"{common.plural(len(variants), 'variant')} x {common.plural(len(sizes), 'size')}"
    if not args.quiet:
        out.print(f"{name}: {counts} ({dtype})")

    # What is running, how far along, time so far; on a terminal only, gone when done.
    columns = TextColumn("{task.description:<44}"), BarColumn(), MofNCompleteColumn()
    with Progress(
        *columns, TimeElapsedColumn(), console=out, transient=True, disable=args.quiet
    ) as bar:
        task = bar.add_task("", total=sum(dtype in v.dtypes for v in variants) * len(sizes))

        def starting(v: Variant, n: int) -> None:
            bar.update(task, description=f"{v.id} n={n:,}")

        def progress(row: dict) -> None:
            bar.advance(task)
            if row["status"] not in ("ok", session.SKIPPED) and not row.get("wrong_demo"):
                bar.console.print(f"  {row['variant']} n={row['n']:,}: {row['status']}")

        rows = session.run_selection(
            variants, dtype, sizes, timed=timed, reps=args.reps, progress=progress,
            starting=starting,
        )  # fmt: skip
    if timed and study:
        head["seed_tables"] = []
        for n in sizes:
            srows = tables.seed_rows(rows, n, dtype, study)
            title = f"seed {study}, {name}, {dtype}, n = {n:,}"
            table = {"seed": study, "n": n, "dtype": dtype, "title": title, "rows": srows}
            head["seed_tables"].append(table)
            if not args.quiet:
                out.print(tables.rich_seed(srows, title))
                markdown = f"### {title}\n\n" + tables.markdown_seed(srows)
                out.print(markdown, highlight=False, markup=False)
    if args.json:
        common.write_json(
            args.json, session.run_document("timed" if timed else "check", rows, **head)
        )
    if args.quiet:
        pass
    elif timed and not study:
        for n in sizes:  # the legend (each variant's change) once, under the last table
            last, title = n == sizes[-1], f"{name}, {dtype}, n = {n:,}"
            table = ladder_console_table(
                rows, n, dtype, wide=args.wide, title=title, with_legend=last
            )
            out.print(table)
            if best := tables.best_line(rows, n, dtype):
                out.print(f"  {best}", highlight=False)
    else:
        out.print(tables.rich_checks(rows, f"correctness, {dtype}", wide=args.wide))
    out.print(f"summary: {session.summarize(rows)}")
    print_failures(rows, out)
    print_skipped(rows, out)
    return EXIT_FAILED if session.failed(rows) else EXIT_OK  # wrong demonstrations do not count
