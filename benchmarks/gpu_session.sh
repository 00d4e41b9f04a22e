#!/usr/bin/env bash
# Everything GPU-side in one call on the lent machine (see ../shared/GPU.md):
#   environment -> the whole test suite -> the timed ladder (and whatever STEPS names).
# Files land under $OUT (at most 8 files come back); the last lines printed are the summary.
# Usage: OUT=dir bash benchmarks/gpu_session.sh [steps...]   steps: env tests ladder bench report
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
steps=${*:-env tests ladder}
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
      for dt in ${LADDER_DTYPES:-float32}; do
        python3 -m harness run --dtype "$dt" --quiet --json "$OUT/ladder-$dt.json" \
          > "$OUT/ladder-$dt.txt" 2>&1 || status=1
        tail -n 60 "$OUT/ladder-$dt.txt"
      done
      ;;
    bench)
      # Every non-wrong variant and the peers, every catalogue dtype, log2 n = 10..28 (even, and
      # 25). Narrow with REDUCE_BENCH_SIZES / _DTYPES / _VARIANTS / _ROUNDS (benchmarks/conftest.py).
      python3 -m pytest benchmarks/ -q -p no:cacheprovider --benchmark-enable \
        --benchmark-timer=harness.timing.sync_perf_counter --benchmark-sort=name \
        --benchmark-columns=median,iqr,rounds --benchmark-json="$OUT/bench.json" \
        > "$OUT/bench.log" 2>&1 || status=1
      grep -E "passed|failed|error" "$OUT/bench.log" | tail -n 5
      ;;
    report)
      # Render every JSON under $OUT into one tarball (the report also renders on any machine:
      # python3 -m harness report $OUT/bench.json --out DIR).
      for f in "$OUT"/bench.json "$OUT"/ladder-*.json; do
        [ -s "$f" ] || continue
        name=$(basename "$f" .json)
        python3 -m harness report "$f" --out "$OUT/report-$name" > "$OUT/report-$name.txt" 2>&1 \
          || status=1
        tail -n 40 "$OUT/report-$name.txt"
        tar -C "$OUT" -czf "$OUT/report-$name.tar.gz" "report-$name" "report-$name.txt" \
          && rm -rf "$OUT/report-$name" "$OUT/report-$name.txt"
      done
      ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
done
echo "gpu_session status=$status"
exit $status
