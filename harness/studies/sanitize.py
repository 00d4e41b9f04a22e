"""Every default kernel under compute-sanitizer's four tools (docs/correctness.md), and the reader
of the tools' output: lines prefixed "=========", a problem ("record") a header line ("Invalid
__global__ read of size 4 bytes", "Error: Race reported between Write access at k+0x3f0 ...") then
an indented "at <kernel>+0x..." (racecheck: the kernel in the header), summaries ("ERROR SUMMARY:
3 errors", "RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)")."""

from __future__ import annotations

import re
import tempfile
from collections import defaultdict
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from harness.core import catalogue, dtypes, records_axis, records_beyond
from harness.core.catalogue import Variant
from harness.report import records
from harness.report.profile_tables import TOOLS
from harness.studies.profile_driver import Job, axis_cases, lookup, start

SCHEMA = records.SANITIZE_SCHEMA
DEFAULT_SIZES = (1000, 2**12 + 3)  # a partial last tile at every block size and tile count
RUN_TIMEOUT_S = 420  # one tool over every default kernel
DEMO_TIMEOUT_S = 120  # a seed bug alone (a broken barrier may hang: the timeout is a finding)
ENV = {"PYTORCH_NO_CUDA_MEMORY_CACHING": "1"}

# racecheck's hazards by design, reported, not failed (docs/correctness.md): the volatile last warp
# in SHARED memory; on GLOBAL memory racecheck cannot see them (the report says so).
VOLATILE_SHARED = frozenset(
    ["cuda/v5-volatile", "cuda/v5-volatile-split", "cuda/v6-unroll-split-256"]
    + [f"cuda/v6-unroll-{b}" for b in (128, 256, 512, 1024)]
    + ["cuda/v7-fixed-chunked", "cuda/v7-fixed-strided"]
    + [f"cuda/004-smem{s}" for s in ("", "-unroll4", "-dyn", "-unroll4-dyn")]
)
VOLATILE_GLOBAL = frozenset({"cuda/004-gmem", "cuda/004-gmem-unroll4"})
VOLATILE = {"shared": VOLATILE_SHARED, "global": VOLATILE_GLOBAL}

# Each seed bug, the tool meant to flag it, its sizes: 000 on whole tiles (no bounds check), 004
# on a partial last tile. On sm_90 no tool sees 000's (docs/correctness.md, test_gpu_sanitize.py).
DEMOS = {"cuda/demo-000-v1-sync-in-if": ("synccheck", (2**12,)),
         "cuda/demo-004-gmem-early-return": ("memcheck", (2**12 + 3,))}  # fmt: skip
DEMO_TOOL = {vid: tool for vid, (tool, _) in DEMOS.items()}
UNSEEN_ON_HOPPER = frozenset({"cuda/demo-000-v1-sync-in-if"})

PREFIX = "========="
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*([\d,]+)\s+errors?")
_RACE_SUMMARY = re.compile(
    r"RACECHECK SUMMARY:\s*([\d,]+)\s+hazards?\s+displayed\s*"
    r"\(\s*([\d,]+)\s+errors?,\s*([\d,]+)\s+warnings?\s*\)"
)
# A record's site: a line that starts with "at" (racecheck's header: "... access at"), then the
# kernel, before its offset or its source line
_AT = re.compile(r"^(?:\s+|.*\baccess\s+)at\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(.+?)"
                 r"(?:\+0x[0-9a-fA-F]+|\s+in\s+\S+:\d+|$)")  # fmt: skip
_HAZARDS = re.compile(r"\[([\d,]+)\s+hazards?\]")
_RACE = re.compile(r"^(Error|Warning|ERROR|WARN(?:ING)?):\s*Race reported", re.IGNORECASE)


COUNTS = ("records", "errors", "warnings", "hazards")


def _int(s: str) -> int:
    return int(s.replace(",", ""))


