"""The profile study: each variant's hardware counters under Nsight Compute, per job ncu over
harness.studies.profile_driver with one NVTX range per variant (docs/correctness.md), the one
table of metrics it collects (ALL_METRICS: ncu's name, the key stored, how it adds up over passes,
what it tells) and the reader of `ncu --csv --page raw`; the report, its CSV exports (plain, and
NVTX-renamed: the cross-check) and ncu's log stay in the raw folder."""

from __future__ import annotations

import csv
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.core.sizes import size_label
from harness.report import records
from harness.studies import profile_driver
from harness.studies.profile_driver import Job, lookup, range_name

SCHEMA = records.PROFILE_SCHEMA
DEFAULT_SIZES = (2**24,)
PEERS = ("peer/torch.sum", "peer/cupy.sum-cub", "peer/cupy.sum-nocub")
NCU_FLAGS = ("--clock-control", "none", "--nvtx")
EXPORT_FLAGS = ("--csv", "--page", "raw", "--print-units", "base")
RUN_TIMEOUT_S = 600


# How a metric adds up over the kernels (passes) of one variant:
#   sum   counts (bytes, sectors, instructions, time): the variant's total
#   time  rates and percentages: the mean weighted by each kernel's duration
#   inst  per-issued-instruction ratios (stall cycles): the mean weighted by instructions executed
#   max   per-launch properties (registers): the largest over the passes


@dataclass(frozen=True)
class Metric:
    key: str
    name: str
    aggregate: str
    what: str


# fmt: off
METRICS: tuple[Metric, ...] = tuple(Metric(*m) for m in (
    ("duration_ns", "gpu__time_duration.sum", "sum",
     "Kernel duration in ns as ncu replays it alone (--clock-control none): no launch gaps."),
    ("dram_read_bytes", "dram__bytes_read.sum", "sum",
     "Bytes read from device memory (HBM): ~n x itemsize unless caches serve part of it."),
    ("dram_write_bytes", "dram__bytes_write.sum", "sum",
     "Bytes written to device memory: the partials, plus an in-place stage's writes leaving L2."),
    ("dram_throughput_pct", "dram__throughput.avg.pct_of_peak_sustained_elapsed", "time",
     "DRAM throughput as a % of peak over the kernel: seed 000's '% of peak', the >= 90% lesson."),
    ("l1_hit_pct", "l1tex__t_sector_hit_rate.pct", "time",
     "Share of L1TEX sector lookups that hit: why seed 000's in-place v0 beats v1."),
    ("l2_hit_pct", "lts__t_sector_hit_rate.pct", "time",
     "Share of L2 sector lookups that hit (seed 000's v0/v1 explanation, L2 half)."),
    ("gld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "sum",
     "32-byte sectors read by global loads: seed 004's load column (6,553,600 for reduceGmem)."),
    ("gst_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "sum",
     "32-byte sectors written by global stores: seed 004's store column (one per block)."),
    ("gld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "sum",
     "Global load requests (one per warp load): sectors / requests is 4 when coalesced."),
    ("gst_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "sum",
     "Global store requests: sectors per request tells how scattered the stores are."),
    ("shared_ld_inst", "smsp__inst_executed_op_shared_ld.sum", "sum",
     "Warp-level shared-memory loads: the shuffle stage (v8) executes far fewer than the trees."),
    ("shared_st_inst", "smsp__inst_executed_op_shared_st.sum", "sum",
     "Warp-level shared-memory store instructions."),
    ("shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "sum",
     "Shared-load wavefronts: one per instruction when conflict-free, more on bank conflicts."),
    ("shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "sum",
     "Shared-store wavefronts (the same for stores)."),
    ("shared_ld_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "sum",
     "Shared-load bank conflicts: v2's strided index has ~100x v3's (never zero: compare stages)."),
    ("shared_st_bank_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "sum",
     "Shared-store bank conflicts."),
    ("inst_executed", "smsp__inst_executed.sum", "sum",
     "Warp-level instructions executed (the denominator of threads per instruction)."),
    ("threads_pred_on", "smsp__thread_inst_executed_pred_on.sum", "sum",
     "Thread instructions with the predicate on: over warp instructions, v1's divergence shows."),
    ("occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active", "time",
     "Achieved occupancy: active warps as a % of the SM's maximum while it is active."),
    ("registers", "launch__registers_per_thread", "max",
     "Registers per thread the kernel was compiled to (occupancy's first limit)."),
    ("grid_size", "launch__grid_size", "max", "Blocks launched (over the passes: the largest)."),
    ("block_size", "launch__block_size", "max", "Threads per block (the launch ncu saw)."),
    ("warp_cycles_per_issue", "smsp__average_warp_latency_per_inst_issued.ratio", "inst",
     "Average cycles between two instructions a warp issues: what the stall reasons divide."),
))

