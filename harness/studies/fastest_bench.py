"""The fastest pair against torch.sum, cupy.sum (CUB) and the copy, n = 2^min .. 2^max: the suite
"fastest" (`reduce-ladder bench fastest`) under its older command and options.

    reduce-ladder fastest-bench --json out.json [--dtypes float32 int32] [--min 10 --max 30]
        [--variants cuda/fastest triton/fastest cuda/reproducible ...]

Writes the suite's ROWS document and prints its table per dtype; exit 1 when one of --variants
(not a peer) failed.
"""

from __future__ import annotations

import argparse
import sys

from harness.studies import bench, suites


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
    default = list(suites.FASTEST_DEFAULT)
    p.add_argument("--variants", nargs="+", default=default, help="default: the fastest pair")
    a = p.parse_args(argv)
    from harness.core import catalogue, device

    if bad := [v for v in a.variants if v not in catalogue.BY_ID or not catalogue.get(v).launch]:
        p.error(f"not a variant with a kernel: {', '.join(bad)}")
    if not device.cupy_gpu()[0]:
        print(f"fastest_bench needs a GPU with CuPy: {device.cupy_gpu()[1]}", file=sys.stderr)
        return 2
    ns = [2**k for k in range(a.min, a.max + 1)]
    found = suites.cases(
        "fastest", variants=[*a.variants, *suites.FASTEST_PEERS], dtypes=a.dtypes, sizes=ns
    )
    return bench.run_suite("fastest", found, a.json, vars(a), counted=a.variants)


if __name__ == "__main__":
    sys.exit(main())
