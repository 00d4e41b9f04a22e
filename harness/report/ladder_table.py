"""The ladder table, built once (ladder_rows) and shown three ways: Markdown (report.md,
docs/ladder.md, its columns explained there) and on the terminal compact (fits 100 columns) or
wide, what each stage changes in a legend under it. Every ratio the tables print is computed here:
against the peers of the same run, dtype and n, and along the ladder (step x = t(previous stage) /
t, cum. x = t(first stage of the family) / t, over the timed CUDA rows: a seed's own family starts
its own; wrong demonstrations and failed checks neither get nor give a step).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

from harness.core import catalogue as cat
from harness.core.catalogue import COPY_ID, CUB_ID
from harness.core.catalogue import TORCH_SUM_ID as TORCH_ID
from harness.core.sizes import size_label
from harness.report import markdown as md
from harness.report.markdown import Column, num, numbers, short_id, us
from harness.report.records import Result, Row, results

# The peers' labels in the tables' and plots' order: CUB's ways in, PyTorch's, the copy.
PEER_LABELS = {
    CUB_ID: "cupy.sum (CUB)", cat.NOCUB_ID: "cupy.sum (no CUB)",
    cat.CCCL_ID: "cuda.compute (run to run)", cat.CCCL_NONDET_ID: "cuda.compute (not guaranteed)",
    TORCH_ID: "torch.sum", cat.COMPILE_ID: "torch.compile (static)",
    cat.COMPILE_DYNAMIC_ID: "torch.compile (dynamic)", cat.COMPILE_COOP_ID: "torch.compile (coop)",
    COPY_ID: "copy bandwidth",
}  # fmt: skip
PEER_ORDER = tuple(PEER_LABELS)


@dataclass(frozen=True)
class PeerRatios:
    x_cub: float | None = None
    x_torch: float | None = None
    pct_copy: float | None = None

    def text(self) -> str:
        """'0.50× CUB, 1.00× torch.sum, 45% of copy' (the ones measured), or '-'."""
        shown = ((self.x_cub, "{:.2f}× CUB"), (self.x_torch, "{:.2f}× torch.sum"),
                 (self.pct_copy, "{:.0f}% of copy"))  # fmt: skip
        return ", ".join(form.format(x) for x, form in shown if x is not None) or "-"


def results_at(found: Iterable[Result], dtype: str, n: int) -> dict[str, Result]:
    return {r.variant: r for r in found if r.dtype == dtype and r.n == n}


def peer_ratios(r: Result | None, at: dict[str, Result]) -> PeerRatios:
    """r against the passing, timed peers in `at` (results_at of r's dtype and n), if r passed."""
    if r is None or not r.ok or not r.ms:
        return PeerRatios()
    cub, torch_sum, copy = (p if (p := at.get(v)) and p.ok and p.ms else None
                            for v in (CUB_ID, TORCH_ID, COPY_ID))  # fmt: skip
    gbps, copy_gbps = r.gbps, copy.gbps if copy else None
    return PeerRatios(
        x_cub=cub.ms / r.ms if cub else None,
        x_torch=torch_sum.ms / r.ms if torch_sum else None,
        pct_copy=100 * gbps / copy_gbps if gbps and copy_gbps else None,
    )


@dataclass(frozen=True)
class LadderRow:
    kind: str  # "stage" or "peer"
    stage: str
    main: Result | None  # the CUDA case (a stage row) or the peer; None: Triton alone
    twin: Result | None  # the Triton case beside it
    main_ratios: PeerRatios
    twin_ratios: PeerRatios
    step_x: float | None  # t(previous stage) / t
    cum_x: float | None  # t(first stage of the family) / t

    @property
    def name(self) -> str:
        """The row's id: a CUDA id without "cuda/", a peer's in full."""
        if self.main is None:
            return "-"
        return self.main.variant if self.main.v.backend == "peer" else short_id(self.main.variant)

    @property
    def short_id(self) -> str:
        """The compact table's id: name, or a lone Triton variant's full id."""
        return self.name if self.main else self.twin.variant if self.twin else "-"

    @property
    def failed(self) -> bool:
        """A failed check that is not a wrong demonstration's point (a skipped peer is neither)."""
        return any(r is not None and not r.ok and not r.v.wrong and r.status != "skipped"
                   for r in (self.main, self.twin))  # fmt: skip


def variant_order(found: Iterable[Result]) -> list[str]:
    """CUDA stages by stage, then Triton, then anything else, then the peers (fixed order)."""
    first: dict[str, cat.Variant] = {}
    for r in found:
        first.setdefault(r.variant, r.v)
    rank = {"cuda": 0, "triton": 1}
    others = [v for v in first if first[v].backend != "peer"]
    others.sort(key=lambda v: (rank.get(first[v].backend, 2), cat.stage_key(first[v].stage)))
    peers = [v for v in first if first[v].backend == "peer" and v not in PEER_ORDER]
    return others + [p for p in PEER_ORDER if p in first] + peers


def ladder_rows(found: Iterable[Result], dtype: str, n: int) -> list[LadderRow]:
    at = results_at(found, dtype, n)
    rows, shown, family, first_ms, prev_ms = [], set(), None, None, None
    for vid in variant_order(at.values()):  # CUDA first: every twin is placed before its turn
        r = at[vid]
        if r.v.backend == "cuda":
            # its tile twin, or (not tile twins, like the fastest pair) the catalogue's counterpart
            kind, main, twin = "stage", r, at.get(r.v.twin or r.v.counterpart or "")
            shown |= {twin.variant} if twin is not None else set()
        elif r.v.backend == "peer":
            kind, main, twin = "peer", r, None
        elif vid in shown:
            continue
        else:  # a Triton variant no CUDA row twins: the Triton columns only
            kind, main, twin = "stage", None, r
        # the steps, over the CUDA cases of the stage rows
        if kind == "stage" and main is not None and main.v.family != family:
            family, first_ms, prev_ms = main.v.family, None, None  # a seed's own ladder: its own
        ms = main.ms if kind == "stage" and main is not None else None
        usable = bool(ms) and main.ok and not main.v.wrong  # a wrong sum's time: no reference
        steps = (prev_ms / ms if usable and prev_ms else None,
                 first_ms / ms if usable and first_ms else None)  # fmt: skip
        first_ms, prev_ms = (first_ms or ms, ms) if usable else (first_ms, prev_ms)
        ratios = peer_ratios(main, at)
        if main is not None and main.variant == COPY_ID:  # the copy is the yardstick, not a sum
            ratios = PeerRatios(pct_copy=ratios.pct_copy)
        rows.append(LadderRow(kind, r.v.stage, main, twin, ratios, peer_ratios(twin, at), *steps))
    return rows


def check_text(r: Result | None) -> str:
    if r is None:
        return "-"
    if r.v.wrong:
        return "race showed (wrong)" if not r.ok else "right this run"
    return {"ok": "ok", "wrong": "WRONG", "error": "ERROR"}.get(r.status, r.status)


def pair_check(main: Result | None, twin: Result | None) -> str:
    """The main case's check, and its twin's where that failed (the twin's alone: no main)."""
    if main is None:
        return check_text(twin)
    return check_text(main) + (f" / twin {check_text(twin)}" if twin and not twin.ok else "")


def _side(rec: str, ratios: str) -> list[Column]:
    """The µs, GB/s and ratio columns of the row's case `rec` (main or twin)."""
    r, x = attrgetter(rec), attrgetter(ratios)
    return [
        numbers("µs", lambda e: us(r(e).ms if r(e) else None)),
        numbers("GB/s", lambda e: num(r(e).gbps if r(e) else None, ".0f")),
        numbers("% copy", lambda e: num(x(e).pct_copy, ".0f")),
        numbers("× CUB", lambda e: num(x(e).x_cub, ".2f")),
        numbers("× torch.sum", lambda e: num(x(e).x_torch, ".2f")),
    ]


_CUDA, _TWIN = _side("main", "main_ratios"), _side("twin", "twin_ratios")[:4]  # no × torch.sum
_STAGE, _VARIANT = Column("stage", lambda e: e.stage), Column("variant", lambda e: e.name)
_TWIN_NAME = Column("Triton twin", lambda e: short_id(e.twin.variant) if e.twin else "-")
_CHECK = Column("check", lambda e: pair_check(e.main, e.twin))

# report.md and docs/ladder.md (Markdown, so width is no concern)
MARKDOWN_COLUMNS = (_STAGE, _VARIANT, *_CUDA, _TWIN_NAME, *_TWIN, _CHECK)
# the terminal by default: fits 100 columns; the twins' names are in the legend
COMPACT_COLUMNS = (Column("id", lambda e: e.short_id), *[c for c in _CUDA if c.header != "% copy"],
                   numbers("Triton µs", _TWIN[0].cell), _CHECK)  # fmt: skip
# the terminal with --wide: every column
WIDE_COLUMNS = (
    _STAGE, _VARIANT,
    numbers("1st pass µs", lambda e: us(e.main.median("first_pass") if e.main else None)),
    *_CUDA, numbers("step ×", lambda e: num(e.step_x, ".2f")),
    numbers("cum. ×", lambda e: num(e.cum_x, ".1f")), _TWIN_NAME, *_TWIN, _CHECK,
)  # fmt: skip


def markdown_ladder(rows: Iterable[Row], dtype: str, n: int) -> str:
    """The ladder at (dtype, n) as report.md and docs/ladder.md show it."""
    return md.column_table(MARKDOWN_COLUMNS, ladder_rows(results(rows), dtype, n), align=False)


COLUMN_KEY = (
    "µs: device time per call (median, L2 flushed); GB/s: bytes read + written / time; "
    "× CUB, × torch.sum: t(peer) / t (above 1: faster than the peer); % copy: GB/s as a share "
    "of the device-to-device copy's"
)


def legend(rows: Iterable[LadderRow], *, wide: bool) -> list[str]:
    """What each row's variant changes (the catalogue's words; compact: its twin's name), then
    what the columns mean."""
    lines = []
    for e in rows:
        r = e.main or e.twin
        v = cat.BY_ID.get(r.variant) if r else None
        if v is None or (e.kind == "peer" and not wide):
            continue
        twin = f" [twin {short_id(e.twin.variant)}]" if e.twin and e.main and not wide else ""
        lines.append(f"{e.short_id}: {v.change}{twin}")
    steps = "; step ×, cum. ×: t(previous / first stage) / t" if wide else ""
    return [*lines, COLUMN_KEY + steps]


def ladder_console_table(
    rows: Iterable[Row], n: int, dtype: str, *, wide: bool = False, title: str | None = None,
    with_legend: bool = True,
):  # fmt: skip
    """What `reduce-ladder run` and `report` print for one (dtype, n): the table, compact or wide,
    the peers in a section of their own, and its legend (with_legend=False: the table alone)."""
    found = results(rows)
    ladder = ladder_rows(found, dtype, n)
    if title is None:
        dev = next((r.device for r in found if r.device), None)
        title = f"{dev + ', ' if dev else ''}{dtype}, n = {n:,} ({size_label(n)})"
    style = lambda e: "red" if e.failed else ("dim" if e.kind == "peer" else None)  # noqa: E731
    peers = next((k for k, e in enumerate(ladder) if e.kind == "peer"), None)
    table = md.terminal_table(title, WIDE_COLUMNS if wide else COMPACT_COLUMNS, ladder, style,
                              section=peers)  # fmt: skip
    return md.with_legend(table, legend(ladder, wide=wide) if with_legend else [])
