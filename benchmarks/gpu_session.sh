#!/usr/bin/env bash
# Everything GPU-side in one call on the lent machine (see ../shared/GPU.md):
#   environment -> the whole test suite -> the timed ladder (and whatever STEPS names).
# Files land under $OUT (at most 8 files come back); the last lines printed are the summary.
# Usage: OUT=dir bash benchmarks/gpu_session.sh [steps...]   steps: env tests ladder seed004 bench
# LADDER_DTYPES (default "float32 int32"): the dtypes the ladder step runs.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
steps=${*:-env tests ladder seed004}
status=0
for step in $steps; do
  case $step in
    env)
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
      python3 -c "import torch, triton, cupy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__, torch.cuda.get_device_name())"
      ;;
    tests)
      python3 -m pytest -q -p no:cacheprovider --junitxml="$OUT/junit.xml" -x --maxfail=20 \
        > "$OUT/pytest.log" 2>&1 || status=1
      tail -n 25 "$OUT/pytest.log"
      ;;
    ladder)
      for dt in ${LADDER_DTYPES:-float32 int32}; do
        python3 -m harness run --dtype "$dt" --quiet --json "$OUT/ladder-$dt.json" \
          > "$OUT/ladder-$dt.txt" 2>&1 || status=1
        tail -n 60 "$OUT/ladder-$dt.txt"
      done
      ;;
    seed004)
      # Seed 004's effective-bandwidth table at 16M ints: its kernels, their Triton twins and the
      # peers in one run. One file ($OUT/seed004.json); the table is printed (Markdown last).
      # Then, on the dev machine: python3 benchmarks/seed_table.py seed004.json --results results
      python3 -m harness run --seed 004 --dtype int32 --sizes 2^24 --quiet \
        --json "$OUT/seed004.json" > "$OUT/.seed004.txt" 2>&1 || status=1
      tail -n 45 "$OUT/.seed004.txt"; rm -f "$OUT/.seed004.txt"
      ;;
    bench)
      python3 -m pytest benchmarks/ -q -p no:cacheprovider --benchmark-enable \
        --benchmark-json="$OUT/bench.json" > "$OUT/bench.log" 2>&1 || status=1
      tail -n 15 "$OUT/bench.log"
      ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
done
echo "gpu_session status=$status"
exit $status
