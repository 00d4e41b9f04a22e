"""The tables `reduce-ladder run` and `check` print beside the ladder: the fastest-per-backend
line, the correctness table, a seed's own table (`--seed 004`); any suite's rows as a table per
dtype (`bench`, `fastest-bench`); and the per-call figures of `report --callable` (callable.md,
joined with the report's device times). The builders take rows (the ladder's: joined per case,
records.results)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from harness.core import catalogue, dtypes
from harness.core.mappings import one_pass
from harness.core.sizes import size_label
from harness.report import ladder_table as lt
from harness.report import markdown as md
from harness.report.documents import Document, ReportError, load_document
from harness.report.documents import rows as rows_of
from harness.report.records import Row, results


def best_line(rows: Iterable[Row], n: int, dtype: str = "float32") -> str | None:
    """'fastest cuda: ... / fastest triton: ...' with their ratios to the peers."""
    at = lt.results_at(results(rows), dtype, n)
    parts = []
    for backend in ("cuda", "triton"):
        if ok := [r for r in at.values() if r.v.backend == backend and r.ok and r.ms is not None]:
            b = min(ok, key=lambda r: r.ms)
            ratios = lt.peer_ratios(b, at).text()
            parts.append(f"fastest {backend}: {b.variant} {b.gbps or 0:.0f} GB/s ({ratios})")
    return "; ".join(parts) or None


CHECK_COLUMNS = (  # fits 100 columns
    md.Column("variant", lambda r: r.variant),
    md.Column("dtype", lambda r: r.dtype),
    md.Column("n", lambda r: f"{r.n:,}"),
    md.Column("check", lt.check_text),
    md.Column("|err|", lambda r: md.num(r.sums.get("abs_err"), ".3g")),
    md.Column("tolerance", lambda r: md.num(r.sums.get("tolerance"), ".3g")),
)
CHECK_WIDE_COLUMNS = (
    *CHECK_COLUMNS[:4],
    md.Column("result", lambda r: str(r.sums["value"]) if "value" in r.sums else "-"),
    md.Column("golden", lambda r: str(r.sums["golden"]) if "golden" in r.sums else "-"),
    *CHECK_COLUMNS[4:],
)


def rich_checks(rows: Iterable[Row], title: str, *, wide: bool = False):
    """Each sum against its golden: compact (the error and its bound), or wide (the values)."""
    columns = CHECK_WIDE_COLUMNS if wide else CHECK_COLUMNS
    bad = lambda r: "red" if not r.ok and not r.v.wrong else None  # noqa: E731
    return md.terminal_table(title, columns, results(rows), bad)


# ---------------------------------------------------------------------------------------------
# A seed's own table: seed 004's effective-bandwidth table, regenerated (`--seed 004`).

# Seed 004's own nsys times (ms) for 16M ints, 256 threads, on its (unnamed) GPU: printed beside
# ours for reference only. The seed gives no figure for its Dyn kernels ("no difference seen").
SEED_FIGURES_MS = {"004:reduceGmem": 0.248, "004:reduceSmem": 0.201,
                   "004:reduceGmemUnroll": 0.120, "004:reduceSmemUnroll": 0.097}  # fmt: skip


def seed_rows(rows: Iterable[Row], n: int, dtype: str, seed: str = "004") -> list[dict]:
    """The seed's table: one row per CUDA kernel of the seed (stage order) with its Triton twin,
    then the peers. Like the seed it times one kernel (the first pass, n elements in, one partial
    per block out); effective bandwidth = (bytes read + bytes written) / time. Peers are one
    library call (n in, 1 out)."""
    at = lt.results_at(results(rows), dtype, n)
    prefix = f"{seed}:"
    size = dtypes.get(dtype).itemsize
    cuda = [r.v for r in at.values()
            if r.v.backend == "cuda" and any(s.startswith(prefix) for s in r.v.seeds)]  # fmt: skip

    def row(kernel, vid, r, ms, written, twin=None, t=None, tms=None, **more) -> dict:
        nbytes = (n + written) * size
        return {"kernel": kernel, "variant": vid, "status": r.status, "cuda_ms": ms,
                "twin": twin, "twin_status": t.status if t else None, "twin_ms": tms,
                "check": lt.pair_check(r, t), "read": n, "written": written, "bytes": nbytes,
                "cuda_gbps": nbytes / ms / 1e6 if ms else None,
                "twin_gbps": nbytes / tms / 1e6 if tms else None,
                "seed_ms": None, "in_place": False, **more}  # fmt: skip

    out: list[dict] = []
    for v in catalogue.ladder_order(cuda):
        r, t = at[v.id], at.get(v.twin or "")
        label = next(s for s in v.seeds if s.startswith(prefix))
        written = r.info.get("blocks_first_pass") or one_pass(v.launch, n).blocks
        # the first kernel alone (an in-place variant's scratch refill is untimed setup)
        out.append(row(label.removeprefix(prefix), v.id, r, r.median("first_pass"), written,
                       v.twin, t, t and t.median("first_pass"),
                       seed_ms=SEED_FIGURES_MS.get(label),
                       in_place=bool(v.launch and v.launch.in_place)))  # fmt: skip
    for i, r in at.items():
        if r.v.backend == "peer":  # the copy writes all n; a sum writes one value
            written = n if i == lt.COPY_ID else 1
            out.append(row(i.removeprefix("peer/"), i, r, r.ms or r.median("first_pass"), written))
    return out


SEED_COLUMNS = (
    md.Column("kernel", lambda r: r["kernel"] + (" (in place)" if r["in_place"] else "")),
    md.numbers("CUDA µs", lambda r: md.us(r["cuda_ms"])),
    md.Column("Triton twin", lambda r: (r["twin"] or "-").removeprefix("triton/")),
    md.numbers("twin µs", lambda r: md.us(r["twin_ms"])),
    md.numbers("elements read", lambda r: str(r["read"])),
    md.numbers("elements written", lambda r: str(r["written"])),
    md.numbers("total bytes", lambda r: str(r["bytes"])),
    md.numbers("CUDA GB/s", lambda r: md.num(r["cuda_gbps"], ".1f")),
    md.numbers("twin GB/s", lambda r: md.num(r["twin_gbps"], ".1f")),
    md.numbers("seed's ms (its GPU)", lambda r: md.num(r["seed_ms"], ".3f")),
    md.Column("check", lambda r: r["check"]),
)
SEED_NOTE = (
    "One kernel (the first pass) as the seed times it: n elements read, one partial per block "
    "written; effective bandwidth = (bytes read + bytes written) / time. In-place kernels are "
    "timed without the harness's refresh of their scratch copy. Peers: one library call, n read, "
    "1 written (the copy: n written). The seed's column is its own GPU's nsys time, for "
    "reference only."
)


def markdown_seed(rows: Iterable[dict]) -> str:
    return md.column_table(SEED_COLUMNS, rows, align=False) + "\n" + SEED_NOTE + "\n"


def rich_seed(rows: Iterable[dict], title: str):
    bad = lambda r: "red" if r["status"] not in ("ok", "skipped") else None  # noqa: E731
    return md.terminal_table(title, SEED_COLUMNS, rows, bad, caption=SEED_NOTE)


# ---------------------------------------------------------------------------------------------
# Any suite's rows (harness.studies.suites) as one table per dtype. The metric it shows: device
# time where the suite measured it, else per call.
TABLE_METRICS = ("total", "call")
BASELINES = ("peer/torch.sum", "torch.sum")


def suite_table(rows: Iterable[Row], dtype: str) -> str:
    """Markdown: each variant's microseconds per n (device time, or per call for the per-call
    suite) and its ratio to torch.sum (t(torch.sum) / t: >= 1.00x at least as fast); a failed
    check shows its status instead. Sizes down and variants across, or the other way round when
    there are more variants than sizes, so that the table stays narrow."""
    mine = [r for r in rows if r.dtype == dtype]
    metric = next((m for m in TABLE_METRICS if any(r.metric == m for r in mine)), "check")
    shown = [r for r in mine if r.metric in (metric, "check")]
    base = {r.n: r.median_ms for b in BASELINES[::-1] for r in shown  # the first one wins
            if r.variant == b and r.median_ms}  # fmt: skip

    def cell(r: Row) -> str:
        if r.check in ("wrong", "error") or r.median_ms is None:
            return r.check or "-"
        b = r.info.get("base_ms") or base.get(r.n)  # torch.sum of the row's own run, if known
        ratio = f" ({b / r.median_ms:.2f}x)" if b else ""
        return f"{r.median_ms * 1e3:.2f}{ratio}"

    ns, entries = sorted({r.n for r in shown}), list(dict.fromkeys(r.variant for r in mine))
    variant, n = (lambda r: r.variant), (lambda r: r.n)
    if len(entries) > len(ns):  # more entries than sizes (the per-call suite's 100+): one per line
        return md.pivot("entry", shown, variant, n, cell, entries, ns, head=size_label, align="lr")
    return md.pivot("n", shown, n, variant, cell, ns, entries, label=size_label, align="rr")


# ---------------------------------------------------------------------------------------------
# The per-call figures (`reduce-ladder report ... --callable PATH`: `bench callable`'s rows, metric
# "call"): DIR/callable.md, and in report.md both figures side by side for the fastest pair and
# the peers (the run's device time, the time per call from Python), joined on (variant, dtype, n).

BASE = "torch.sum"
METHOD = ("back-to-back calls in a Python loop, CUDA events around the loop, median per call; "
          "views rotated to cover 2x L2 (harness.core.timing.loop_ms)")  # fmt: skip
# The catalogue's variants and peers -> the per-call entry a user calls them through.
PUBLIC_ENTRY = {"cuda/fastest": "api cuda/fastest", "triton/fastest": "api triton/fastest",
                lt.CUB_ID: "cupy.sum-cub", lt.TORCH_ID: BASE}  # fmt: skip


def _calls(doc: Document) -> list[Row]:
    return [r for r in rows_of(doc) if r.metric == "call"]


def load_callable(*paths: str | Path) -> Document:
    """Per-call documents as one: the first, then each later one's entries the first lacks (a
    REDUCE_LADDER_NATIVE=1 run beside the default one), each row tagged with its file (its run:
    a target compares within one) and that run's torch.sum; ReportError for a file with none."""
    docs, merged = [load_document(path, ("rows", "pytest-benchmark")) for path in paths], []
    for k, (path, doc) in enumerate(zip(paths, docs, strict=True)):
        if not _calls(doc):
            raise ReportError(f"{path}: no per-call rows (`reduce-ladder bench callable --json`)")
        seen = {r.variant for r in merged}  # an entry of an earlier file keeps its time
        base = {(r.dtype, r.n): r.median_ms for r in _calls(doc) if r.variant == BASE}
        merged += [replace(r, info={**r.info, "run": k, "base_ms": base.get((r.dtype, r.n))})
                   for r in _calls(doc) if r.variant not in seen]  # fmt: skip
    return replace(docs[0], rows=merged, raw={**docs[0].raw, "runs": list(map(per_call, docs))})


