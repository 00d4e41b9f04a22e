"""`python -m harness.studies.callable_bench [options]`: the older name of `reduce-ladder bench
callable`, kept working: it runs that command (a new process, the one command line)."""

import os
import sys

if __name__ == "__main__":
    os.execv(sys.executable, [sys.executable, "-m", "harness", "bench", "callable", *sys.argv[1:]])
