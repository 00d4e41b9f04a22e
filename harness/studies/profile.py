"""The profile study: each variant's hardware counters under Nsight Compute, per job ncu over
harness.studies.profile_driver with one NVTX range per variant (docs/correctness.md); the report,
its CSV exports (plain, and NVTX-renamed: the cross-check) and ncu's log stay in the raw folder."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.core.sizes import size_label
from harness.report import records
from harness.studies import ncu_metrics, profile_driver
from harness.studies.ncu_metrics import KernelRow
from harness.studies.profile_driver import Job, lookup, range_name

SCHEMA = records.PROFILE_SCHEMA
DEFAULT_SIZES = (2**24,)
PEERS = ("peer/torch.sum", "peer/cupy.sum-cub", "peer/cupy.sum-nocub")
NCU_FLAGS = ("--clock-control", "none", "--nvtx")
EXPORT_FLAGS = ("--csv", "--page", "raw", "--print-units", "base")
RUN_TIMEOUT_S = 600


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
    metrics = ["--metrics", ",".join(m.name for m in ncu_metrics.ALL_METRICS)]
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
    return {"metrics": metrics, "derived": ncu_metrics.derive(metrics)}


def variant_record(a: Attributed) -> dict:
    """One variant's result: what the catalogue says of it, where it ran, the check's verdict, its
    kernels and their total (each metric by its aggregate)."""
    v, e = lookup(a.entry["variant"]), a.entry
    kernels = [dict(id=r.id, name=r.name, grid=r.info.get("Grid Size"),
                    block=r.info.get("Block Size"), **counters(ncu_metrics.keyed(r)))
               for r in a.rows]  # fmt: skip
    return dict(
        variant=v.id, backend=v.backend, stage=v.stage, family=v.family, twin=v.twin,
        twin_of=list(v.twin_of), dtype=e["dtype"], n=e["n"],
        **{k: e[k] for k in ("shape", "dim") if k in e},  # an axis variant's case
        check={k: e.get(k) for k in ("ok", "value", "expected", "message")},
        kernels=kernels, nvtx_ranges=a.nvtx_names,
        total=counters(ncu_metrics.aggregate([k["metrics"] for k in kernels])),
    )  # fmt: skip


def _export(ncu: str, job: Job, raw_dir: Path, suffix: str, *extra: str) -> list | None:
    """ncu's report as CSV (kept as <label><suffix>); its kernels, None if it has none."""
    report = str(raw_dir / f"{job.label}.ncu-rep")
    done = profile_driver.run_tool([ncu, "--import", report, *EXPORT_FLAGS, *extra], timeout=300)
    (raw_dir / f"{job.label}{suffix}").write_text(done.stdout)
    try:
        return ncu_metrics.parse_csv(done.stdout)
    except ncu_metrics.NcuCsvError as e:
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
    metrics = [asdict(m) for m in ncu_metrics.ALL_METRICS]
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