def per_call(doc: Document) -> dict[tuple[str, str, int], float]:
    """(entry, dtype, n) -> microseconds per call."""
    return {(r.variant, r.dtype, r.n): r.median_ms * 1e3 for r in _calls(doc)}


def device_us(rows: list[Row]) -> dict[tuple[str, str, int], float]:
    """(variant, dtype, n) -> microseconds of device time, the passing cases' of the ladder's
    suites."""
    return {(r.variant, r.dtype, r.n): r.ms * 1e3 for r in results(rows) if r.ok and r.ms}


# The per-call targets: the fastest pair's and the reproducible pair's calls against torch.sum's,
# at every n measured; every other variant's call within OTHER_SLACK_US of its device time plus
# the call overhead of its backend's fastest (per call minus device time, at the same dtype and n).
# An in-place variant's call first copies x (its scratch: the API never writes the caller's
# data), which its timed kernels leave out: the copy's device time in the run is added to it.
AT_LEAST = {"fastest": 1.00, "reproducible": 0.90}
OTHER_SLACK_US = 2.0


def _entry(name: str) -> tuple[str, str, bool] | None:
    """'api cuda/fastest native out=' -> ('cuda/fastest', native, is the plain api call)."""
    kind, _, rest = name.partition(" ")
    if kind not in ("api", "op") or "/" not in rest:
        return None
    vid, _, mode = rest.partition(" ")
    return vid, "native" in mode, kind == "api" and "out=" not in mode