@dataclass
class SanitizerLog:
    """The summary lines' counts (None where a line is missing) and per kernel its findings:
    records (problems reported in it), errors and warnings (racecheck's classes; another tool's
    records are all errors), hazards (racecheck's "[N hazards]" added up), kinds (header -> count).
    """

    errors: int | None = None  # ERROR SUMMARY
    hazards_displayed: int | None = None  # RACECHECK SUMMARY
    hazard_errors: int | None = None
    hazard_warnings: int | None = None
    kernels: dict[str, dict] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """A summary line was printed: the tool ran to the end (not killed, not crashed)."""
        return self.errors is not None or self.hazards_displayed is not None

    def summary(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "kernels"}


def _kind(header: str) -> str:
    """The record's kind without the numbers that vary (sizes, addresses)."""
    h = _RACE.sub(lambda m: f"{m.group(1).capitalize()}: Race reported", header)
    h = re.split(r"\s+between\s+|\s+at\s+0x", h)[0]
    return re.sub(r"\d+", "N", h).strip().rstrip(".")


def _record(log: SanitizerLog, kernel: str, header: str) -> dict:
    f = log.kernels.setdefault(kernel, dict(records=0, errors=0, warnings=0, hazards=0, kinds={}))
    f["records"] += 1
    f["kinds"][_kind(header)] = f["kinds"].get(_kind(header), 0) + 1
    race = _RACE.match(header)
    f["warnings" if race and race.group(1).lower().startswith("warn") else "errors"] += 1
    return f


def parse_log(text: str) -> SanitizerLog:
    """compute-sanitizer's output read: its summary lines, each record under its kernel."""
    log, header, current = SanitizerLog(), None, None  # the record read, its kernel's findings
    for raw in (ln[len(PREFIX) :] for ln in text.splitlines() if ln.startswith(PREFIX)):
        body = raw.removeprefix(" ")  # one space after the prefix
        if m := _ERROR_SUMMARY.search(body):
            log.errors, header, current = _int(m.group(1)), None, None
        elif m := _RACE_SUMMARY.search(body):
            log.hazards_displayed, log.hazard_errors, log.hazard_warnings = map(_int, m.groups())
            header = current = None
        else:
            if body.strip() and not body.startswith(" "):  # a record's header (or a note)
                header, current = body.strip(), None
            if header is not None and current is None and (m := _AT.match(body)):
                current = _record(log, m.group(1).strip(), header)
            if current is not None and (h := _HAZARDS.search(body)):
                current["hazards"] += _int(h.group(1))
    return log


def select(include_wrong: bool = False) -> list[Variant]:
    """Every kernel of a default run: the non-wrong CUDA and Triton variants, the axis family's
    (+ the wrong demonstrations and the seeds' bugs: include_wrong)."""
    chosen = [v for v in catalogue.select() if v.backend in ("cuda", "triton")]
    chosen += catalogue.AXIS_VARIANTS
    if include_wrong:
        chosen += [v for v in catalogue.VARIANTS if v.wrong and v.backend == "cuda"]
        chosen += records_beyond.DEMO_VARIANTS  # never in the catalogue
    return chosen


def plan_batches(variants: list[Variant], sizes: tuple[int, ...]) -> list[Job]:
    """Non-demonstrations together (all their dtypes); each seed bug alone, at its own sizes."""
    normal = [v for v in variants if v.family != records_beyond.DEMO_FAMILY]
    used = tuple(d for d in dtypes.NAMES if any(d in v.dtypes for v in normal))
    demos = [v for v in variants if v.family == records_beyond.DEMO_FAMILY]
    alone = [
        Job([v], DEMOS.get(v.id, ("", sizes))[1], v.dtypes, v.id.split("/")[-1]) for v in demos
    ]
    return ([Job(normal, sizes, used, "default")] if normal else []) + alone


