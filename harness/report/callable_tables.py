"""The per-call-from-Python figures in the report: the callable suite's rows (a ROWS document from
`reduce-ladder bench callable`, or an older callable/1 file, read into rows by
harness.report.rows), metric "call".

`reduce-ladder report RUN.json --out DIR --callable callable.json` writes DIR/callable.md (one
table per dtype: microseconds per call of every entry and its ratio to torch.sum, >= 1.00x at
least as fast) and DIR/callable-DTYPE.png (per call vs n), and appends to DIR/report.md a link and
the table that puts both figures side by side for the fastest variants and the peers: the run's
device time and the time per call from Python, each with its ratio to torch.sum, joined on
(variant, dtype, n) where both files have the row.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.sizes import size_label
from harness.report.documents import Document, ReportError, load_document
from harness.report.ladder_table import CUB_ID, PEER_LABELS, TORCH_ID
from harness.report.markdown import RIGHT, markdown_table
from harness.report.records import ResultRecord
from harness.report.rows import rows as rows_of
from harness.report.tables import suite_table

BASE = "torch.sum"
METHOD = ("back-to-back calls in a Python loop, CUDA events around the loop, median per call; "
          "views rotated to cover 2x L2 (harness.core.timing.loop_ms)")  # fmt: skip
# The catalogue's variants and peers -> the per-call entry a user calls them through.
PUBLIC_ENTRY = {
    "cuda/fastest": "api cuda/fastest",
    "triton/fastest": "api triton/fastest",
    CUB_ID: "cupy.sum-cub",
    TORCH_ID: "torch.sum",
}
PLOTTED = ("torch.sum", "api cuda/fastest", "api triton/fastest", "op cuda/fastest",
           "cupy.sum-cub", "torch.compile sum", "launch cuda/fastest function")  # fmt: skip


def load(path: str | Path) -> Document:
    """A per-call document; ReportError naming the file otherwise."""
    doc = load_document(path, ("callable", "rows"))
    if not _calls(doc):
        raise ReportError(f"{path}: no per-call rows (`reduce-ladder bench callable --json`)")
    return doc


def _calls(doc: Document) -> list:
    return [r for r in rows_of(doc) if r.metric == "call"]


def per_call(doc: Document) -> dict[tuple[str, str, int], float]:
    """(entry, dtype, n) -> microseconds per call, for the rows that were measured."""
    return {(r.variant, r.dtype, r.n): r.median_ms * 1e3 for r in _calls(doc)}


def _dtypes(doc: Document) -> list[str]:
    return list(dict.fromkeys(r.dtype for r in _calls(doc)))


def _ratio(base: float | None, t: float | None) -> str:
    return f"{base / t:.2f}x" if base and t else "-"


def markdown(doc: Document) -> str:
    """callable.md: per dtype, n down, entries across: 'us (ratio to torch.sum)'."""
    out = [f"# Per call from Python: {doc.device}", "", doc.raw.get("method", METHOD), "",
           "Each cell: microseconds per call, and torch.sum's time over it (>= 1.00x: at least as "
           "fast as torch.sum).", ""]  # fmt: skip
    for dtype in _dtypes(doc):
        out += [f"## {dtype}", "", suite_table(_calls(doc), dtype)]
    return "\n".join(out)


def plot(doc: Document, dtype: str, path: str | Path) -> list[str]:
    """Per call (us) vs n for the PLOTTED entries; returns the entries drawn."""
    from harness.report.plots import _plt, _save

    plt = _plt()
    by = per_call(doc)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    drawn = []
    for e in PLOTTED:
        pts = sorted((n, t) for (entry, d, n), t in by.items() if entry == e and d == dtype)
        if pts:
            ax.plot([n for n, _ in pts], [t for _, t in pts], marker="o", label=e)
            drawn.append(e)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (elements)")
    ax.set_ylabel("us per call (back to back, from Python)")
    ax.set_title(f"Per call from Python, {dtype}: {doc.device}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    return drawn


def joined_rows(records: list[ResultRecord], doc: Document) -> list[list[str]]:
    """Both figures for the fastest variants and the peers, joined on (variant, dtype, n): device
    time (us) and its ratio to torch.sum's device time, per call (us) and its ratio to torch.sum
    per call. Only rows present in both files."""
    by = per_call(doc)
    device = {(r.variant, r.dtype, r.n): r.ms * 1000.0 for r in records if r.ok and r.ms}
    rows = []
    for (vid, dtype, n), dev_us in sorted(device.items(), key=lambda kv: (kv[0][1], kv[0][2])):
        entry = PUBLIC_ENTRY.get(vid)
        call_us = by.get((entry, dtype, n)) if entry else None
        if call_us is None:
            continue
        dev_base = device.get((TORCH_ID, dtype, n))
        call_base = by.get((BASE, dtype, n))
        rows.append([
            dtype, size_label(n), PEER_LABELS.get(vid, vid),
            f"{dev_us:.1f}", _ratio(dev_base, dev_us), f"{call_us:.1f}", _ratio(call_base, call_us),
        ])  # fmt: skip
    return rows


JOINED_HEADER = ["dtype", "n", "variant", "device us", "x torch.sum", "per call us", "x torch.sum"]


def write(
    doc: Document, out_dir: str | Path, records: list[ResultRecord], source: str
) -> list[str]:
    """callable.md, one plot per dtype, and the joined section appended to report.md; returns the
    file names written."""
    out = Path(out_dir)
    (out / "callable.md").write_text(markdown(doc))
    written = ["callable.md"]
    for dtype in _dtypes(doc):
        name = f"callable-{dtype}.png"
        plot(doc, dtype, out / name)
        written.append(name)
    rows = joined_rows(records, doc)
    section = [
        "",
        "## Per call from Python beside device time",
        "",
        f"The fastest pair and the peers as users call them: [callable.md](callable.md) (from "
        f"`{Path(source).name}`). Device time: this run; per call: back-to-back calls from "
        "Python (harness.reduce_sum for the fastest pair).",
        "",
    ]
    if rows:
        section.append(markdown_table(JOINED_HEADER, rows, "lll" + RIGHT * 4))
    else:
        section.append("No (variant, dtype, n) is in both files.\n")
    report = out / "report.md"
    report.write_text(report.read_text() + "\n".join(section))
    return written