def callable_targets(doc: Document, rows: list[Row]) -> list[str]:
    """The targets' verdicts on a per-call document (the device times from a run's rows): met,
    or missed on how many, with each entry's worst case."""
    calls, device, out = _calls(doc), device_us(rows), []
    for family, least in AT_LEAST.items():
        for native in (False, True):
            got = [(r.variant, r.dtype, r.n, r.info["base_ms"] / r.median_ms)  # its run's
                   for r in calls if (p := _entry(r.variant)) and p[0].endswith("/" + family)
                   and p[1] == native and r.info.get("base_ms")]  # fmt: skip
            if got:
                what = f"the {family} pair{' (native launcher)' if native else ''}"
                out.append(_per_call_verdict(f"{what} >= {least:.2f}x torch.sum", got, least))
    over = {False: [], True: []}  # native: (entry, dtype, n, call - device - fastest overhead)
    unmatched = 0
    for r in calls:
        e, d, n, p = r.variant, r.dtype, r.n, _entry(r.variant)
        if not p or not p[2] or p[0].split("/")[1] in AT_LEAST:
            continue
        fast = f"{p[0].split('/')[0]}/fastest"  # the same launcher's: native beside native
        run = doc.raw["runs"][r.info["run"]]  # the fastest's overhead: its own run's
        ft = run.get((f"api {fast}{' native' if p[1] else ''}", d, n))
        fd, dev = device.get((fast, d, n)), device.get((p[0], d, n))
        copy = device.get((catalogue.COPY_ID, d, n))  # (a run without it: held to less)
        if dev is not None and copy is not None and catalogue.get(p[0]).launch.in_place:
            dev += copy
        unmatched += ft is None and None not in (fd, dev)  # its run lacks that fastest entry
        if None not in (ft, fd, dev):
            over[p[1]].append((e, d, n, r.median_ms * 1e3 - dev - (ft - fd)))
    for native, rows in over.items():
        if not rows:
            continue
        bad, (e, d, n, x) = sum(o[3] > OTHER_SLACK_US for o in rows), max(rows, key=lambda o: o[3])
        name = (f"every other variant's call{' (native launcher)' if native else ''} within "
                f"{OTHER_SLACK_US:.0f} us of its device time plus its backend's fastest call "
                "overhead")  # fmt: skip
        out.append(md.verdict(name, bad, len(rows)) + f"; the most over: {e} {d} {size_label(n)}, "
                   f"{x:+.1f} us")  # fmt: skip
    if unmatched:
        out.append(f"- not held to that target: {unmatched} calls whose run has no call of their "
                   "backend's fastest by the same launcher")  # fmt: skip
    return out or ["- no entry of the targets measured"]