def axis_kinds(v: Variant) -> set[str]:
    """The launch kinds an axis variant's passes use on the shapes sanitize runs it at."""
    from harness.core import axis_geometry as geom

    cases = axis_cases(v, 0, "sanitize")
    return {ps.kind for s, d in cases for ps in v.launch.mapping.passes(geom.problem(s, d))}


def kernel_names(variants: list[Variant]) -> dict[str, set[str]]:
    """Kernel name as the sanitizer prints it (--demangle no) -> the ids of the variants that
    launch it (CUDA names from NVRTC, no GPU needed; Triton's: the function names). An axis
    variant's kernels depend on the shape (a split stage ends in another kind's kernel reading
    float32 partials; the fastest pair picks a stage): each is given to every axis variant whose
    passes launch its kind on the shapes sanitize runs."""
    from harness.compile import nvrtc

    by_name: dict[str, set[str]] = defaultdict(set)
    exprs: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # source -> ...
    kind_of = {t.split("<")[0]: k for k, t in records_axis.CUDA_KERNELS.items()}
    for v in variants:
        kinds = axis_kinds(v) if v.family == records_axis.FAMILY else None
        if v.backend == "triton":
            names = [v.kernel] if kinds is None else [records_axis.TRITON_KERNELS[k] for k in kinds]
            for name in filter(None, names):
                by_name[name].add(v.id)
        elif v.backend == "cuda" and kinds is not None:
            for expr in records_axis.name_expressions():
                if kind_of[expr.split("<")[0]] in kinds:
                    exprs[records_axis.SOURCE_CUDA][expr].add(v.id)
        elif v.backend == "cuda" and v.source:
            for expr in (v.name_expression(d) for d in v.dtypes):
                exprs[v.source][expr].add(v.id)
    for source, table in exprs.items():
        # NVRTC missing: the expressions stand in, and the sanitizer's mangled CUDA names will
        # not match them (their records then count as "unattributed", which fails the run)
        lowered = {e: e for e in table}
        if nvrtc.available():
            lowered = nvrtc.compile_file(source, "sm_90", list(table)).lowered
        for expr, ids in table.items():
            by_name[lowered[expr]].update(ids)
    return dict(by_name)


def verdict(vid: str, tools: dict[str, dict]) -> str:
    """One line per variant: what the tools say against what is expected of it."""
    if vid in DEMO_TOOL:
        tool = DEMO_TOOL[vid]
        got = tools.get(tool)
        if got is None or got.get("incomplete"):
            return f"seed bug: {tool} did not complete"
        flagged = got["records"] > 0
        if not flagged and vid in UNSEEN_ON_HOPPER:
            return f"seed bug not seen by {tool} (as measured on sm_90: no tool sees it)"
        said = "flagged" if flagged else "NOT flagged"
        return f"seed bug {said} by {tool} (the tool meant for it)"
    incomplete = [t for t, c in tools.items() if c.get("incomplete")]
    run_failed = [f"{t} ({c['run_failed']})" for t, c in tools.items() if c.get("run_failed")]
    flagged = [t for t, c in tools.items() if t != "racecheck" and c["records"]]
    race = tools.get("racecheck", {})
    reports, hazards = race.get("records", 0), race.get("hazards", 0)
    if lookup(vid).wrong:
        extra = f"; also flagged by {', '.join(flagged)}" if flagged else ""
        return f"wrong demonstration: racecheck {reports} report(s), {hazards} hazards{extra}"
    if incomplete:
        return "did not complete under " + ", ".join(incomplete)
    if flagged:
        return "FLAGGED by " + ", ".join(flagged)
    if run_failed:
        return "FAILED to run under " + "; ".join(run_failed)
    if reports:
        why = "volatile warp-synchronous form" if vid in VOLATILE_SHARED else "UNEXPECTED"
        return f"racecheck hazards reported ({why}): {reports} report(s), {hazards} hazards"
    return "clean"


