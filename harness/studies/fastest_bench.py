"""Benchmark of the fastest variants against the peers, every power of two n, in one run.

    reduce-ladder fastest-bench --json out.json [--dtypes float32 int32] [--min 10 --max 30]
        [--variants cuda/fastest triton/fastest cuda/reproducible ...]
    (or python -m harness.studies.fastest_bench with the same options)

For each dtype and n = 2^min .. 2^max: cuda/fastest, triton/fastest (autotuned here, at plan
creation) or the --variants named (any variant with a plan, e.g. family "reproducible"), the
peers peer/torch.sum and peer/cupy.sum-cub as harness.launch.peers runs them (cupy.sum with
dtype=x.dtype and CUB on), and a device-to-device copy of the same n elements
(copy bandwidth counts bytes read + written). Each is timed by harness.core.timing.time_ms: CUDA
events, warm-up, L2 flushed before every repetition, median. For n <= 2^20 each is also timed
from a CUDA graph (harness.core.timing.graph_ms: launch gaps left out). Each fastest result is
checked
against the golden first (harness.check.verify). The input is random integers 0..99 (never zeros),
one
buffer of the largest size, sliced (so every n starts 16-byte aligned).

Printed table, per n: device time (us) of each; "x peer" = best peer time / variant time (>= 1.00
means at least as fast as the better of CUB and torch.sum); "%DS" = bytes read / time over the
datasheet bandwidth; copy TB/s. Writes a FASTEST_BENCH_SCHEMA document: the run's device, method
and Triton configurations, and "results", one result record (harness.report.records) per variant,
peer and copy at each (dtype, n): "total" and (n <= 2^20) "graph" timings, extra.bytes_read.
"""

from __future__ import annotations

import argparse
import sys
import time

from harness.core.device import datasheet_bw
from harness.report import documents, records, study_records
from harness.report.ratios import CUB_ID, TORCH_ID

VARIANTS = ("cuda/fastest", "triton/fastest")
PEERS = ("torch.sum", "cupy.sum-cub")
GRAPH_MAX_N = 2**20


def _reps(n: int) -> int | None:
    if n >= 2**28:
        return 5
    if n >= 2**25:
        return 15
    return None  # time_ms picks about target_ms worth


def bench(
    dtypes: list[str], lo: int, hi: int, log=print, variants: tuple[str, ...] = VARIANTS
) -> dict:
    import torch

    from harness.check import verify
    from harness.core import catalogue, device, timing
    from harness.launch import peers
    from harness.launch.plan import make_plan
    from triton_kernels import fastest as tfast

    name = torch.cuda.get_device_name()
    ds = datasheet_bw(name)
    doc: dict = {
        "schema": records.FASTEST_BENCH_SCHEMA,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": device.device_info(),
        "datasheet_bytes_per_s": ds,
        "timing": "CUDA events, L2 flushed before each repetition, median "
        f"(harness.core.timing.time_ms); graph: harness.core.timing.graph_ms for n <= "
        f"{GRAPH_MAX_N}",
        "results": [],
    }
    t_start = time.time()
    for dtype in dtypes:
        full = verify.seed_like_input(2**hi, dtype, "cuda")
        copy_dst = torch.empty_like(full)
        log(f"\n{name}, {dtype}: device time in us (median), x peer = best peer / variant")
        log(_header(variants, lo <= 20))
        for k in range(lo, hi + 1):
            n = 2**k
            x = full[:n]
            nbytes = n * x.element_size()
            row: dict = {"dtype": dtype, "n": n, "log2n": k, "bytes_read": nbytes}
            fns: dict = {}
            for vid in variants:
                v = catalogue.get(vid)
                try:
                    check = verify.check_variant(v, x)
                    row[f"{vid}:ok"] = check.ok
                    if not check.ok:
                        row[f"{vid}:message"] = check.message
                    plan = make_plan(v, x)
                    fns[vid] = plan.run
                except Exception as e:  # reported, the run goes on
                    row[f"{vid}:ok"] = False
                    row[f"{vid}:message"] = f"{type(e).__name__}: {e}"
            # The peers exactly as the catalogue defines them (harness.launch.peers): cupy.sum with
            # dtype=x.dtype, the call that reaches CUB for int32 too (with the default dtype CuPy
            # promotes int32 to int64 and runs its own kernel instead).
            for pid, key in ((TORCH_ID, "torch.sum"), (CUB_ID, "cupy.sum-cub")):
                try:
                    fns[key] = peers.prepare(catalogue.get(pid), x)
                except Exception as e:  # CuPy has no bfloat16: that peer is absent, and said so
                    row[key] = {"error": f"{pid} cannot take {dtype}: {type(e).__name__}: {e}"}
            dst = copy_dst[:n]
            fns["copy"] = lambda x=x, dst=dst: dst.copy_(x)
            for key, fn in fns.items():
                try:
                    t = timing.time_ms(fn, reps=_reps(n), target_ms=100)
                    row[key] = t.record()
                except Exception as e:
                    row[key] = {"error": f"{type(e).__name__}: {e}"}
                if n <= GRAPH_MAX_N and key != "copy":
                    try:
                        row[f"{key}:graph"] = timing.graph_ms(fn).record()
                    except Exception as e:
                        row[f"{key}:graph"] = {"error": f"{type(e).__name__}: {e}"}
                        torch.cuda.synchronize()

            def med(key: str, row=row) -> float | None:
                return row.get(key, {}).get("median_ms")

            peer_ms = [med(p) for p in PEERS if med(p)]
            best = min(peer_ms) if peer_ms else None
            row["best_peer_ms"] = best
            for vid in variants:
                m = med(vid)
                row[f"{vid}:x_best_peer"] = best / m if (best and m) else None
                row[f"{vid}:read_bytes_per_s"] = nbytes / (m * 1e-3) if m else None
                row[f"{vid}:frac_datasheet"] = nbytes / (m * 1e-3) / ds if (m and ds) else None
                if n <= GRAPH_MAX_N:
                    gp = [
                        row.get(f"{p}:graph", {}).get("median_ms")
                        for p in PEERS
                        if row.get(f"{p}:graph", {}).get("median_ms")
                    ]
                    gv = row.get(f"{vid}:graph", {}).get("median_ms")
                    row[f"{vid}:graph_x_best_peer"] = min(gp) / gv if (gp and gv) else None
            cm = med("copy")
            row["copy_bytes_per_s"] = 2 * nbytes / (cm * 1e-3) if cm else None
            doc["results"] += [r.to_json() for r in study_records.fastest_bench_records(row, name)]
            log(_line(row, lo <= 20, variants))
            del x, fns
        del full, copy_dst
        torch.cuda.empty_cache()
    doc["triton_configs"] = tfast.chosen()
    doc["wall_s"] = time.time() - t_start
    return doc


