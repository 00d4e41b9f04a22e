"""`run` / `check` on a machine without a GPU: what can be checked there, and checking it.

Nothing can be timed, but two things can be checked: every Triton kernel runs under Triton's
interpreter (TRITON_INTERPRET=1) against the golden sums, and every CUDA source compiles (NVRTC
needs no GPU). A CUDA variant is therefore checked through its Triton twin (interpreted) and its
source (compiled); a peer (a library call on the GPU) has nothing to check here. A selection that
leaves nothing to check is a usage error that says why -- never "passed".
"""

from __future__ import annotations

import argparse

from rich.console import Console

from harness.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    UsageError,
    plural,
    size_list,
    write_json,
)
from harness.cli.selection import Selection, print_failures, split_sizes
from harness.core import catalogue, device
from harness.core.catalogue import Variant
from harness.studies import session

# The interpreter runs every program of a grid in Python (0.2-0.5 s per twin at 2^16 on a 2-core
# CI machine, growing with n, times some 20 twins and several sizes), so larger sizes are left to
# the GPU run.
INTERPRETED_MAX_N = 2**16
ARCH = "sm_90"


def interpreted_variants(sel: Selection) -> list[Variant]:
    """The Triton kernels to interpret: the Triton variants selected and the Triton twins of the
    CUDA variants selected (each once, in ladder order)."""
    chosen: dict[str, Variant] = {}
    for v in sel.variants:
        if v.backend == "triton":
            chosen[v.id] = v
        elif v.backend == "cuda" and v.twin and sel.dtype in catalogue.get(v.twin).dtypes:
            chosen[v.twin] = catalogue.get(v.twin)
    return catalogue.ladder_order(chosen.values())


def compiled_sources(sel: Selection) -> list[str]:
    """The CUDA sources to compile: every one for the default run, else those of the CUDA
    variants selected."""
    from harness.compile import cuda_source

    if not sel.ids and not sel.study:
        return cuda_source.sources()
    return sorted({v.source for v in sel.variants if v.backend == "cuda" and v.source})


def study_expressions(source: str) -> list[str]:
    """The template instantiations of a source whose kernels no catalogue variant launches (the
    sanitizer demonstrations'): compiled with them, not as 0 kernels. (The experiments' own
    sources live in experiments/, and their tests compile them.)"""
    from harness.core import demo_records

    owners = {demo_records.SOURCE: demo_records.name_expressions}
    return owners[source]() if source in owners else []


def compile_sources(sources: list[str], arch: str = ARCH) -> list[dict]:
    """Each source compiled by NVRTC (no GPU needed) with every instantiation the catalogue and
    the studies launch, its kernels' spills checked."""
    from harness.compile import nvrtc

    rows = []
    for src in sources:
        row: dict = {"source": src, "arch": arch}
        try:
            exprs = catalogue.name_expressions(src) + study_expressions(src)
            r = nvrtc.compile_file(src, arch, list(dict.fromkeys(exprs)))
            spills = [
                k
                for k, res in r.resources.items()
                if res.spill_store_bytes or res.spill_load_bytes or res.stack_bytes
            ]
            row.update(
                status="ok" if not spills else "spills", kernels=len(r.lowered), spilling=spills
            )
        except Exception as e:  # reported in the row; the other sources are still compiled
            row.update(status="error", message=f"{type(e).__name__}: {e}")
        rows.append(row)
    return rows


def _what_stands_in(sel: Selection, console: Console) -> None:
    """For each CUDA variant named on the command line: what is checked in its place."""
    named = [catalogue.get(i) for i in sel.ids]
    for v in named:
        if v.backend == "cuda":
            twin = (
                f"its Triton twin {v.twin} runs interpreted and "
                if v.twin
                else "it has no Triton twin; "
            )
            console.print(
                f"  {v.id}: no GPU to launch it; {twin}its source {v.source} is compiled by NVRTC",
                highlight=False,
            )
        elif v.backend == "peer":
            console.print(
                f"  {v.id}: a library call on the GPU; nothing to check without one",
                highlight=False,
            )


def run_cpu_path(args: argparse.Namespace, sel: Selection, console: Console) -> int:
    from harness.report import tables

    why = device.torch_gpu()[1]
    sizes, too_big = split_sizes(sel.sizes or list(session.CPU_SIZES), INTERPRETED_MAX_N)
    interpreted = interpreted_variants(sel)
    sources = compiled_sources(sel)
    no_gpu = f"timings need an NVIDIA GPU, and this machine has none: {why}"
    if not sizes:
        raise UsageError(
            f"nothing to check on the CPU: every size given is above the interpreter's limit of "
            f"2^16 (skipped: {size_list(too_big)}); give sizes up to 2^16, e.g. --sizes 1000 "
            f"2^16 ({no_gpu})"
        )
    if not interpreted and not sources:
        raise UsageError(
            "nothing to check on the CPU: "
            + (
                "peers are library calls on the GPU"
                if all(v.backend == "peer" for v in sel.variants)
                else "no Triton kernel and no CUDA source in the selection"
            )
            + f" ({no_gpu})"
        )
    device.use_interpreter_if_no_gpu()
    if too_big:
        console.print(
            f"[yellow]Sizes above the interpreter's limit of 2^16 skipped: {size_list(too_big)}.[/]"
        )
    quiet = getattr(args, "quiet", False)
    if not quiet:
        _what_stands_in(sel, console)
    work = []
    if interpreted:
        work.append(
            f"{plural(len(interpreted), 'Triton twin')} under TRITON_INTERPRET=1 at n = "
            + ", ".join(map(str, sizes))
        )
    if sources:
        work.append(f"{plural(len(sources), 'CUDA source')} compiled by NVRTC ({ARCH})")
    if not quiet:
        console.print(
            f"[bold]No GPU: {why}.[/] Timings need an NVIDIA GPU; running the CPU path: "
            + ", and ".join(work)
            + "."
        )
    rows = session.run_selection(interpreted, sel.dtype, sizes, timed=False)
    if rows and not quiet:
        wide = getattr(args, "wide", False)  # --wide: the result and the golden too
        console.print(tables.rich_checks(rows, "Triton twins, interpreted on the CPU", wide=wide))
    print_failures(rows, console)
    compiled = compile_sources(sources)
    for c in compiled:
        kernels = c.get("kernels", 0)
        detail = c.get("message") or (
            f"{kernels} kernels, no spills" if kernels else "parsed; no kernel instantiated"
        )
        if c["status"] == "spills":
            detail = f"local memory in {', '.join(c['spilling'])}"
        if c["status"] != "ok" or not quiet:
            console.print(f"  NVRTC {c['arch']} {c['source']}: {c['status']} ({detail})")
    if args.json:
        write_json(args.json, session.run_document("cpu", rows, compile=compiled))
    bad_compile = [c for c in compiled if c["status"] == "error"]
    if bad_compile and all("libnvrtc not found" in c.get("message", "") for c in bad_compile):
        console.print(
            "[yellow]NVRTC is not installed, so the CUDA sources were not compiled "
            "(pip install -e '.[cuda13]').[/]"
        )
        if not rows:
            raise UsageError("nothing was checked: no Triton kernel selected and no NVRTC")
        bad_compile = []
    if session.failed(rows) or bad_compile:
        console.print("[red]Some checks failed.[/]")
        return EXIT_FAILED
    done = [plural(len(rows), "interpreted check")] if rows else []
    done += [plural(len(compiled), "source") + " compiled"] if compiled else []
    console.print(
        f"CPU path passed: {', '.join(done)}. Run on a machine with an NVIDIA GPU for the timed "
        "ladder."
    )
    return EXIT_OK