def _per_call_verdict(name: str, got: list[tuple[str, str, int, float]], least: float) -> str:
    misses, per = [g for g in got if not g[3] >= least], {}
    for e, d, n, x in misses:
        per.setdefault(e, []).append((x, d, n))
    worst = "; ".join(f"{e} {len(v)}, worst {min(v)[0]:.2f}x ({min(v)[1]} {size_label(min(v)[2])})"
                      for e, v in per.items())  # fmt: skip
    return md.verdict(name, len(misses), len(got), f" (entry: misses, worst): {worst}")


OVERHEAD_MAX_N = 2**18  # up to here a call waits on the host, not on the GPU (the tables below)


def overhead_section(doc: Document, rows: list[Row]) -> list[str]:
    """What a call costs beyond its kernels: per family and backend (down) and entry (across), the
    median over the cells up to OVERHEAD_MAX_N of per call minus the variant's device time."""
    device = device_us(rows)
    got: dict[tuple[str, str], list[float]] = {}
    for (e, d, n), t in per_call(doc).items():
        if (p := _entry(e)) and n <= OVERHEAD_MAX_N and (dev := device.get((p[0], d, n))):
            v, entry = catalogue.get(p[0]), e.split(" ", 1)[0] + e.split(p[0], 1)[1]
            got.setdefault((f"{v.family} ({v.backend})", entry), []).append(t - dev)
    if not got:
        return []
    cell = lambda kv: f"{statistics.median(kv[1]):.1f} ({len(kv[1])})"  # noqa: E731
    return ["## Per call over device time, per family", "",
            "What a call costs beyond its kernels (Python, the checks, the launches, the result): "
            "per call minus the variant's device time in the report's run, microseconds, the "
            f"median over the cells up to {size_label(OVERHEAD_MAX_N)} (how many), where a call "
            "waits on the host. A family the run has no device time for is not listed.", "",
            md.pivot("family", got.items(), lambda kv: kv[0][0], lambda kv: kv[0][1], cell,
                     align="lr")]  # fmt: skip