# Stall reasons as Nsight Compute's warp-stall rule names them, with what each waits for. The
# metric smsp__average_warps_issue_stalled_<reason>_per_issue_active.ratio is the cycles a warp
# spends stalled for <reason> between two issued instructions; its share of warp_cycles_per_issue
# (all of those gaps) is the share the rule words ("5.6 cycles ... 34.1% of the total average of
# 16.5 cycles between issuing two instructions", seed 000, v4).
STALL_REASONS: dict[str, str] = {
    "barrier": "waiting for sibling warps at a block barrier (__syncthreads)",
    "long_scoreboard": "waiting for an L1TEX (global, local) memory result",
    "short_scoreboard": "waiting for an MIO result, typically shared memory",
    "mio_throttle": "the MIO queue (shared memory, special math) is full",
    "lg_throttle": "the local/global memory instruction queue is full",
    "membar": "waiting on a memory barrier (fence)",
    "wait": "a fixed-latency execution dependency",
    "math_pipe_throttle": "a math pipeline is busy",
    "not_selected": "eligible but another warp was issued",
    "selected": "issuing (the issue cycle itself)",
    "no_instruction": "the next instruction is not fetched yet",
    "branch_resolving": "a branch target is being computed",
    "dispatch_stall": "the dispatcher held a ready instruction back",
    "drain": "after EXIT, waiting for outstanding memory writes",
    "imc_miss": "an immediate-constant cache miss",
    "sleeping": "a thread of the warp sleeps (nanosleep)",
    "tex_throttle": "the L1TEX queue is full",
    "misc": "a miscellaneous hardware reason",
}
# fmt: on


STALL_METRICS: tuple[Metric, ...] = tuple(
    Metric(f"stall_{r}", f"smsp__average_warps_issue_stalled_{r}_per_issue_active.ratio", "inst",
           f"Cycles per issued instruction stalled: {w}.")
    for r, w in STALL_REASONS.items()
)  # fmt: skip
ALL_METRICS: tuple[Metric, ...] = METRICS + STALL_METRICS


class NcuCsvError(ValueError):
    """The text is not ncu CSV output (no header row), or a row does not fit its header."""


@dataclass
class KernelRow:  # one profiled kernel launch
    id: int
    name: str
    values: dict[str, float | None] = field(default_factory=dict)  # by ncu metric name
    info: dict[str, str] = field(default_factory=dict)  # the non-metric columns (Grid Size, ...)


# ncu's identifying columns (everything else in a raw row is a metric, or an NVTX range stack).
_INFO = "ID,Process ID,Process Name,Host Name,Kernel Name,Kernel Time,Context,Stream,Block Size"
INFO_COLUMNS = frozenset((*_INFO.split(","), "Grid Size", "Device", "CC"))


def parse_number(text: str) -> float | None:
    """'6,553,600' -> 6553600.0; '304.02' -> 304.02; '', 'n/a' -> None."""
    try:
        x = float(text.strip().replace(",", ""))
    except ValueError:
        return None
    return None if math.isnan(x) else x


