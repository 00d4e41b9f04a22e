"""The named suites (SUITES): each a case list (variant, dtype, n, config), how one case is
measured into rows and how its rows print; one runner (run; run_suite writes and prints a suite's
rows, their summary and failures) for `reduce-ladder run` / `check`, `bench SUITE`,
`fastest-bench`, `host` and `pytest benchmarks/ -k SUITE`."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import cache
from itertools import groupby

from rich.console import Console
from rich.markup import escape

from harness.core import catalogue, device
from harness.core.sizes import size_label
from harness.core.timing import Timing
from harness.report import axis_tables, documents, host_tables, tables
from harness.report.records import NO_GPU, Row, rows_document
from harness.studies import axis_bench, call_entries, host, session


@dataclass(frozen=True)
class Case:
    suite: str
    variant: str  # a catalogue id, or a callable entry's id
    dtype: str
    n: int
    config: str = ""

    @property
    def id(self) -> str:
        """The pytest id: the suite first, so `-k SUITE` selects a suite."""
        parts = (self.suite, self.dtype, size_label(self.n), self.variant, self.config)
        return "-".join(p.replace(" ", "_") for p in parts if p)


def _supports(vid: str, dtype: str, n: int) -> bool:
    v = catalogue.get(vid)
    return dtype in v.dtypes and n <= v.max_n


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    variants: Callable[[str], list[str]]  # dtype -> the default variant (or entry) ids
    dtypes: tuple[str, ...]
    sizes: tuple[int, ...]
    measure: Callable[[Case, int | None, bool], list[Row]]  # (case, reps, timed) -> rows
    supports: Callable[[str, str, int], bool] = _supports  # (variant, dtype, n) -> can it run
    # every id --variants may name (the per-call suite: its entries and any variant id)
    known: Callable[[], list[str]] = lambda: list(catalogue.BY_ID)
    # (the ROWS document, its rows) -> what prints (None: a table per dtype)
    page: Callable[[dict, list[Row]], str] | None = None
    head: Callable[[], dict] = dict  # what its document says beside the rows, once measured


@cache
def common(suite: str) -> dict:
    """device, suite, versions: what every row measured here shares (the device looked up once)."""
    return row_common(suite, device.device_info())


def row_common(suite: str, info: dict) -> dict:
    """device, suite, versions of rows measured on the device `info` describes."""
    keys = ("python", "torch", "triton", "cupy", "cuda_runtime", "driver")
    vs = tuple(sorted((k, str(info[k])) for k in keys if info.get(k)))
    return {"device": info.get("name") or NO_GPU, "suite": suite, "versions": vs}


def _case_measure(reps_for: Callable[[int], int | None] = lambda n: None, **how) -> Callable:
    """The ladder's suites' measure (ladder, sweep, seed004, fastest): session.check_and_time
    (how: its first_pass, max_reps, target_ms), the repetitions given, else reps_for(n);
    timed=False: checked only."""

    def measure(case: Case, reps: int | None, timed: bool) -> list[Row]:
        v, reps = catalogue.get(case.variant), reps or reps_for(case.n)
        return session.check_and_time(v, case.dtype, case.n, common(case.suite), timed=timed,
                                      reps=reps, **how)  # fmt: skip

    return measure


def _fastest_reps(n: int) -> int | None:
    """The fastest bench's repetitions: fewer at the largest n (None: about 100 ms worth)."""
    return 5 if n >= 2**28 else 15 if n >= 2**25 else None


def _fastest_supports(vid: str, dtype: str, n: int) -> bool:
    """The fastest bench times the peers at every dtype its variants take (torch.sum, the copy;
    CuPy has no bfloat16), beyond the float32 / int32 the ladder runs them at."""
    if catalogue.get(vid).backend == "peer":
        return not ("cupy" in vid and dtype == "bfloat16")
    return _supports(vid, dtype, n)


def _ids(vs: Iterable[catalogue.Variant]) -> list[str]:
    return [v.id for v in vs]


def _fastest_head() -> dict:
    """The Triton configurations the fastest pair's autotuner chose."""
    from triton_kernels.fastest import chosen

    return {"triton_configs": chosen()}