def _us(v) -> str:
    return f"{v * 1e3:9.2f}" if isinstance(v, float) else f"{'-':>9}"


def _f(v, fmt: str, w: int) -> str:
    return format(v, fmt).rjust(w) if isinstance(v, float) else "-".rjust(w)


def _short(vid: str) -> str:
    """A column label for a variant id: cuda/fastest -> cu-fast, triton/reproducible -> tr-repr."""
    backend, name = vid.split("/", 1)
    return f"{backend[:2]}-{name[:4]}"


def _header(variants: tuple[str, ...], graph: bool) -> str:
    labels = [_short(v) for v in variants]
    return (
        f"{'n':>6} "
        + " ".join(f"{c:>9}" for c in (*labels, "torch", "cub", "copy"))
        + " "
        + " ".join(f"{'x ' + c:>9}" for c in labels)
        + " "
        + " ".join(f"{'%DS ' + c[:2]:>7}" for c in labels)
        + f" {'copyTB/s':>8}"
        + ("  graph: " + "/".join((*labels, "torch", "cub")) if graph else "")
    )


def _line(row: dict, graph: bool, variants: tuple[str, ...] = VARIANTS) -> str:
    def med(key):
        return row.get(key, {}).get("median_ms")

    bad = [vid for vid in variants if not row.get(f"{vid}:ok")]
    s = (
        f"2^{row['log2n']:<4}"
        + " ".join(_us(med(k)) for k in (*variants, "torch.sum", "cupy.sum-cub", "copy"))
        + " "
        + " ".join(_f(row.get(f"{v}:x_best_peer"), ".3f", 9) for v in variants)
        + " "
        + " ".join(_f(_pct(row.get(f"{v}:frac_datasheet")), ".1f", 7) for v in variants)
        + f" {_f(_tb(row.get('copy_bytes_per_s')), '.3f', 8)}"
    )
    if graph and row["n"] <= GRAPH_MAX_N:
        g = [row.get(f"{k}:graph", {}).get("median_ms") for k in (*variants, *PEERS)]
        s += "  " + "/".join(f"{v * 1e3:.2f}" if isinstance(v, float) else "-" for v in g)
    if bad:
        s += "  WRONG/ERROR: " + ", ".join(f"{b} ({row.get(b + ':message', '')})" for b in bad)
    return s


def _pct(v):
    return v * 100 if isinstance(v, float) else None


def _tb(v):
    return v / 1e12 if isinstance(v, float) else None


def main(
    argv: list[str] | None = None, prog: str = "python -m harness.studies.fastest_bench"
) -> int:
    p = argparse.ArgumentParser(
        prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--json", required=True, help="where to write the results")
    p.add_argument("--dtypes", nargs="+", default=["float32", "int32"])
    p.add_argument("--min", type=int, default=10, help="smallest log2 n (default 10)")
    p.add_argument("--max", type=int, default=30, help="largest log2 n (default 30)")
    p.add_argument(
        "--variants",
        nargs="+",
        default=list(VARIANTS),
        help="variants timed beside the peers (default: the fastest pair)",
    )
    a = p.parse_args(argv)
    from harness.core import catalogue, device

    unknown = [v for v in a.variants if v not in catalogue.BY_ID or not catalogue.get(v).launch]
    if unknown:
        p.error(f"not a variant with a kernel: {', '.join(unknown)}")

    if not device.cupy_gpu()[0]:
        print(f"fastest_bench needs a GPU with CuPy: {device.cupy_gpu()[1]}", file=sys.stderr)
        return 2
    doc = bench(a.dtypes, a.min, a.max, variants=tuple(a.variants))
    documents.write_document(a.json, doc)
    results = doc["results"]
    bad = [r for r in results if r["variant"] in a.variants and not r["ok"]]
    print(f"\nwall {doc['wall_s']:.0f} s; triton configs: {doc['triton_configs']}")
    print(f"summary: {len(results)} records, {len(bad)} wrong/error")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
