"""`run` / `check` without a GPU (docs/correctness.md): every Triton kernel selected runs under
Triton's interpreter (TRITON_INTERPRET=1) against the golden sums, a CUDA variant through its Triton
twin and its source compiled by NVRTC; a selection that leaves nothing to check is a usage error.
(`sel` below: harness.cli.run's Selection.) print_failures: how a run's failures print, either way.
"""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.markup import escape

from harness.cli.common import EXIT_FAILED, EXIT_OK, UsageError, plural, size_list, write_json
from harness.compile import cuda_source
from harness.core import catalogue, device
from harness.core.catalogue import Variant
from harness.studies import session, suites

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
    from harness.core import demo_records

    rows = []
    for src in sources:
        row: dict = {"source": src, "arch": arch}
        try:
            exprs = catalogue.name_expressions(src)
            exprs += demo_records.name_expressions() if src == demo_records.SOURCE else []
            r = nvrtc.compile_file(src, arch, list(dict.fromkeys(exprs)))
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
    rows = session.record_dicts(measured)
    if rows and not quiet:  # --wide: the result and the golden too
        title = "Triton twins, interpreted on the CPU"
        console.print(tables.rich_checks(rows, title, wide=args.wide))
    print_failures(rows, console)
    compiled = compile_sources(sources)
    for c in compiled:
        kernels = f"{c.get('kernels')} kernels, no spills" if c.get("kernels") else ""
        detail = c.get("message") or kernels or "parsed; no kernel instantiated"
        if c["status"] == "spills":
            detail = f"local memory in {', '.join(c['spilling'])}"
        if c["status"] != "ok" or not quiet:
            console.print(f"  NVRTC {c['arch']} {c['source']}: {c['status']} ({detail})")
    write_json(args.json, session.run_document("cpu", measured, compile=compiled))
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
    console.print(f"CPU path passed: {', '.join(done)}. Run on a machine with an NVIDIA GPU for "
                  "the timed ladder.")  # fmt: skip
    return EXIT_OK


def print_failures(rows: list[dict], console: Console) -> None:
    """Wrong demonstrations with their verdict (a racy kernel can happen to be right); every
    other row that is not ok, with its message; then the peers that cannot run here (an optional
    library not installed): one line per reason, with the peers it skips and how to add them --
    not an error, and not one line per row."""
    skipped: dict[str, dict[str, None]] = {}  # the ids in order, each once, by reason
    for r in rows:
        if r.get("extra", {}).get(session.UNAVAILABLE):
            why = r.get("message", "").removeprefix("unavailable: ")
            skipped.setdefault(why.removeprefix(f"{r['variant']}: "), {})[r["variant"]] = None
        elif r.get("wrong_demo"):
            verdict = "WRONG in this run (the race showed)" if r["status"] != "ok" else (
                "right in this run (the race did not show; the code is still racy)")  # fmt: skip
            console.print(f"  wrong demonstration {r['variant']} n={r['n']}: {verdict}")
        elif r["status"] != "ok":
            message = escape(r.get("message", ""))
            console.print(f"  [red]{r['variant']} n={r['n']}: {r['status']}: {message}[/]")
    for why, ids in skipped.items():
        console.print(f"  skipped {', '.join(ids)}: {escape(why)}", highlight=False)