def parse_csv(text: str) -> list[KernelRow]:
    """Kernels in ncu's order from `--csv --page raw --print-units base` output (ncu's own lines
    and the units row dropped)."""
    rows = list(csv.reader(ln for ln in text.splitlines() if ln[:1] == '"'))
    start = next((i for i, r in enumerate(rows) if r[:1] == ["ID"] and "Kernel Name" in r), None)
    if start is None:
        raise NcuCsvError('no ncu CSV header (a row starting with "ID" naming "Kernel Name")')
    header, body = rows[start], rows[start + 1 :]
    out: list[KernelRow] = []
    for r in body[1:] if body and body[0][:1] == [""] else body:  # the units row skipped
        if len(r) != len(header):
            raise NcuCsvError(f"row of {len(r)} cells under a header of {len(header)}: {r[:3]}")
        cells = dict(zip(header, r, strict=True))
        info = {c: v for c, v in cells.items() if c in INFO_COLUMNS or "_Range:" in c}
        values = {c: parse_number(v) for c, v in cells.items() if c not in info}
        out.append(
            KernelRow(int(parse_number(cells["ID"]) or 0), cells["Kernel Name"], values, info)
        )
    return out


def keyed(row: KernelRow) -> dict[str, float | None]:
    """The row's metrics under the table's keys (None where ncu gave no value)."""
    return {m.key: row.values.get(m.name) for m in ALL_METRICS}


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b else None


def derive(m: dict[str, float | None]) -> dict:
    """Ratios and shares computed from one kernel's (or one variant's summed) keyed metrics."""
    d = {f"{w}_sectors_per_request": _ratio(m.get(f"{w}_sectors"), m.get(f"{w}_requests"))
         for w in ("gld", "gst")}  # fmt: skip
    # threads that do work per warp instruction: 32 when no lane is ever predicated off
    d["threads_per_inst"] = _ratio(m.get("threads_pred_on"), m.get("inst_executed"))
    # global load / store throughput as seed 004 quotes it (l1tex bytes per second): sectors x 32
    # bytes over the kernel time; bytes / ns = GB/s
    for w in ("gld", "gst"):
        d[f"{w}_gbs"] = _ratio((m.get(f"{w}_sectors") or 0) * 32, m.get("duration_ns"))
    shares = {r: _ratio(m.get(f"stall_{r}"), m.get("warp_cycles_per_issue")) for r in STALL_REASONS}
    d["stall_share"] = {r: s for r, s in shares.items() if s is not None}
    # "selected" is the issue cycle itself, part of the total but not a stall
    stalls = sorted((kv for kv in d["stall_share"].items() if kv[0] != "selected"),
                    key=lambda kv: kv[1], reverse=True)  # fmt: skip
    d["top_stalls"] = [[r, s] for r, s in stalls[:3]]
    return d


def aggregate(kernels: list[dict[str, float | None]]) -> dict[str, float | None]:
    """A variant's keyed metrics over its kernels (passes), each by its metric's aggregate."""
    out: dict[str, float | None] = {}
    for m in ALL_METRICS:
        present = [k for k in kernels if k.get(m.key) is not None]
        values = [k[m.key] for k in present]
        weights = [k.get("duration_ns" if m.aggregate == "time" else "inst_executed") or 0
                   for k in present]  # fmt: skip
        if not present:
            out[m.key] = None
        elif m.aggregate == "sum":  # (v or 0: a zero adds up as the integer 0, as stored)
            out[m.key] = sum(v or 0 for v in values)
        elif m.aggregate == "max":
            out[m.key] = max(values)
        elif sum(weights):
            out[m.key] = sum(v * w for v, w in zip(values, weights, strict=True)) / sum(weights)
        else:
            out[m.key] = sum(values) / len(values)
    return out


class ProfileError(RuntimeError):
    """ncu ran but the harness could not get per-variant counters out of it (message says why)."""


def default_variants(dtype: str = "float32") -> list[Variant]:
    """The float32 ladder (CUDA stages, their Triton twins), the fastest pair and the peers."""
    ours = [v for v in catalogue.select(dtype=dtype) if v.backend in ("cuda", "triton")]
    ours = [v for v in ours if v.family in ("ladder", "fastest")]
    return [*ours, *catalogue.select(PEERS, dtype=dtype)]


