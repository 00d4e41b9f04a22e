"""Write the SYNTHETIC report fixtures: tests/data/synthetic_run_cli.json (a run's ROWS
document, suite "ladder", as `reduce-ladder run --json` writes it) and
tests/data/synthetic_bench.json (pytest-benchmark's JSON, each extra_info a case's rows,
BENCH_SCHEMA): the rows of harness.report.records, so the fixtures' format is what the
producers write. The committed fixtures were made from an older catalogue: running this now
writes more variants (the tests read the committed files, not this script's output).
synthetic_bench.json was written in the older bench/2 form (one result record per extra_info)
and converted by experiments/migrate_legacy_results into the rows its reader made: this script's
output for its variants, but that their rows' suite is that reader's "pytest-benchmark" where
this script writes the suite's name, "ladder", as benchmarks/test_bench.py does
(tests/test_report.py checks that they agree).

SYNTHETIC TEST DATA, NOT A MEASUREMENT: the times come from a made-up model (a launch cost per
pass plus bytes over a made-up bandwidth times a per-stage efficiency), only so that the report's
tables, ratios and plots can be tested without a GPU. Never copy these numbers anywhere else.

    python3 tests/data/make_synthetic.py      (from the repository root; deterministic)
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harness.core import catalogue
from harness.core.mappings import plan_passes
from harness.core.timing import Timing
from harness.launch import peers
from harness.report import records
from harness.report.records import Row

HERE = Path(__file__).resolve().parent
SIZES = (2**10, 2**16, 2**20, 2**24)
DTYPES = ("float32", "int32")
NOTE = "SYNTHETIC TEST DATA, NOT A MEASUREMENT (tests/data/make_synthetic.py)"
# Made-up model parameters (two fictitious GPUs).
GPUS = {"A": {"bw": 3000.0, "launch_us": 4.0}, "B": {"bw": 4200.0, "launch_us": 3.0}}
PEER_EFF = {"peer/cupy.sum-cub": 0.9, "peer/cupy.sum-nocub": 0.6, "peer/torch.sum": 0.85}


def efficiency(v: catalogue.Variant) -> float:
    if v.backend == "peer":
        return PEER_EFF.get(v.id, 1.0)
    stage = int(v.stage.split("-")[0]) if v.stage.split("-")[0].isdigit() else 4
    base = 0.08 + 0.1 * stage  # later stages closer to the copy bandwidth
    return min(0.92, base * (0.95 if v.backend == "triton" else 1.0))


def timing(ms: float, reps: int = 20) -> Timing:
    return Timing(median_ms=ms, min_ms=ms * 0.97, p10_ms=ms * 0.98, p90_ms=ms * 1.04, reps=reps)


def case(v: catalogue.Variant, dtype: str, n: int, gpu: dict, device: str,
         first_pass: bool = True) -> list[Row]:  # fmt: skip
    """A case's rows as session.check_and_time writes them (first pass, total, graph, call)."""
    size = 4
    eff = efficiency(v)
    if v.backend == "peer":
        npass, nbytes = 1, peers.bytes_moved(v, n, size)
        first_bytes = None
    else:
        ps = plan_passes(v.launch, n)
        npass, nbytes = len(ps), sum((p.n + p.blocks) * size for p in ps)
        first_bytes = (ps[0].n + ps[0].blocks) * size
    ms = npass * gpu["launch_us"] * 1e-3 + nbytes / (gpu["bw"] * eff) / 1e6
    times = {}
    if first_bytes is not None and first_pass:
        fms = gpu["launch_us"] * 1e-3 + first_bytes / (gpu["bw"] * eff) / 1e6
        times["first_pass"] = (timing(fms), first_bytes)
    times["total"] = (timing(ms), nbytes)
    if n <= 2**20:
        times["graph"] = (timing(ms - npass * gpu["launch_us"] * 0.7e-3), nbytes)
        times["call"] = (timing(ms + 0.012 + npass * 0.006), nbytes)
    ident = {"device": device, "suite": "ladder", "variant": v.id, "config": "", "dtype": dtype,
             "shape": n, "check": "ok"}  # fmt: skip
    rows = [Row(**ident, metric=m, **t.record(), bytes=b) for m, (t, b) in times.items()]
    info = {"passes": npass} if first_bytes is not None and first_pass else {}
    return [dataclasses.replace(rows[0], info=info), *rows[1:]]


