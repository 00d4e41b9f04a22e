"""Each variant's hardware counters, read by Nsight Compute (issue 17): the profile study.

For each (dtype, n) the harness starts `ncu` on harness.studies.profile_driver as a subprocess:

    ncu --clock-control none --nvtx --nvtx-include "rl.cuda.v3-sequential/" ... \
        --metrics <harness.report.ncu_metrics.metric_names()> --export <raw>/<stem>.ncu-rep \
        python -m harness.studies.profile_driver --mode profile --variant ... --n N --dtype D

The driver runs every variant's passes once inside an NVTX push/pop range of its own (warm-up and
check outside), so only the variants' kernels are profiled. The report is then exported twice as
CSV (`ncu --import ... --csv --page raw --print-units base`, and the same with
`--print-nvtx-rename kernel`, which names each kernel by its NVTX range) and kept, with the
.ncu-rep and ncu's log, in the raw directory beside profile.json.

Kernels are attributed to variants by order: the driver's manifest says, in launch order, how many
kernels each variant launched (a plan knows its passes). A library call (torch.sum, cupy.sum) does
not say, so each runs last in its ncu process and takes the rest of the rows; one process per peer.
The NVTX-renamed export is the cross-check: every kernel's range must be its variant's
(`nvtx_check` in profile.json says whether it was).

Why NVTX rather than `--kernel-name regex:` filters: several variants launch the same kernel
(the Triton twins share adjacent_tiles_kernel, a ladder pass and its later passes share a name),
so names cannot say which variant or pass a row is; ranges and launch order can.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.core import catalogue, device
from harness.core.catalogue import Variant
from harness.core.sizes import size_label
from harness.report import documents, ncu_metrics, records
from harness.studies import gpu_tools
from harness.studies.profile_driver import lookup, range_name

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
    chosen = [
        v
        for v in catalogue.select(dtype=dtype)
        if v.family in ("ladder", "fastest") and v.backend in ("cuda", "triton")
    ]
    return [*chosen, *(catalogue.get(p) for p in PEERS if dtype in catalogue.get(p).dtypes)]


@dataclass
class Job:
    """One ncu process: variants run in this order at one (dtype, n); a peer, if any, last."""

    dtype: str
    n: int
    variants: list[Variant]
    stem: str = ""


def plan_jobs(variants: list[Variant], sizes: list[int], dtype: str) -> list[Job]:
    jobs = []
    for n in sizes:
        own = [v for v in variants if v.backend != "peer" and dtype in v.dtypes]
        peers = [v for v in variants if v.backend == "peer" and dtype in v.dtypes]
        groups = [own + peers[:1], *([p] for p in peers[1:])] if own else [[p] for p in peers]
        for k, g in enumerate(gr for gr in groups if gr):
            jobs.append(
                Job(
                    dtype,
                    n,
                    g,
                    f"profile-{dtype}-{size_label(n).replace('^', '_').replace(',', '')}-{k}",
                )
            )
    return jobs


def ncu_command(ncu: str, job: Job, raw_dir: Path, manifest: Path) -> list[str]:
    includes = [a for v in job.variants for a in ("--nvtx-include", f"{range_name(v.id)}/")]
    return [
        ncu,
        *NCU_FLAGS,
        *includes,
        "--metrics",
        ",".join(ncu_metrics.metric_names()),
        "--export",
        str(raw_dir / f"{job.stem}.ncu-rep"),
        "--force-overwrite",
        sys.executable,
        "-m",
        "harness.studies.profile_driver",
        "--mode",
        "profile",
        "--dtype",
        job.dtype,
        "--n",
        str(job.n),
        "--manifest",
        str(manifest),
        "--variant",
        *(v.id for v in job.variants),
    ]


@dataclass
class Attributed:
    entry: dict  # the driver's manifest entry
    rows: list[ncu_metrics.KernelRow] = field(default_factory=list)
    nvtx_names: list[str] = field(default_factory=list)


def attribute(
    rows: list[ncu_metrics.KernelRow], manifest: list[dict], renamed: list | None = None
) -> tuple[list[Attributed], str]:
    """Split ncu's rows (launch order) among the manifest's variants; (result, nvtx_check)."""
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
    j, wrong = 0, []
    for a in out:
        for _ in a.rows:
            name = renamed[j].name
            a.nvtx_names.append(name)
            # The renamed kernel carries its innermost range (a library's own, e.g. CUB's
            # cub::DeviceReduce::Sum, nests inside ours); the push/pop column has the whole stack.
            stack = " ".join([name, *(v for k, v in renamed[j].info.items() if "_Range:" in k)])
            if a.entry["range"] not in stack:
                wrong.append(f"kernel {j} ({a.entry['variant']}) is in range {name!r}")
            j += 1
    return out, ("agrees" if not wrong else "DIFFERS: " + "; ".join(wrong[:5]))


def kernel_record(row: ncu_metrics.KernelRow) -> dict:
    m = ncu_metrics.keyed(row)
    return {
        "id": row.id,
        "name": row.name,
        "grid": row.info.get("Grid Size"),
        "block": row.info.get("Block Size"),
        "metrics": m,
        "derived": ncu_metrics.derive(m),
    }


def variant_record(a: Attributed) -> dict:
    v = lookup(a.entry["variant"])
    kernels = [kernel_record(r) for r in a.rows]
    total = ncu_metrics.aggregate([k["metrics"] for k in kernels])
    return {
        "variant": v.id,
        "backend": v.backend,
        "stage": v.stage,
        "family": v.family,
        "twin": v.twin,
        "twin_of": list(v.twin_of),
        "dtype": a.entry["dtype"],
        "n": a.entry["n"],
        "check": {k: a.entry.get(k) for k in ("ok", "value", "expected", "message")},
        "kernels": kernels,
        "nvtx_ranges": a.nvtx_names,
        "total": {"metrics": total, "derived": ncu_metrics.derive(total)},
    }


def _export(ncu: str, report: Path, extra: tuple[str, ...] = ()) -> gpu_tools.Completed:
    return gpu_tools.run([ncu, "--import", str(report), *EXPORT_FLAGS, *extra], timeout=300)


def run_job(ncu: str, job: Job, raw_dir: Path) -> tuple[list[dict], dict]:
    """Profile one job; (variant records, run record). Raises ToolUnavailable / ProfileError."""
    manifest_path = raw_dir / f"{job.stem}.manifest.json"
    cmd = ncu_command(ncu, job, raw_dir, manifest_path)
    done = gpu_tools.run(cmd, timeout=RUN_TIMEOUT_S)
    (raw_dir / f"{job.stem}.ncu.log").write_text(" ".join(cmd) + "\n\n" + done.text)
    reason = gpu_tools.counter_failure(done.text)
    if reason:
        raise gpu_tools.ToolUnavailable(reason)
    if done.timed_out or not manifest_path.is_file():
        errors = [ln for ln in done.text.splitlines() if "ERROR" in ln or "error" in ln]
        why = errors[-1] if errors else f"rc={done.rc}"
        raise ProfileError(f"ncu on {job.stem} gave no result ({why}); see {job.stem}.ncu.log")
    manifest = documents.load_document(manifest_path, "manifest").raw["launches"]
    report = raw_dir / f"{job.stem}.ncu-rep"
    plain = _export(ncu, report)
    (raw_dir / f"{job.stem}.csv").write_text(plain.stdout)
    try:
        rows = ncu_metrics.parse_csv(plain.stdout)
    except ncu_metrics.NcuCsvError as e:
        raise ProfileError(
            f"{job.stem}: {e} (ncu --import: {plain.stderr.strip()[:200]})"
        ) from None
    renamed_run = _export(ncu, report, ("--print-nvtx-rename", "kernel"))
    (raw_dir / f"{job.stem}.nvtx.csv").write_text(renamed_run.stdout)
    try:
        renamed = ncu_metrics.parse_csv(renamed_run.stdout)
    except ncu_metrics.NcuCsvError:
        renamed = None
    attributed, nvtx_check = attribute(rows, manifest, renamed)
    run = {
        "dtype": job.dtype,
        "n": job.n,
        "variants": [v.id for v in job.variants],
        "rc": done.rc,
        "kernels": len(rows),
        "raw_csv": f"{job.stem}.csv",
        "report": f"{job.stem}.ncu-rep",
        "nvtx_check": nvtx_check,
    }
    return [variant_record(a) for a in attributed], run


def profile(
    variants: list[Variant],
    sizes: list[int],
    dtype: str,
    raw_dir: Path,
    progress=None,
) -> dict:
    """The profile document (see the module docstring); raw ncu output under raw_dir."""
    ncu = gpu_tools.find_tool("ncu")
    gpu_tools.require_gpu()
    raw_dir.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": SCHEMA,
        "device": device.device_info(),
        "ncu": gpu_tools.tool_version(ncu),
        "ncu_flags": [*NCU_FLAGS, "--nvtx-include", "<range>/", "--metrics", "..."],
        "metrics": [
            {"key": m.key, "name": m.name, "aggregate": m.aggregate, "what": m.what}
            for m in ncu_metrics.ALL_METRICS
        ],
        "runs": [],
        "results": [],
    }
    for job in plan_jobs(variants, sizes, dtype):
        if progress:
            progress(f"ncu: {len(job.variants)} variant(s), {dtype}, n = {size_label(job.n)}")
        records, run = run_job(ncu, job, raw_dir)
        doc["runs"].append(run)
        doc["results"].extend(records)
    return doc


def merge(docs: list[dict]) -> dict:
    """Several profile documents (one per dtype / size run) as one: runs and results in order."""
    if not docs:
        raise ValueError("nothing to merge")
    out = {**docs[0], "runs": [], "results": []}
    for d in docs:
        if d.get("schema") != SCHEMA:
            raise ValueError(f"not a profile document (schema {d.get('schema')!r})")
        out["runs"] += d["runs"]
        out["results"] += d["results"]
    return out


def find(doc: dict, variant: str, n: int | None = None, dtype: str | None = None) -> dict | None:
    """The result record of `variant` (at n / dtype if given) in a profile document."""
    for r in doc.get("results", []):
        if r["variant"] == variant and n in (None, r["n"]) and dtype in (None, r["dtype"]):
            return r
    return None