def plan_jobs(variants: list[Variant], sizes: list[int], dtype: str, shapes=()) -> list[Job]:
    """The ncu processes, in order: per n, ours with one peer last, each other peer alone; with
    shapes, ours over every shape in one job, each peer at each shape alone."""
    own = [v for v in variants if v.backend != "peer" and dtype in v.dtypes]
    peers = [v for v in variants if v.backend == "peer" and dtype in v.dtypes]
    if shapes:  # n is unused beside shapes
        runs = [(own, tuple(shapes))] if own else []
        runs += [([p], (s,)) for p in peers for s in shapes]
        return [Job(g, (1,), (dtype,), f"profile-{dtype}-shapes-{k}", sh)
                for k, (g, sh) in enumerate(runs)]  # fmt: skip
    groups = [own + peers[:1], *([p] for p in peers[1:])] if own else [[p] for p in peers]
    label = {n: size_label(n).replace("^", "_").replace(",", "") for n in sizes}
    return [
        Job(g, (n,), (dtype,), f"profile-{dtype}-{label[n]}-{k}")
        for n in sizes
        for k, g in enumerate(groups)
    ]


def ncu_flags(job: Job, raw_dir: Path) -> list[str]:
    """ncu's options for a job: its variants' NVTX ranges, the metrics, where the report goes."""
    includes = [a for v in job.variants for a in ("--nvtx-include", f"{range_name(v.id)}/")]
    metrics = ["--metrics", ",".join(m.name for m in ALL_METRICS)]
    export = ["--export", str(raw_dir / f"{job.label}.ncu-rep"), "--force-overwrite"]
    return [*NCU_FLAGS, *includes, *metrics, *export]


@dataclass
class Attributed:
    entry: dict  # the driver's manifest entry
    rows: list[KernelRow] = field(default_factory=list)
    nvtx_names: list[str] = field(default_factory=list)


def attribute(
    rows: list[KernelRow], manifest: list[dict], renamed: list[KernelRow] | None = None
) -> tuple[list[Attributed], str]:
    """Split ncu's rows (launch order) among the manifest's variants by their launch counts (a
    library call cannot count them: it runs last, takes the rest); (result, nvtx_check)."""
    out, i = [], 0
    for k, entry in enumerate(manifest):
        count = entry.get("launches")
        if count is None:
            if k != len(manifest) - 1:
                raise ProfileError(f"{entry['variant']}: a library call must run last in its job")
            count = len(rows) - i
        if i + count > len(rows):
            raise ProfileError(
                f"ncu profiled {len(rows)} kernels, fewer than the {i + count} the driver "
                f"launched up to {entry['variant']} (is the NVTX filter matching?)"
            )
        out.append(Attributed(entry, rows[i : i + count]))
        i += count
    if i != len(rows):
        raise ProfileError(f"ncu profiled {len(rows)} kernels; the driver launched {i}")
    if not renamed or len(renamed) != len(rows):
        return out, "unavailable (no NVTX-renamed export of the same kernels)"
    wrong = []
    for j, (a, r) in enumerate(zip([o for o in out for _ in o.rows], renamed, strict=True)):
        a.nvtx_names.append(r.name)
        # The renamed kernel carries its innermost range (a library's own, e.g. CUB's
        # cub::DeviceReduce::Sum, nests inside ours); the push/pop column has the whole stack.
        stack = " ".join([r.name, *(v for k, v in r.info.items() if "_Range:" in k)])
        if a.entry["range"] not in stack:
            wrong.append(f"kernel {j} ({a.entry['variant']}) is in range {r.name!r}")
    return out, ("agrees" if not wrong else "DIFFERS: " + "; ".join(wrong[:5]))


def counters(metrics: dict) -> dict:
    """A kernel's (or a variant's aggregated) keyed metrics and what they derive."""
    return {"metrics": metrics, "derived": derive(metrics)}


