"""DIR/report.md and its plots from one run, or several compared with the first: per dtype the
ladder at one n, then the run across its sizes as pivots of its cases; the studies' pages beside
it (PAGES: one writer, each page linked from report.md). Every input is checked before anything
is written. Also the generated blocks of docs/ladder.md and README.md."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from string import ascii_uppercase
from typing import Any

from harness.core.sizes import size_label
from harness.report import (
    accuracy_tables,
    axis_tables,
    devices,
    documents,
    host_tables,
    plots,
    profile_tables,
    tables,
)
from harness.report.devices import rel
from harness.report.documents import Document, ReportError, load_document, load_run
from harness.report.ladder_table import (
    COPY_ID,
    markdown_ladder,
    peer_ratios,
    results_at,
    variant_order,
)
from harness.report.markdown import markdown_table, num, pivot, us
from harness.report.records import Result

DEFAULT_REF_N = 2**25

HOW_TO_READ = (
    "How to read it: *µs* is device time per call (CUDA events, median, L2 flushed between "
    "repetitions); *GB/s* is effective bandwidth (bytes read + bytes written over that "
    "time; for a ladder variant every pass's input and partials, for a peer the input and "
    "its one result, for the copy 2 n itemsize); *% copy* is that as a share of the "
    "device-to-device copy's GB/s at the same n; *× CUB* and *× torch.sum* are t(peer) / "
    "t(variant), so above 1 means faster than the peer. *graph µs* (n ≤ 2^20) is device "
    "time per call replayed from a CUDA graph (the kernels without launch gaps), *call µs* "
    "the host wall time of one synchronized Python call (what a caller waits)."
)


@dataclass
class WrittenReport:
    out_dir: Path
    markdown: Path
    plots: dict[str, dict]  # file name -> what the plotting function drew
    ref_n: dict[str, int]  # dtype -> n of its ladder table
    runs: list[Document]
    compared: dict[str, int]  # dtype -> n the runs were compared at (empty: one run)
    pages: list[str] = field(default_factory=list)  # the studies' pages written beside it


@dataclass(frozen=True)
class Page:
    """A study's page beside report.md, linked from it: its file, the linking section's title,
    load(*paths) its documents read and checked (a ReportError names the file), text(doc,
    out_dir, run) its Markdown, any plot drawn into out_dir (run: the report's first run)."""

    name: str
    title: str
    load: Callable[..., Any]
    text: Callable[[Any, Path, Document], str]


# The pages, by the report option that names their documents, in report.md's order (and the
# order of those options in the command a generated block names).
PAGES = {
    "host": Page("host.md", "Seed 001: host-driven, end to end from host memory",
                 host_tables.load, host_tables.page),
    "accuracy": Page("accuracy.md", "Accuracy: every variant against the exact sum",
                     accuracy_tables.load, accuracy_tables.page),
    "callable": Page("callable.md", "Per call from Python beside device time",
                     tables.load_callable, tables.callable_page),
    "axis": Page("axis.md", "Sums along an axis: the axis family against the peers",
                 axis_tables.load, axis_tables.page),
}  # fmt: skip


def write_page(
    page: Page, paths: Sequence[str | Path], doc: Any, out: Path, run: Document
) -> list[str]:
    """out/page.name from its documents (doc: page.load's), naming them in its last line; returns
    the section of report.md that links it."""
    names = ", ".join(f"`{Path(p).name}`" for p in paths)
    text = page.text(doc, out, run).rstrip("\n")
    _write(out / page.name, f"{text}\n\nRendered from {names}.\n")
    return [f"## {page.title}", "", f"See [{page.name}]({page.name}) (rendered from {names}).", ""]


def plot_names(dtype: str, n: int) -> tuple[str, str]:
    tag = f"log2n{n.bit_length() - 1}" if n & (n - 1) == 0 else f"n{n}"
    return f"bandwidth_vs_n_{dtype}.png", f"ladder_{dtype}_{tag}.png"


def reference_sizes(run: Document, want: int | None = None) -> dict[str, int]:
    """dtype -> n of its ladder table: want (which every dtype must have), else the largest
    n <= 2^25 (else the smallest)."""
    out = {}
    for dtype in run.dtypes():
        sizes = run.sizes(dtype)
        if want is not None and want not in sizes:
            raise ReportError(
                f"{run.path}: no {dtype} rows at n = {size_label(want)} ({want:,}); the run "
                f"has n = {', '.join(map(size_label, sizes))}"
            )
        out[dtype] = want or max((n for n in sizes if n <= DEFAULT_REF_N), default=min(sizes))
    return out


def writable_dir(path: str | Path) -> Path:
    """The output folder, checked (a ReportError before anything is rendered) and created."""
    documents.check_output(path, folder=True, option="--out")
    return documents.output_path(path, folder=True)


def write_report(
    paths: list[str | Path], out_dir: str | Path, ref_n: int | None = None,
    pages: Mapping[str, Sequence[str | Path]] = {},
) -> WrittenReport:  # fmt: skip
    """Write out_dir/report.md and the PNG plots, the first run tabled and plotted, and the pages
    of PAGES given their documents (option -> paths), each linked from report.md. Every input is
    checked first: nothing is written unless all is well."""
    runs = [load_run(p) for p in paths]
    docs = {opt: PAGES[opt].load(*given) for opt, given in pages.items()}
    for r in runs:
        if not r.timed:
            raise ReportError(
                f"{r.path}: no timings to plot (a {r.meta.get('mode') or 'CPU'}-mode run checks "
                "sums but times nothing; run `reduce-ladder run --json ...` on an NVIDIA GPU); "
                "nothing written"
            )
    main, refs, out = runs[0], reference_sizes(runs[0], ref_n), writable_dir(out_dir)
    drawn: dict[str, dict] = {}
    md: list[str] = ["# reduce-ladder report", ""]
    if any(r.meta.get("synthetic") for r in runs):
        md += ["> **SYNTHETIC TEST DATA: these numbers were not measured on any GPU.**", ""]
    for k, r in enumerate(runs):
        dev = r.meta.get("device") or {}
        keys = ("sm_count", "capability", "torch", "triton", "cupy")
        extra = ", ".join(f"{key} {dev[key]}" for key in keys if dev.get(key) is not None)
        md.append(f"- {'run' if len(runs) == 1 else f'run {ascii_uppercase[k]}'}: **{r.device}** "
                  f"({extra or 'no device details'}); {r.kind} file `{Path(r.path).name}`, "
                  f"{r.created}; {len(r.results)} rows, dtypes {', '.join(r.dtypes())}, "
                  f"n = {', '.join(size_label(n) for n in r.sizes())}")  # fmt: skip
    md += ["", HOW_TO_READ, ""]
    for dtype, n in refs.items():
        bw_name, ladder_name = plot_names(dtype, n)
        drawn[bw_name] = plots.plot_bandwidth_vs_n(main, dtype, out / bw_name)
        drawn[ladder_name] = plots.plot_ladder(main, dtype, n, out / ladder_name)
        md += [f"## {dtype}", "", f"### The ladder at n = {size_label(n)} ({n:,})", "",
               markdown_ladder(main.rows, dtype, n), f"![ladder {dtype}]({ladder_name})", "",
               f"### Effective bandwidth vs n ({dtype})", "", f"![bandwidth {dtype}]({bw_name})",
               "", *sweep_section(main, dtype)]  # fmt: skip
    if bad := [r for r in main.results if not r.ok and not r.v.wrong]:
        md += ["## Failed checks", ""]
        md += [f"- {r.variant} {r.dtype} n={r.n}: {r.status} {r.message}" for r in bad] + [""]
    compared: dict[str, int] = {}
    if len(runs) > 1:
        compared = devices.common_sizes(runs, refs)
        md += devices.runs_markdown(runs, compared)
        if compared:
            drawn["compare.png"] = plot_compare(runs, compared, out / "compare.png")
    md += hardware_section(main, out)
    for opt, doc in docs.items():
        md += write_page(PAGES[opt], pages[opt], doc, out, main)
    report = _write(out / "report.md", "\n".join(md))
    return WrittenReport(out, report, drawn, refs, runs, compared, [PAGES[o].name for o in docs])


def sweep_section(run: Document, dtype: str) -> list[str]:
    """The run across its sizes, variants down (ladder order): effective GB/s and % of the
    copy's (✗: a failed check), and at n <= 2^20 device time per call from CUDA-graph replay
    beside one call's wall time."""
    mine, sizes = [r for r in run.results if r.dtype == dtype], run.sizes(dtype)
    at = {n: results_at(mine, dtype, n) for n in sizes}

    def size_grid(sizes: list[int], cell: Callable[[Result], str], head=size_label) -> str:
        rows = [r for r in mine if r.n in sizes]
        return pivot("variant", rows, attrgetter("variant"), attrgetter("n"), cell,
                     variant_order(rows), sizes, head=head)  # fmt: skip

    md, pct = [], lambda r: peer_ratios(r, at[r.n]).pct_copy
    for what, value in (("Effective GB/s (✗: failed check)", lambda r: r.gbps),
                        ("% of copy bandwidth", pct)):  # fmt: skip
        cell = lambda r, value=value: num(value(r), ".0f") if r.ok else "✗"  # noqa: E731
        md += [f"{what}:", "", size_grid(sizes, cell)]
    if small := [s for s in sizes if s <= 2**20]:
        md += [f"### Small sizes: launch overhead ({dtype})", "",
               "Device time per call from CUDA-graph replay (what the kernels cost) beside the "
               "host wall time of one synchronized Python call (what a caller pays):", "",
               size_grid(small, lambda r: f"{us(r.median('graph'))} / {us(r.median('call'))}",
                         lambda n: f"{size_label(n)} graph / call µs")]  # fmt: skip
    return md


def plot_compare(runs: list[Document], n_by_dtype: dict[str, int], path: str | Path) -> dict:
    """t(A) / t(each other run) against n, per variant family and dtype compared (the figure
    `reduce-ladder compare` draws per source), titled with every run's device and date."""
    points = devices.run_points(runs)
    rows = [r for r in devices.device_rows(points) if r.dtype in n_by_dtype]
    title = "\n".join(f"{k}: {r.device}, {r.created or 'no date'} ({Path(r.path).name})"
                      for k, r in zip(ascii_uppercase, runs, strict=False))  # fmt: skip
    return plots.plot_device_source(Path(path), title, rows, points)


def _write(path: Path, text: str) -> Path:
    try:
        path.write_text(text)
    except OSError as e:
        raise ReportError(f"cannot write {path}: {e.strerror or e}") from None
    return path


def hardware_section(run: Document, out: Path) -> list[str]:
    """Links to the Nsight Compute rendering and the compute-sanitizer verdicts when their
    documents (profile.json, sanitize.json) sit beside the run in its results/<device>/ folder."""
    folder = Path(run.path).parent
    profile, sanitize = folder / profile_tables.PROFILE_NAME, folder / "sanitize.json"
    md: list[str] = []
    if profile.is_file():
        rendering = folder / profile_tables.RENDERING_DIR / "profile.md"
        if rendering.is_file():
            link = rel(rendering, out)
            how = f"[{link}]({link}) (rendered from `{profile.name}` beside this run)"
        else:
            how = f"`{profile.name}` beside this run, not rendered yet: `reduce-ladder profile "
            how += f"--render {profile.as_posix()} --out {rendering.parent.as_posix()}`"
        md.append(
            "- Hardware counters per stage (Nsight Compute, CUDA beside its Triton twin), seed "
            f"004's sector table and seed 000's column: {how}."
        )
    if sanitize.is_file():
        try:
            text = profile_tables.sanitize_summary(load_document(sanitize, "sanitize").raw)
        except (ReportError, KeyError, TypeError, AttributeError) as e:
            text = f"unreadable ({e})"
        md.append(f"- compute-sanitizer ([{sanitize.name}]({rel(sanitize, out)})): {text}")
    return ["## Measured by the hardware", "", *md, ""] if md else []


# ---------------------------------------------------------------------------------------------
# the generated blocks of docs/ladder.md and README.md

LADDER_BEGIN, LADDER_END = "<!-- ladder:begin -->", "<!-- ladder:end -->"
SUMMARY_BEGIN, SUMMARY_END = "<!-- ladder-summary:begin -->", "<!-- ladder-summary:end -->"

# The summary's columns after the first: header -> variant id; the stages are found in the run.
SUMMARY_IDS = {"cuda/fastest": "cuda/fastest", "triton/fastest": "triton/fastest",
               "CUB (cupy.sum)": "peer/cupy.sum-cub", "torch.sum": "peer/torch.sum",
               "copy": COPY_ID}  # fmt: skip


def readme_block(written: WrittenReport, readme: Path) -> list[str]:
    """The ladder tables per dtype for the file `readme` (links relative to its folder)."""
    run = written.runs[0]
    lines = [f"Measured on **{run.device}** (`{rel(Path(run.path), readme.parent)}`, "
             f"{run.created}).", ""]  # fmt: skip
    for dtype, n in written.ref_n.items():
        # The device in each table's caption: the page shows one device's numbers, and the
        # other devices' are one link away (results/compare/), so each table says whose they are.
        lines += [f"**{dtype}, n = {size_label(n)}, on {run.device}**", "",
                  markdown_ladder(run.rows, dtype, n)]  # fmt: skip
    plot = rel(written.out_dir / plot_names(run.dtypes()[0], 1)[0], readme.parent)
    report = rel(written.markdown, readme.parent)
    return [
        *lines,
        f"![effective bandwidth vs n]({plot})",
        "",
        f"Full report: [{report}]({report}).",
    ]


def summary_block(written: WrittenReport, readme: Path) -> list[str]:
    """One row per dtype at its ladder table's n: effective GB/s of stage 0, of the best CUDA
    stage of the ladder (stages 0-8, named), of the fastest pair and of the peers."""
    run, rows = written.runs[0], []
    gbps = lambda r: num(r.gbps if r is not None and r.ok else None, ".0f")  # noqa: E731
    for dtype, n in written.ref_n.items():
        at = results_at(run.results, dtype, n)
        stages = [r for r in at.values()
                  if r.v.backend == "cuda" and r.v.stage.isdigit() and r.ok and r.ms]  # fmt: skip
        best = min(stages, key=lambda r: r.ms, default=None)
        rows.append([f"{dtype}, {size_label(n)}",
                     gbps(next((r for r in stages if r.v.stage == "0"), None)),
                     "-" if best is None else f"{gbps(best)} ({best.variant.split('/', 1)[-1]})",
                     *(gbps(at.get(vid)) for vid in SUMMARY_IDS.values())])  # fmt: skip
    headers = ["dtype, n", "stage 0", "best stage", *SUMMARY_IDS]
    return ["Effective bandwidth in GB/s (bytes read and written / device time; higher is "
            f"better),\nmeasured on **{run.device}**, each sum checked against its golden first:",
            "", markdown_table(headers, rows)]  # fmt: skip


BLOCKS = ((LADDER_BEGIN, LADDER_END, readme_block), (SUMMARY_BEGIN, SUMMARY_END, summary_block))


def check_readme(readme: str | Path) -> str:
    """The file's text, or a ReportError when it cannot be read or has no marker block."""
    p = Path(readme)
    try:
        text = p.read_text()
    except OSError as e:
        raise ReportError(f"cannot read {p}: {e.strerror or e}") from None
    if not any(_span(text, begin, end) for begin, end, _ in BLOCKS):
        raise ReportError(
            f"{p} has no {LADDER_BEGIN} ... {LADDER_END} block (the ladder tables) and no "
            f"{SUMMARY_BEGIN} ... {SUMMARY_END} block (the summary); add one pair of marker lines "
            "where the generated block should go"
        )
    return text


def _span(text: str, begin: str, end: str) -> tuple[int, int] | None:
    i, j = text.find(begin), text.find(end)
    return (i, j + len(end)) if i >= 0 and j > i else None


def rendered(text: str, written: WrittenReport, path: Path, command: str) -> str:
    """text (the file at path) with each block it has regenerated."""
    for begin, end, block in BLOCKS:
        if span := _span(text, begin, end):
            lines = [begin, f"<!-- generated by: {command} -- do not edit by hand -->", "",
                     *block(written, path), end]  # fmt: skip
            text = text[: span[0]] + "\n".join(lines) + text[span[1] :]
    return text


def update_readme(readme: str | Path, written: WrittenReport, command: str) -> None:
    """Regenerate the blocks of the file readme (check_readme says it has one)."""
    p = Path(readme)
    _write(p, rendered(check_readme(p), written, p, command))