FASTEST_PEERS = (catalogue.TORCH_SUM_ID, catalogue.CUB_ID, catalogue.COPY_ID)
SUITES: dict[str, Suite] = {
    s.name: s
    for s in (
        Suite("ladder", "the ladder, verified and timed (`reduce-ladder run`'s defaults)",
              lambda d: _ids(session.ladder_variants(d)), ("float32",), session.DEFAULT_SIZES,
              _case_measure()),
        Suite("sweep", "every non-wrong variant and peer across n (the pytest-benchmark sweep)",
              lambda d: _ids(v for v in catalogue.ladder_order(catalogue.select())
                             if v.family != "001"),
              ("float32", "int32"), tuple(2**k for k in (*range(10, 25, 2), 25, 26, 28)),
              _case_measure()),
        Suite("seed004", "seed 004's table: its kernels, their Triton twins and the peers",
              lambda d: _ids(session.seed_variants(session.ladder_variants(d), "004")),
              ("int32",), (2**24,), _case_measure()),
        Suite("fastest", "the fastest pair beside torch.sum, cupy.sum (CUB) and the copy",
              lambda d: [*call_entries.FASTEST, *FASTEST_PEERS], ("float32", "int32"),
              tuple(2**k for k in range(10, 31)),
              _case_measure(_fastest_reps, first_pass=False, max_reps=200, target_ms=100),
              _fastest_supports,
              lambda: [v.id for v in catalogue.VARIANTS if v.launch or v.backend == "peer"],
              head=_fastest_head),
        Suite("callable", "per call from Python: reduce_sum, out=, the op, beside the peers",
              lambda d: list(call_entries.entries()), call_entries.DEFAULT_DTYPES,
              call_entries.DEFAULT_SIZES,
              lambda c, reps, timed: call_entries.measure(c.variant, c.dtype, c.n,
                                                          common(c.suite), reps),
              call_entries.supports, lambda: [*call_entries.entries(), *catalogue.BY_ID]),
        Suite("axis", "sums along one dim: every axis stage and the fastest pair beside the peers",
              lambda d: axis_bench.subjects(), axis_bench.DTYPES, (),
              lambda c, reps, timed: axis_bench.measure(c.variant, c.dtype, c.config,
                                                        common(c.suite), reps),
              lambda vid, dtype, n: axis_bench.supports(vid, dtype), axis_bench.subjects,
              lambda doc, rows: axis_tables.markdown(rows, doc["device"].get("name", ""))),
        Suite("host", "seed 001 from host memory, end to end: its table (`reduce-ladder host`)",
              lambda d: host.subjects(), ("float32",), host.DEFAULT_SIZES,
              lambda c, reps, timed: host.measure(c.variant, c.dtype, c.n, c.config,
                                                  common(c.suite), reps, timed),
              host.supports, host.subjects, host_tables.markdown, lambda: {"method": host.METHOD}),
    )
}  # fmt: skip


def get(name: str) -> Suite:
    """The suite; KeyError naming the suites otherwise."""
    if name not in SUITES:
        raise KeyError(f"unknown suite {name!r}; suites: {', '.join(SUITES)}")
    return SUITES[name]


def cases(
    name: str,
    *,
    variants: Iterable[str] | None = None,
    dtypes: Iterable[str] | None = None,
    sizes: Iterable[int] | None = None,
    shape_set: str = "reference",
) -> list[Case]:
    """The suite's cases, dtype then n then variant (consecutive cases share an input), each
    variant that can run at that dtype and n; variants / dtypes / sizes replace the defaults."""
    s = get(name)
    named = None if variants is None else list(variants)
    if name == "callable" and named is not None:  # a variant id: its api, api out= and op entries
        by_id = catalogue.BY_ID
        named = [e for i in named for e in (call_entries.variant_entries(i) if i in by_id else [i])]
    dts = list(dtypes or s.dtypes)
    if name == "axis":  # shape, dim pairs instead of sizes; dtype inside, one input per pair
        cfgs = [axis_bench.config(shape, dim) for shape, dim in axis_bench.SHAPE_SETS[shape_set]]
        grid = [(d, cfg, axis_bench.numel(cfg)) for cfg in cfgs for d in dts]
    else:
        grid = [(d, "", n) for d in dts for n in sizes or s.sizes]
    return [
        Case(name, vid, dtype, n, cfg)
        for dtype, cfg, n in grid
        for vid in (named if named is not None else s.variants(dtype))
        if s.supports(vid, dtype, n)
    ]


def run(
    found: list[Case],
    reps: int | None = None,
    progress: Callable[[Case, list[Row]], None] | None = None,
    timed: bool = True,
    rounds: int = 1,
    saved: Callable[[list[Row]], object] | None = None,
) -> list[Row]:
    """Every case measured in order (a failure is a row's check "error" / "wrong", never raised);
    progress(case, its rows) after each, saved(the rows so far) after each input's cases.
    timed=False: checked only. rounds > 1: the cases of one input measured in turn `rounds` times,
    so that a slow spell of the host falls on every case of that input rather than on one; each
    case's rows then merged."""
    out: list[Row] = []
    for _, same_input in groupby(found, key=lambda c: (c.dtype, c.n, c.config)):
        group = list(same_input)
        measured = [[_measure(c, reps, timed) for c in group] for _ in range(rounds)]
        for c, *got in zip(group, *measured, strict=True):
            rs = got[0] if rounds == 1 else merge(got)
            out += rs
            if progress:
                progress(c, rs)
        if saved:
            saved(out)
    return out