def variant_record(a: Attributed) -> dict:
    """One variant's result: what the catalogue says of it, where it ran, the check's verdict, its
    kernels and their total (each metric by its aggregate)."""
    v, e = lookup(a.entry["variant"]), a.entry
    kernels = [dict(id=r.id, name=r.name, grid=r.info.get("Grid Size"),
                    block=r.info.get("Block Size"), **counters(keyed(r)))
               for r in a.rows]  # fmt: skip
    return dict(
        variant=v.id, backend=v.backend, stage=v.stage, family=v.family, twin=v.twin,
        twin_of=list(v.twin_of), dtype=e["dtype"], n=e["n"],
        **{k: e[k] for k in ("shape", "dim") if k in e},  # an axis variant's case
        check={k: e.get(k) for k in ("ok", "value", "expected", "message")},
        kernels=kernels, nvtx_ranges=a.nvtx_names,
        total=counters(aggregate([k["metrics"] for k in kernels])),
    )  # fmt: skip


def _export(ncu: str, job: Job, raw_dir: Path, suffix: str, *extra: str) -> list | None:
    """ncu's report as CSV (kept as <label><suffix>); its kernels, None if it has none."""
    report = str(raw_dir / f"{job.label}.ncu-rep")
    done = profile_driver.run_tool([ncu, "--import", report, *EXPORT_FLAGS, *extra], timeout=300)
    (raw_dir / f"{job.label}{suffix}").write_text(done.stdout)
    try:
        return parse_csv(done.stdout)
    except NcuCsvError as e:
        if extra:
            return None
        why = f"{e} (ncu --import: {done.stderr.strip()[:200]})"
        raise ProfileError(f"{job.label}: {why}") from None


def profile(
    variants: list[Variant],
    sizes: list[int],
    dtype: str,
    raw_dir: Path,
    progress=lambda line: None,
    shapes: tuple = (),
) -> dict:
    """The profile document; raw ncu output under raw_dir; shapes: ((shape, dim), ...) the axis
    variants and the peers run at instead of n. Raises ToolUnavailable / ProfileError."""
    ncu, doc = profile_driver.start("ncu", SCHEMA, raw_dir)
    flags = [*NCU_FLAGS, "--nvtx-include", "<range>/", "--metrics", "..."]
    metrics = [asdict(m) for m in ALL_METRICS]
    doc |= dict(ncu_flags=flags, metrics=metrics, runs=[], results=[])
    for job in plan_jobs(variants, sizes, dtype, shapes):
        where = f"n = {size_label(job.sizes[0])}"
        where = f"shapes {', '.join(map(str, job.shapes))}" if shapes else where
        progress(f"ncu: {len(job.variants)} variant(s), {dtype}, {where}")
        log = f"{job.label}.ncu.log"
        rc, said, launched = job.run([ncu, *ncu_flags(job, raw_dir)], "profile", raw_dir, log,
                                     RUN_TIMEOUT_S)  # fmt: skip
        if rc is None or launched is None:  # rc None: killed at the timeout
            errors = [ln for ln in said.splitlines() if "ERROR" in ln or "error" in ln]
            why = errors[-1] if errors else f"rc={rc}"
            raise ProfileError(f"ncu on {job.label} gave no result ({why}); see {log}")
        rows = _export(ncu, job, raw_dir, ".csv")
        renamed = _export(ncu, job, raw_dir, ".nvtx.csv", "--print-nvtx-rename", "kernel")
        attributed, nvtx_check = attribute(rows, launched, renamed)
        doc["runs"].append(dict(
            dtype=dtype, n=job.sizes[0], variants=[v.id for v in job.variants], rc=rc,
            kernels=len(rows), raw_csv=f"{job.label}.csv", report=f"{job.label}.ncu-rep",
            nvtx_check=nvtx_check,
        ))  # fmt: skip
        doc["results"] += [variant_record(a) for a in attributed]
    return doc