def callable_markdown(doc: Document, rows: list[Row] | None = None) -> str:
    """callable.md: the targets and, with a run's rows, what a call costs beyond their device
    times and the fastest pair's and the peers' calls beside them; then per dtype an entry per
    line, n across: 'us (ratio to torch.sum)'."""
    calls, rows = _calls(doc), rows or []
    out = [f"# Per call from Python: {doc.device}", "", doc.raw.get("method", METHOD), "",
           "Each cell: microseconds per call, and torch.sum's time over it (>= 1.00x: at least as "
           "fast as torch.sum).", *_spread(calls), "", "## Targets", "",
           *callable_targets(doc, rows), "", *overhead_section(doc, rows),
           *beside_device_time(rows, doc)]  # fmt: skip
    for dtype in dict.fromkeys(r.dtype for r in calls):
        out += [f"## {dtype}", "", suite_table(calls, dtype)]
    return "\n".join(out)


def _spread(calls: list[Row]) -> list[str]:
    """Where rows are medians of rounds (bench --rounds): how far apart the rounds were."""
    rel = [((r.p90_ms - r.p10_ms) / r.median_ms, r) for r in calls if r.info.get("rounds")]
    rel.sort(key=lambda pair: pair[0])  # not by the rows: a tie would compare them
    if not rel:
        return []
    (mid, _), (top, r) = rel[len(rel) // 2], rel[-1]
    return ["", f"{len(rel)} cells are the median of {r.info['rounds']} rounds measured in turn; "
            f"their rounds' p10..p90 spread: {mid:.0%} of the median in the middle cell, at most "
            f"{top:.0%} ({r.variant} {r.dtype} {size_label(r.n)})."]  # fmt: skip


def beside_device_time(rows: list[Row], doc: Document) -> list[str]:
    """Per (variant, dtype, n) in both files, the fastest pair and the peers: device time (us) and
    its ratio to torch.sum's, per call (us) and its ratio to torch.sum's; nothing where none."""
    by, device = per_call(doc), device_us(rows)
    ratio = lambda base, t: f"{base / t:.2f}x" if base and t else "-"  # noqa: E731
    table = [[dtype, size_label(n), lt.PEER_LABELS.get(vid, vid), f"{dev_us:.1f}",
              ratio(device.get((lt.TORCH_ID, dtype, n)), dev_us), f"{call_us:.1f}",
              ratio(by.get((BASE, dtype, n)), call_us)]
             for (vid, dtype, n), dev_us in sorted(device.items(), key=lambda kv: kv[0][1:])
             if (call_us := by.get((PUBLIC_ENTRY.get(vid), dtype, n))) is not None]  # fmt: skip
    if not table:
        return []
    header = ["dtype", "n", "variant", "device us", "x torch.sum", "per call us", "x torch.sum"]
    return ["## Per call beside device time", "",
            "The fastest pair and the peers as users call them. Device time: the report's run; "
            "per call: back-to-back calls from Python (harness.reduce_sum for the fastest pair).",
            "", md.markdown_table(header, table, "lll" + md.RIGHT * 4)]  # fmt: skip


def callable_page(doc: Document, out_dir: Path, run: Document) -> str:
    """callable.md (the report's page, harness.report.run_report.PAGES), beside the report's run."""
    return callable_markdown(doc, run.rows)