def _measure(case: Case, reps: int | None, timed: bool) -> list[Row]:
    """The suite's measure of one case; an exception it raises is the case's one row, check
    "error" with the exception's message (the run goes on with the other cases)."""
    try:
        return get(case.suite).measure(case, reps, timed)
    except Exception as e:
        ident = {**common(case.suite), "variant": case.variant, "config": case.config}
        ident |= {"dtype": case.dtype, "shape": case.n, "metric": "check"}
        return session.untimed(ident, "error", session.failure(e))


def merge(rounds: list[list[Row]]) -> list[Row]:
    """One case's rows of several rounds as one set: a failed round ("wrong" / "error") as it is;
    else per metric timed in every round, the rounds' medians as its samples (median, min, p10,
    p90: the spread between rounds; reps: the rounds; info["rounds"]); else round 0's row."""
    if failed := [rs for rs in rounds if any(r.check in ("wrong", "error") for r in rs)]:
        return failed[0]
    out = []
    for row in rounds[0]:
        same = [r for rs in rounds for r in rs if (r.metric, r.config) == (row.metric, row.config)]
        if len(same) != len(rounds) or any(r.median_ms is None for r in same):
            out.append(row)
        else:
            t = Timing.of([r.median_ms for r in same])
            out.append(replace(row, **t.record(), info={**row.info, "rounds": len(same)}))
    return out


def run_suite(name, found, json_path, options, reps=None, *, counted=None, rounds=1, timed=True,
              progress=None, head=None, page=None, console=None) -> int:  # fmt: skip
    """The cases measured, their ROWS document written (as each input's cases are done; head
    beside the suite's own), the page printed (page(document, rows); default: the suite's own, or
    a table per dtype), the summary and the failures (on console); 1 when a variant failed (counted:
    only these ids count), else 0. progress(case, its rows) after each case (default: its failure,
    on stderr)."""
    s, info, t0 = get(name), device.device_info(), time.time()
    console = console or Console()

    def save(rows: list[Row]) -> dict:
        doc = rows_document(rows, suite=name, device=info, options=options,
                            wall_s=time.time() - t0, **s.head(), **(head or {}))  # fmt: skip
        if json_path:
            documents.write_document(json_path, doc)
        return doc

    rows = run(found, reps, progress=progress or _progress, timed=timed, rounds=rounds, saved=save)
    doc = save(rows)
    (page or _page)(doc, rows)
    if "triton_configs" in doc:
        print(f"triton configs: {doc['triton_configs']}")
    print(f"summary: {session.summarize(rows)}")
    print_failures(rows, console)
    bad = [r for r in session.failed(rows) if counted is None or r.variant in counted]
    return 1 if bad else 0


def _page(doc: dict, rows: list[Row]) -> None:
    """The suite's own page, else a table per dtype; the per-call suite's overheads."""
    name = doc["suite"]
    if page := get(name).page:  # the suite's own page (axis: a pivot per dtype, shape and dim)
        print(page(doc, rows))
    for dtype in dict.fromkeys(r.dtype for r in rows) if not page else ():
        print(f"\n{name}, {dtype}: microseconds (x torch.sum = its time / this time)")
        print(tables.suite_table(rows, dtype))
    if name == "callable" and (over := call_entries.overheads(rows)):  # `launch ...` entries ran
        print("\n".join(["\nreduce_sum over its cached launch:", *over]))


def print_failures(rows: list[Row], console: Console) -> None:
    """One line per case: wrong demonstrations with their verdict (a racy kernel can happen to be
    right); every other case that is not ok, with its message; then the cases skipped (a peer
    whose optional library is not installed, a shape a peer or stage does not take): one line per
    reason, with the ids it skips -- not an error, and not one line per row."""
    wrong_demo = {v.id for v in catalogue.VARIANTS if v.wrong}
    skipped: dict[str, dict[str, None]] = {}  # the ids in order, each once, by reason
    for r in session.case_rows(rows):
        label = " ".join(part for part in (r.variant, r.config, r.dtype) if part) + f" n={r.n}"
        message = r.info.get("message", "")
        if r.check == session.SKIPPED:
            why = message.removeprefix(f"{session.UNAVAILABLE}: ").removeprefix(f"{r.variant}: ")
            skipped.setdefault(why, {})[r.variant] = None
        elif r.variant in wrong_demo:
            verdict = "WRONG in this run (the race showed)" if r.check != "ok" else (
                "right in this run (the race did not show; the code is still racy)")  # fmt: skip
            console.print(f"  wrong demonstration {label}: {verdict}")
        elif r.check in ("wrong", "error"):
            console.print(f"  [red]{escape(label)}: {r.check}: {escape(message)}[/]")
    for why, ids in skipped.items():
        console.print(f"  skipped {', '.join(ids)}: {escape(why)}", highlight=False)


def _progress(case: Case, rows: list) -> None:
    if bad := session.failed(rows):
        print(f"  {case.id}: {bad[0].check} {bad[0].info.get('message', '')}", file=sys.stderr)