def sanitize(
    variants: list[Variant],
    sizes: tuple[int, ...] = DEFAULT_SIZES,
    tools: tuple[str, ...] = TOOLS,
    raw_dir: Path | None = None,
    progress=lambda line: None,
) -> dict:
    """The sanitize document: per run, per kernel, per variant; the tools' logs in raw_dir (None:
    a temporary folder)."""
    from harness.compile import nvrtc

    path, doc = start("compute-sanitizer", SCHEMA, raw_dir)
    held = None if raw_dir else tempfile.TemporaryDirectory(prefix="sanitize-")  # gone on return
    work = raw_dir or Path(held.name)  # after the checks: none on exit 2
    names = kernel_names(variants)
    lowered = "NVRTC lowered names" if nvrtc.available() else "NVRTC missing"
    doc |= dict(sizes=list(sizes), env=ENV, kernel_names=lowered, runs=[], kernels=[])
    per_variant: dict[str, dict[str, dict]] = {v.id: {} for v in variants}
    for tool, batch in ((t, b) for t in tools for b in plan_batches(variants, sizes)):
        progress(f"compute-sanitizer --tool {tool}: {batch.label} ({len(batch.variants)})")
        job = replace(batch, label=f"sanitize-{tool}-{batch.label}")  # its files' stem
        flags = f"--tool {tool} --demangle no --report-api-errors no --print-limit 100000".split()
        timeout = DEMO_TIMEOUT_S if batch.label != "default" else RUN_TIMEOUT_S
        rc, said, ran = job.run([path, *flags], "sanitize", work, f"{job.label}.txt", timeout, ENV)
        log = parse_log(said)
        complete = log.complete and rc is not None  # None: killed
        doc["runs"].append(
            {"tool": tool, "batch": batch.label, "variants": [v.id for v in batch.variants]}
            | {"sizes": list(batch.sizes), "dtypes": list(batch.dtypes), "rc": rc}
            | {"complete": complete, **log.summary(), "log": f"{job.label}.txt"}
        )
        for k, found in log.kernels.items():
            attributed = {"variants": sorted(names.get(k, ())) or ["unattributed"]}
            doc["kernels"].append({"tool": tool, "kernel": k, **attributed, **found})
        for v in batch.variants:  # the records of the kernels v launches, and who else does
            mine = [k for k in log.kernels if v.id in names.get(k, ())]
            counts = {c: sum(log.kernels[k][c] for k in mine) for c in COUNTS}
            counts["kernels_shared_with"] = sorted(set().union(*(names[k] for k in mine)) - {v.id})
            if not complete or ran is None:
                counts["incomplete"] = True
            failed = [e for e in ran or [] if e["variant"] == v.id and not e["ok"]]
            if failed and (not v.wrong or any(e.get("error") for e in failed)):
                e = failed[0]
                counts["run_failed"] = f"{e['dtype']} n={e['n']}: {e.get('message', 'wrong sum')}"
            per_variant[v.id][tool] = counts
    doc["variants"] = [
        {"variant": v.id, "backend": v.backend, "family": v.family, "wrong": v.wrong,
         "volatile": next((w for w, ids in VOLATILE.items() if v.id in ids), ""),
         "tools": per_variant[v.id], "verdict": verdict(v.id, per_variant[v.id])}
        for v in variants
    ]  # fmt: skip
    return doc


def failures(doc: dict) -> list[str]:
    """What fails a run: a default kernel flagged, a tool unfinished, a seed bug not flagged."""
    bad = ("FLAGGED", "FAILED", "UNEXPECTED", "NOT flagged", "did not complete")
    failed = [r for r in doc["variants"] if any(b in r["verdict"] for b in bad)]
    stray = [k for k in doc["kernels"] if k["variants"] == ["unattributed"]]
    return [f"{r['variant']}: {r['verdict']}" for r in failed] + [
        f"{k['tool']} flagged a kernel no selected variant launches: {k['kernel']}"
        for k in stray
        if k["tool"] != "racecheck"
    ]
