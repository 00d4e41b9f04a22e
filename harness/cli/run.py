"""`reduce-ladder run` (the default command) and `reduce-ladder check`: the same Selection, resolved
before anything runs (a UsageError says why it cannot), then timed or checked only: on a GPU as
cases of the suite "ladder" (harness.studies.suites); without one by the CPU path
(docs/correctness.md): every Triton kernel selected runs under Triton's interpreter
(TRITON_INTERPRET=1) against the golden sums, a CUDA variant through its Triton twin and its source
compiled by NVRTC; either way its failures print as every suite's (suites.print_failures)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from functools import partial

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.cli import common
from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError, plural, size_list
from harness.compile import cuda_source
from harness.core import catalogue, device, dtypes
from harness.core.catalogue import Variant
from harness.report import records
from harness.studies import session, suites


@dataclass(frozen=True)
class Selection:
    ids: list[str]  # as named on the command line (empty: the default selection)
    variants: list[Variant]  # in ladder order
    dtype: str
    study: str | None  # a study note's number, e.g. "004"
    sizes: list[int] | None  # as given (None: the path's defaults)


def study_and_dtype(study: str | None, dtype: str | None) -> tuple[str | None, str]:
    """--study and --dtype (one of argparse's choices) resolved: an unknown study is a usage
    error; without --dtype a study runs in its own first dtype (004: int32), otherwise float32."""
    if not study:
        return None, dtype or "float32"
    study = study.strip().rstrip(":")
    notes = sorted({s.split(":")[0] for v in catalogue.VARIANTS for s in v.seeds})  # 000, ..., 004
    if study not in notes:
        raise UsageError(
            f"unknown seed {study!r} (--study); study notes with variants: {', '.join(notes)}"
        )
    own = session.seed_dtypes(study)
    dtype = dtype or own[0]
    if dtype not in own:
        raise UsageError(f"study {study}'s variants support {', '.join(own)}, not {dtype}")
    return study, dtype


def resolve(args: argparse.Namespace) -> Selection:
    """The selection `run` / `check` asked for; a UsageError for anything that cannot run."""
    ids = list(dict.fromkeys(common.variant_ids(args.variants)))  # each once: one case each
    if args.variants is not None and not ids:
        raise UsageError("--variants needs at least one id (reduce-ladder list); without it: all")
    study, dtype = study_and_dtype(args.study, args.dtype)
    common.require_dtype((catalogue.get(i) for i in ids), dtype)
    sizes = common.parse_sizes(args.sizes)
    variants = session.ladder_variants(dtype, ids or None, args.include_wrong, args.all)
    if study:
        variants = session.seed_variants(variants, study)
    if study and not any(session.carries_study(v, study) for v in variants):
        own = [v for v in catalogue.VARIANTS if session.carries_study(v, study)]
        if not ids and all(v.family == "001" for v in own):
            raise UsageError(
                f"study {study}'s variants run end to end from host memory, which `run` and "
                f"`check` do not measure: run `reduce-ladder host` for study {study}"
            )
        if ids:
            raise UsageError(f"none of {', '.join(ids)} is study {study}'s: nothing to check")
        raise UsageError(f"no variant of study {study} supports {dtype}: nothing to check")
    if not variants:
        raise UsageError(f"no variant selected ({dtype}): nothing to check")
    return Selection(ids, variants, dtype, study, sizes)


# `check` on a GPU: the edges of a tile (255, 256, 257), a non-power of two and a size with many
# blocks and a ragged tail.
CHECK_SIZES = (1, 255, 256, 257, 1000, 2**20 + 3)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """`run` and `check`."""
    run = "Verify and time the ladder on a GPU (without one: the CPU path, no times)."
    help = "verify and time the ladder (the default command)"
    p = common.command(sub, "run", partial(run_or_check, timed=True), help, run, "reps")
    selection_arguments(p)
    check = "Verify the selection (no timing); without a GPU: the CPU path."
    p = common.command(sub, "check", partial(run_or_check, timed=False), "correctness only", check)
    selection_arguments(p).set_defaults(reps=None)


def selection_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    study = "only one study note's variants (e.g. 004), their Triton twins and the peers; a timed "
    study += "run prints the note's table (004: effective bandwidth, CUDA beside Triton)"
    every = "also the variants left out by default: the torch.compile peers (static, dynamic "
    every += "shapes, cooperative; each first call compiles for seconds)"
    return common.add_options(
        p, "json", "quiet", "wide",
        variants="variant ids (comma or space separated); default: every non-wrong one",
        sizes="e.g. 2^24 2^25 or 1000,2^20+3",
        dtype="element type (default float32; with --study, the study's)",
        study=dict(metavar="NOTE", help=study),
        # The old name, kept working (it read like a random seed): listed in --help.
        seed=dict(dest="study", metavar="NOTE", help="the old name of --study"),
        include_wrong=common.flag("also run the labelled wrong demonstrations (002 R5-wrong1/2)"),
        all=common.flag(every),
    )  # fmt: skip


def run_or_check(args: argparse.Namespace, timed: bool) -> int:
    sel = resolve(args)  # usage errors first, GPU or not
    common.check_writable(args.json)
    if not device.gpu_available():
        return run_cpu_path(args, sel, common.console())
    return run_on_gpu(args, sel, timed, common.console())


def write_run(path: str | None, rows: list, **head) -> None:
    """`run` / `check --json`: the ladder's ROWS document, with mode ("timed", "check", "cpu") and
    head (seed_tables, compile) beside the rows."""
    doc = records.rows_document(rows, suite="ladder", device=device.device_info(), **head)
    common.write_json(path, doc)


def gpu_sizes(sel: Selection, timed: bool) -> tuple[list[int], list[str]]:
    """The sizes to run on this GPU, and why any given were left out (above every selected
    variant's limit, or an input larger than the GPU's memory)."""
    import torch

    given = sel.sizes or list(session.DEFAULT_SIZES if timed else CHECK_SIZES)
    limit = max(v.max_n for v in sel.variants)
    memory = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    too_big = [n for n in given if n > limit]
    no_room = [n for n in given if n <= limit and n * dtypes.get(sel.dtype).itemsize > memory]
    notes = []
    if too_big:
        notes.append(f"above every selected variant's limit of {limit:,}: {size_list(too_big)}")
    if no_room:
        gib = f"{memory / 2**30:.0f} GiB"
        notes.append(f"{sel.dtype} inputs larger than the GPU's {gib}: {size_list(no_room)}")
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
    dtype, name = sel.dtype, device.device_info().get("name")
    counts = f"{plural(len(variants), 'variant')} x {plural(len(sizes), 'size')}"
    if not args.quiet:
        out.print(f"{name}: {counts} ({dtype})")

    # What is running, how far along, time so far; on a terminal only, gone before the tables
    # print. The cases through the suites' runner; a case that is not ok is printed as it happens.
    found = [suites.Case("ladder", v.id, dtype, n) for n in sizes for v in variants]
    labels = iter(f"{c.variant} n={c.n:,}" for c in found)
    columns = TextColumn("{task.description:<44}"), BarColumn(), MofNCompleteColumn()
    bar = Progress(*columns, TimeElapsedColumn(), console=out, transient=True, disable=args.quiet)
    task = bar.add_task(next(labels, ""), total=len(found))

    def progress(c: suites.Case, got: list) -> None:
        if bad := session.failed(got):
            bar.console.print(f"  {c.variant} n={c.n:,}: {bad[0].check}")
        bar.update(task, advance=1, description=next(labels, ""))
        if bar.finished:
            bar.stop()

    head: dict = {"mode": "timed" if timed else "check"}
    if timed and sel.study:  # the study note's table per size; the document names them (its rows
        # are the document's own: benchmarks/seed_table.py renders them from it)
        head["seed_tables"] = [{"seed": sel.study, "n": n, "dtype": dtype} for n in sizes]

    def page(doc: dict, rows: list) -> None:
        """A timed run's ladder table per size (a study's: its note's table), else each sum
        against its golden."""
        for n in sizes if timed and sel.study and not args.quiet else ():
            title = f"seed {sel.study}, {name}, {dtype}, n = {n:,}"
            out.print(tables.rich_seed(tables.seed_rows(rows, n, dtype, sel.study), title))
        if not args.quiet and timed and not sel.study:
            for n in sizes:  # the legend (each variant's change) once, under the last table
                title = f"{name}, {dtype}, n = {n:,}"
                out.print(ladder_console_table(rows, n, dtype, wide=args.wide, title=title,
                                               with_legend=n == sizes[-1]))  # fmt: skip
                if best := tables.best_line(rows, n, dtype):
                    out.print(f"  {best}", highlight=False)
        elif not args.quiet:
            out.print(tables.rich_checks(rows, f"correctness, {dtype}", wide=args.wide))

    keys = ("variants", "sizes", "dtype", "study", "reps")
    options = {k: getattr(args, k) for k in keys if getattr(args, k)}
    bar.start()
    try:
        return suites.run_suite("ladder", found, args.json, options, args.reps, timed=timed,
                                progress=progress, head=head, page=page, console=out)  # fmt: skip
    finally:
        if not bar.finished:  # a run cut short (progress() stops it after the last case)
            bar.stop()


# The interpreter runs every program in Python (0.2-0.5 s per twin at 2^16 on a 2-core CI machine).
INTERPRETED_MAX_N = 2**16
ARCH = "sm_90"


def interpreted_variants(sel) -> list[Variant]:
    """The Triton variants selected and the twins of the CUDA ones (each once, in ladder order)."""
    twins = [catalogue.get(v.twin) for v in sel.variants if v.backend == "cuda" and v.twin]
    chosen = {v.id: v for v in [*sel.variants, *twins] if v.backend == "triton"}
    return catalogue.ladder_order(v for v in chosen.values() if sel.dtype in v.dtypes)


def compile_sources(sources: list[str], arch: str = ARCH) -> list[dict]:
    """Each source compiled by NVRTC with every instantiation the catalogue and the sanitizer's
    demonstrations launch, its kernels' spills checked (the experiments': their tests)."""
    from harness.compile import nvrtc

    rows = []
    for src in sources:
        row: dict = {"source": src, "arch": arch}
        try:
            r = nvrtc.compile_file(src, arch)  # the catalogue's expressions, the demos' included
            spills = [k for k, res in r.resources.items() if res.spill_store_bytes
                      or res.spill_load_bytes or res.stack_bytes]  # fmt: skip
            row.update(status="spills" if spills else "ok", kernels=len(r.lowered), spilling=spills)
        except Exception as e:  # reported in the row; the other sources are still compiled
            row.update(status="error", message=f"{type(e).__name__}: {e}")
        rows.append(row)
    return rows


def run_cpu_path(args: argparse.Namespace, sel, console: Console) -> int:
    from harness.report import tables

    why = device.torch_gpu()[1]
    given = sel.sizes or list(session.CPU_SIZES)
    sizes = [n for n in given if n <= INTERPRETED_MAX_N]
    too_big = [n for n in given if n > INTERPRETED_MAX_N]
    interpreted = interpreted_variants(sel)
    # Every CUDA source for the default run, else those of the CUDA variants selected.
    cuda = {v.source for v in sel.variants if v.backend == "cuda" and v.source}
    sources = sorted(cuda) if sel.ids or sel.study else cuda_source.sources()
    no_gpu = f"timings need an NVIDIA GPU, and this machine has none: {why}"
    limit = "the interpreter's limit of 2^16"
    if not sizes:
        raise UsageError(
            f"nothing to check on the CPU: every size given is above {limit} (skipped: "
            f"{size_list(too_big)}); give sizes up to 2^16, e.g. --sizes 1000 2^16 ({no_gpu})"
        )
    if not interpreted and not sources:
        what = "no Triton kernel and no CUDA source in the selection"
        if all(v.backend == "peer" for v in sel.variants):
            what = "peers are library calls on the GPU"
        raise UsageError(f"nothing to check on the CPU: {what} ({no_gpu})")
    device.use_interpreter_if_no_gpu()
    if too_big:
        console.print(f"[yellow]Sizes above {limit} skipped: {size_list(too_big)}.[/]")
    quiet, ns = args.quiet, ", ".join(map(str, sizes))
    twins = f"{plural(len(interpreted), 'Triton twin')} under TRITON_INTERPRET=1 at n = {ns}"
    nvrtc = f"{plural(len(sources), 'CUDA source')} compiled by NVRTC ({ARCH})"
    work = ([twins] if interpreted else []) + ([nvrtc] if sources else [])
    if not quiet:
        for v in map(catalogue.get, sel.ids):  # what is checked in its place
            twin = f"its Triton twin {v.twin} runs interpreted and " if v.twin else ""
            twin = twin or "it has no Triton twin; "
            if v.backend == "cuda":
                line = f"no GPU to launch it; {twin}its source {v.source} is compiled by NVRTC"
            elif v.backend == "peer":
                line = "a library call on the GPU; nothing to check without one"
            else:
                continue
            console.print(f"  {v.id}: {line}", highlight=False)
        console.print(f"[bold]No GPU: {why}.[/] Timings need an NVIDIA GPU; running the CPU path: "
                      + ", and ".join(work) + ".")  # fmt: skip
    found = [suites.Case("ladder", v.id, sel.dtype, n) for n in sizes for v in interpreted]
    measured = suites.run(found, timed=False)
    if measured and not quiet:  # --wide: the result and the golden too
        title = "Triton twins, interpreted on the CPU"
        console.print(tables.rich_checks(measured, title, wide=args.wide))
    suites.print_failures(measured, console)
    compiled = compile_sources(sources)
    for c in compiled:
        kernels = f"{c.get('kernels')} kernels, no spills" if c.get("kernels") else ""
        detail = c.get("message") or kernels or "parsed; no kernel instantiated"
        if c["status"] == "spills":
            detail = f"local memory in {', '.join(c['spilling'])}"
        if c["status"] != "ok" or not quiet:
            console.print(f"  NVRTC {c['arch']} {c['source']}: {c['status']} ({detail})")
    write_run(args.json, measured, mode="cpu", compile=compiled)
    bad_compile = [c for c in compiled if c["status"] == "error"]
    if bad_compile and all("libnvrtc not found" in c.get("message", "") for c in bad_compile):
        console.print(
            "[yellow]NVRTC is not installed, so the CUDA sources were not compiled "
            "(pip install -e '.[cuda13]').[/]"
        )
        if not measured:
            raise UsageError("nothing was checked: no Triton kernel selected and no NVRTC")
        bad_compile = []
    if session.failed(measured) or bad_compile:
        console.print("[red]Some checks failed.[/]")
        return EXIT_FAILED
    done = [plural(len(session.case_rows(measured)), "interpreted check")] if measured else []
    done += [plural(len(compiled), "source") + " compiled"] if compiled else []
    console.print(f"CPU path passed: {', '.join(done)}. Run on a machine with an NVIDIA GPU for "
                  "the timed ladder.")  # fmt: skip
    return EXIT_OK
