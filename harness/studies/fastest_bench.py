"""Benchmark of the fastest variants against the peers, every power of two n, in one run.

    reduce-ladder fastest-bench --json out.json [--dtypes float32 int32] [--min 10 --max 30]
        [--variants cuda/fastest triton/fastest cuda/reproducible ...]
    (or python -m harness.studies.fastest_bench with the same options)

The suite "fastest" (harness.studies.suites; also `reduce-ladder bench fastest`): for each dtype
and n = 2^min .. 2^max, cuda/fastest and triton/fastest (autotuned here, at plan creation) or the
--variants named (any variant with a plan, e.g. family "reproducible"), beside peer/torch.sum,
peer/cupy.sum-cub (cupy.sum with dtype=x.dtype and CUB on) and peer/copy. Each sum is checked
against its golden first (harness.check.verify), then timed by harness.core.timing.time_ms (CUDA
events, warm-up, L2 flushed before every repetition, median) and for n <= 2^20 from a CUDA graph
(harness.core.timing.graph_ms: launch gaps left out).

Printed, per dtype: each one's device time (us) per n and its ratio to torch.sum (t(torch.sum) /
t: >= 1.00x at least as fast). Writes a ROWS document (harness.report.records.rows_document):
the device, the Triton configurations chosen, one row per timing (metric "total", "graph",
"call") of every variant and peer at each (dtype, n), the check beside it. Exit 1 when one of
the variants (not a peer) failed; the run itself is harness.studies.bench.run_suite's.
"""

from __future__ import annotations

import argparse
import sys

from harness.studies import bench, suites

VARIANTS = suites.FASTEST_DEFAULT


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
    found = suites.cases(
        "fastest",
        variants=[*a.variants, *suites.FASTEST_PEERS],
        dtypes=a.dtypes,
        sizes=[2**k for k in range(a.min, a.max + 1)],
    )
    return bench.run_suite("fastest", found, a.json, vars(a), counted=a.variants)


if __name__ == "__main__":
    sys.exit(main())
