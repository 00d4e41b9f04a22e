"""`python -m harness.studies.callable_bench [options]`: the older name of `reduce-ladder bench
callable`, kept working."""

import sys

from harness.studies import bench


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    return bench.main(["callable", *argv], prog="python -m harness.studies.callable_bench")


if __name__ == "__main__":
    sys.exit(main())