def variants() -> list[catalogue.Variant]:
    return catalogue.ladder_order(catalogue.select())


def cli_doc() -> dict:
    gpu, name = GPUS["A"], "SYNTHETIC-GPU-A (test data)"
    rows = [r for d in DTYPES for n in SIZES for v in variants() for r in case(v, d, n, gpu, name)]
    demo = case(catalogue.get("cuda/v5-wrong-nosync"), "float32", 2**24, gpu, name)
    why = {"message": "|result - golden| = 3 > tolerance 0"}
    rows += [dataclasses.replace(r, check="wrong", info={**r.info, **why} if k == 0 else {})
             for k, r in enumerate(demo)]  # fmt: skip
    doc = records.rows_document(
        rows, suite="ladder",
        device={"name": name, "sm_count": 0, "capability": "0.0"}, mode="timed", synthetic=True,
        note=NOTE,
    )  # fmt: skip
    return {**doc, "created": "2000-01-01T00:00:00+00:00"}


def bench_doc() -> dict:
    gpu, name = GPUS["B"], "SYNTHETIC-GPU-B (test data)"
    benches = []
    for d in DTYPES:
        for n in SIZES:
            label = f"2^{n.bit_length() - 1}"
            for v in variants():
                # the suite writes no first pass: it times the whole reduction
                rows = case(v, d, n, gpu, name, first_pass=False)
                wall = rows[0].median_ms / 1e3 + 2e-5
                benches.append(
                    {
                        "group": f"{d} n={label}",
                        "name": f"test_reduce[{d}-{label}-{v.id}]",
                        "fullname": f"benchmarks/test_bench.py::test_reduce[{d}-{label}-{v.id}]",
                        "params": {"case": [v.id, d, n]},
                        "param": f"{d}-{label}-{v.id}",
                        "extra_info": {"rows": [r.to_json() for r in rows]},
                        "options": {"timer": "sync_perf_counter"},
                        "stats": {
                            "min": wall * 0.97,
                            "max": wall * 1.1,
                            "mean": wall,
                            "stddev": wall * 0.02,
                            "rounds": 20,
                            "median": wall,
                            "iqr": wall * 0.03,
                            "q1": wall * 0.99,
                            "q3": wall * 1.02,
                            "iqr_outliers": 0,
                            "stddev_outliers": 0,
                            "outliers": "0;0",
                            "ld15iqr": wall * 0.97,
                            "hd15iqr": wall * 1.1,
                            "ops": 1 / wall,
                            "total": wall * 20,
                            "iterations": 1,
                        },
                    }
                )
    return {
        "machine_info": {
            "node": "synthetic",
            "python_version": "3.12.0",
            "synthetic": True,
            "note": NOTE,
            "gpu": {"name": name},
            "reduce_ladder": {"schema": records.BENCH_SCHEMA},
        },
        "commit_info": {"id": "0" * 40, "dirty": False},
        "benchmarks": benches,
        "datetime": "2000-01-02T00:00:00",
        "version": "5.1.0",
    }


if __name__ == "__main__":
    (HERE / "synthetic_run_cli.json").write_text(json.dumps(cli_doc(), indent=None) + "\n")
    (HERE / "synthetic_bench.json").write_text(json.dumps(bench_doc(), indent=None) + "\n")
    print("wrote", HERE / "synthetic_run_cli.json", HERE / "synthetic_bench.json")
