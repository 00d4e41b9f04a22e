"""`python -m harness.studies.callable_bench [options]`: the older name of `reduce-ladder bench
callable`, kept working."""

import sys

from harness.studies import bench

if __name__ == "__main__":
    prog = "python -m harness.studies.callable_bench"
    sys.exit(bench.main(["callable", *sys.argv[1:]], prog=prog))
