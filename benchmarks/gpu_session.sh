#!/usr/bin/env bash
# Everything GPU-side in one call on the lent machine (see ../shared/GPU.md):
#   environment -> the whole test suite -> the timed ladder -> ... (the steps named).
# The one-off experiments (experiments/README.md) run as python -m experiments.NAME.
# Every file is written under $OUT/files and packed into $OUT/session.tgz at the end (the device
# tool brings back at most 8 files); unpack it into results/<device>/ and commit what was measured.
# Usage: OUT=dir bash benchmarks/gpu_session.sh [steps...]   (default: env tests ladder demos seed004)
#   host: seed 001's study (reduce-ladder host: ~1-2 min on an H100) -> host.json, archive/host.txt
# LADDER_DTYPES (default "float32 int32"): the dtypes the ladder step runs.
#   fastest-tests: the fastest variants' tests only; fastest: reduce-ladder fastest-bench (~2-3 min)
#   fastest-dtypes: the same for float16 bfloat16 float64; ablation: reduce-ladder ablation
#     (the alias of python -m experiments.fastest_ablation)
#   sanitize-repro: compute-sanitizer on cuda/ and triton/reproducible (~1 min)
#   hopper: cuda/fastest's loads with Hopper's cache qualifiers and the TMA bulk copy (~1 min;
#     python -m experiments.hopper_loads)
#   inductor: what torch.compile writes for the sum (static / dynamic / coop) and its time at
#             2^10, 2^20, 2^28 -> inductor/ (inductor.json, inductor-*.py), into results/<device>/
#   callable: per call from Python (the suite "callable": reduce_sum, out= and the torch op for every
#     variant, plans, launch modes, torch.sum, CUB, torch.compile), float32 int32 bfloat16,
#     n = 2^10..2^30 even (CALLABLE_OPTS narrows it: the whole default is long) plus the
#     plan-cache / op GPU tests -> callable.json, archive/callable.txt, pytest-callable.log; and (issue
#     14) the Python call path's profile (~20 s; experiments.call_profile) -> archive/call-profile.txt/.json,
#     the small-n sweep of cuda/fastest's two paths beside CUB / torch.sum at 2^10..2^16 (~20 s;
#     experiments.small_n_sweep) -> archive/small-n.txt/.json.
#     Whole step ~5 min estimated (the bench ~3, the GPU tests ~1).
#   callable-docs: the three per-call documents the report reads (~6 min): callable-families.json
#     (the pairs, one multi-pass variant a backend and the peers, --rounds 3, every n),
#     callable-ladder.json (every variant, n = 2^10..2^30 by 16x) and callable-native.json (the
#     same, REDUCE_LADDER_NATIVE=1), with their captures in archive/
#   accuracy: every float32 variant and the peers on the accuracy battery at 2^20 and 2^25, ulps vs
#     the exact sum, and the reproducible variants' bits over the fixed inputs (~2-3 min
#     estimated: ~1 min of CPU-side data and exact sums, Triton compiles, ~1 min of GPU tests)
#     -> accuracy.json, reproducible.json, archive/accuracy.txt, pytest-accuracy.log
#   repro: family "reproducible" (issue 18): its GPU tests (bits: CUDA == Triton == the numpy model,
#     grid sweep, streams, views) then fastest-bench of cuda/ + triton/reproducible beside torch.sum,
#     CUB and copy, float32 bfloat16, n = 2^10..2^30 (~5 min estimated) -> pytest-repro.log,
#     repro-bench.json, archive/repro-bench.txt (per n: times and "x" = best of CUB/torch.sum / variant)
#   repro-sweep: cuda/reproducible's block / UNROLL / per_sm and Triton's warps / stages / per_sm
#     at 2^24, 2^28, 2^30 float32 (~2 min estimated; experiments.reproducible_sweep)
#     -> repro-sweep.json, archive/repro-sweep.txt
set -uo pipefail
OUT=${OUT:-out}
F="$OUT/files"
mkdir -p "$F" "$F/archive"  # archive/: console captures, kept, never regenerated
# A caller's PYTHONPATH is kept after the tree (e.g. /tmp/site with the cuda-cccl wheel).
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
steps=${*:-env tests ladder demos seed004}
status=0
note() { echo "== $*"; }
for step in $steps; do
  case $step in
    env)
      nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv \
        | tee "$F/env.txt"
      python3 -c "import torch, triton, cupy; print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__, torch.cuda.get_device_name())" \
        | tee -a "$F/env.txt"
      python3 -c "from harness.launch import peers as p; print('cuda.compute:', p.cccl_unavailable_reason() or 'importable')" \
        | tee -a "$F/env.txt"
      ;;
    tests)
      note "pytest (whole suite)"
      python3 -m pytest -q -p no:cacheprovider --junitxml="$F/junit.xml" \
        > "$F/pytest-gpu.log" 2>&1 || status=1
      tail -n 12 "$F/pytest-gpu.log"
      ;;
    ladder)
      for dt in ${LADDER_DTYPES:-float32 int32}; do
        note "ladder $dt"
        python3 -m harness run --all --dtype "$dt" --quiet --json "$F/ladder-$dt.json" \
          > "$F/archive/ladder-$dt.txt" 2>&1 || status=1
        grep -E "^summary|WRONG|ERROR" "$F/archive/ladder-$dt.txt" | head -20
      done
      ;;
    demos)
      note "wrong demonstrations (run on request; their verdict is reported, not asserted)"
      python3 -m harness check --include-wrong --quiet \
        --variants cuda/v5-wrong-nosync cuda/v5-wrong-novolatile cuda/v5-volatile-split \
        --sizes 2^10 2^20 2^25 --json "$F/demos.json" > "$F/archive/demos.txt" 2>&1 || status=1
      grep -E "wrong demonstration" "$F/archive/demos.txt"
      ;;
    host)
      note "seed 001: end to end from host memory (table 2^11..2^30, stream sweep, adversarial)"
      python3 -m harness host --quiet --json "$F/host.json" > "$F/archive/host.txt" 2>&1 || status=1
      grep -E "^finding|^host study" "$F/archive/host.txt"
      ;;
    seed004)
      # Seed 004's effective-bandwidth table at 16M ints: its kernels, their Triton twins and the
      # peers in one run. One file ($OUT/seed004.json); the table is printed (Markdown last).
      # Then, on the dev machine: python3 benchmarks/seed_table.py seed004.json --results results
      note "seed 004 table"
      python3 -m harness run --all --study 004 --dtype int32 --sizes 2^24 --quiet \
        --json "$F/seed004.json" > "$F/archive/seed004.txt" 2>&1 || status=1
      tail -n 30 "$F/archive/seed004.txt"
      ;;
    fastest-tests)
      note "fastest variants: correctness on the GPU"
      python3 -m pytest -q -p no:cacheprovider tests/test_fastest.py tests/test_gpu_fastest.py \
        > "$F/pytest-fastest.log" 2>&1 || status=1
      tail -n 8 "$F/pytest-fastest.log"
      ;;
    fastest)
      note "fastest vs torch.sum / cupy.sum (CUB) / copy, n = 2^10..2^30, float32 int32"
      CUPY_ACCELERATORS=cub python3 -m harness fastest-bench --json "$F/fastest.json" \
        > "$F/archive/fastest.txt" 2>&1 || status=1
      tail -n 52 "$F/archive/fastest.txt"
      ;;
    ablation)
      note "fastest: what each design choice buys, and the launch probe (float32)"
      CUPY_ACCELERATORS=cub python3 -m harness ablation --json "$F/fastest-ablation.json" \
        > "$F/archive/fastest-ablation.txt" 2>&1 || status=1
      tail -n 80 "$F/archive/fastest-ablation.txt"
      ;;
    fastest-dtypes)
      note "fastest vs peers, float16 bfloat16 float64"
      CUPY_ACCELERATORS=cub python3 -m harness fastest-bench --dtypes float16 bfloat16 float64 \
        --json "$F/fastest-more-dtypes.json" > "$F/archive/fastest-more-dtypes.txt" 2>&1 || status=1
      grep -E "^2\^|summary|dtype|WRONG" "$F/archive/fastest-more-dtypes.txt" | cut -c1-100 | tail -n 70
      ;;
    callable)
      note "plan cache, torch op: GPU tests"
      python3 -m pytest -q -p no:cacheprovider tests/test_plan_cache.py tests/test_torch_op.py \
        tests/test_gpu_callable.py > "$F/pytest-callable.log" 2>&1 || status=1
      tail -n 8 "$F/pytest-callable.log"
      note "the Python call path: steps, per call, cProfile (cuda/fastest, float32 2^10)"
      python3 -m experiments.call_profile --json "$F/call-profile.json" \
        > "$F/archive/call-profile.txt" 2>&1 || status=1
      head -n 24 "$F/archive/call-profile.txt"
      note "small n: cuda/fastest's one-block kernel vs its multi-block kernel, CUB, torch.sum"
      CUPY_ACCELERATORS=cub python3 -m experiments.small_n_sweep --dtypes float32 int32 \
        bfloat16 --json "$F/small-n.json" > "$F/archive/small-n.txt" 2>&1 || status=1
      cut -c1-200 "$F/archive/small-n.txt" | tail -n 24
      note "per call from Python: every variant reduce_sum takes, out=, the op, vs the peers"
      # CALLABLE_OPTS narrows the suite (e.g. "--variants cuda/fastest triton/fastest
      # cuda/reproducible"): its default, every family's variants, is a long run.
      CUPY_ACCELERATORS=cub python3 -m harness bench callable ${CALLABLE_OPTS:-} \
        --json "$F/callable.json" > "$F/archive/callable.txt" 2>&1 || status=1
      tail -n 40 "$F/archive/callable.txt"
      ;;
    callable-docs)
      # the three per-call documents the report reads (--callable, in this order; ~6 min)
      note "per call: the pairs and one multi-pass variant a backend, 3 rounds, every n"
      CUPY_ACCELERATORS=cub python3 -m harness bench callable --rounds 3 --variants cuda/fastest \
        triton/fastest cuda/reproducible triton/reproducible cuda/v8-shuffle-chunked \
        triton/chunked-1024 torch.sum 'torch.sum out=' cupy.sum-cub 'torch.compile sum' \
        --json "$F/callable-families.json" > "$F/archive/callable-families.txt" 2>&1 || status=1
      note "per call: every variant, the default launch, then the native one"
      sizes="2^10 2^14 2^18 2^22 2^26 2^30"
      CUPY_ACCELERATORS=cub python3 -m harness bench callable --sizes $sizes \
        --json "$F/callable-ladder.json" > "$F/archive/callable-ladder.txt" 2>&1 || status=1
      REDUCE_LADDER_NATIVE=1 CUPY_ACCELERATORS=cub python3 -m harness bench callable --sizes $sizes \
        --json "$F/callable-native.json" > "$F/archive/callable-native.txt" 2>&1 || status=1
      tail -n 3 "$F/archive/callable-native.txt"
      ;;
    accuracy)
      note "accuracy: ulps vs the exact sum; the reproducible variants' bits"
      CUPY_ACCELERATORS=cub python3 -m harness accuracy --json "$F/accuracy.json" \
        --reproducible-json "$F/reproducible.json" > "$F/archive/accuracy.txt" 2>&1 || status=1
      grep -E "^n=|FAILED" "$F/archive/accuracy.txt" | tail -n 24
      python3 -m pytest -q -p no:cacheprovider -rs tests/test_gpu_accuracy.py \
        > "$F/pytest-accuracy.log" 2>&1 || status=1
      tail -n 8 "$F/pytest-accuracy.log"
      ;;
    repro)
      note "reproducible family: GPU tests"
      python3 -m pytest -q -p no:cacheprovider tests/test_reproducible.py \
        tests/test_gpu_reproducible.py > "$F/pytest-repro.log" 2>&1 || status=1
      tail -n 8 "$F/pytest-repro.log"
      note "reproducible vs torch.sum / cupy.sum (CUB) / copy: x = best peer / variant"
      CUPY_ACCELERATORS=cub python3 -m harness fastest-bench --dtypes float32 bfloat16 \
        --variants cuda/reproducible triton/reproducible --json "$F/repro-bench.json" \
        > "$F/archive/repro-bench.txt" 2>&1 || status=1
      grep -E "^2\^|^ +n |dtype|summary|WRONG" "$F/archive/repro-bench.txt" | tail -n 50
      ;;
    repro-sweep)
      note "reproducible: shapes at 2^24, 2^28, 2^30 (float32)"
      CUPY_ACCELERATORS=cub python3 -m experiments.reproducible_sweep \
        --json "$F/repro-sweep.json" > "$F/archive/repro-sweep.txt" 2>&1 || status=1
      tail -n 50 "$F/archive/repro-sweep.txt"
      ;;
    bench)
      # The suite "sweep": every non-wrong variant and the peers, float32 and int32, log2 n =
      # 10..28 (even, and 25); BENCH_SUITE picks another suite (harness.studies.suites), a -k
      # expression narrows it ("sweep and int32"); REDUCE_BENCH_SIZES / _ROUNDS replace the sizes
      # and the rounds (benchmarks/conftest.py).
      python3 -m pytest benchmarks/ -k "${BENCH_SUITE:-sweep}" -q -p no:cacheprovider --benchmark-enable \
        --benchmark-timer=harness.core.timing.sync_perf_counter --benchmark-sort=name \
        --benchmark-columns=median,iqr,rounds --benchmark-json="$F/bench.json" \
        > "$F/bench.log" 2>&1 || status=1
      note "pytest-benchmark suite"
      grep -E "passed|failed|error" "$F/bench.log" | tail -n 5
      ;;
    sanitize-repro)
      # compute-sanitizer (all four tools) on the reproducible pair, added after the committed
      # sanitize.json (~1 min estimated) -> sanitize-reproducible.json, its raw logs. The tests
      # step reads both when REDUCE_LADDER_SANITIZE_JSON names both (joined by ':').
      note "compute-sanitizer: the reproducible pair"
      python3 -m harness sanitize --variants cuda/reproducible triton/reproducible \
        --json "$F/sanitize-reproducible.json" --raw "$F/sanitize-reproducible-raw" \
        > "$F/archive/sanitize-reproducible.txt" 2>&1 || status=1
      tail -n 12 "$F/archive/sanitize-reproducible.txt"
      ;;
    hopper)
      # Hopper's memory paths on cuda/fastest (cache qualifiers, the 1-D bulk copy), float32,
      # 2^24..2^30 beside CUB and torch.sum (~1 min) -> hopper-loads.json / .txt
      # (experiments/hopper_loads/README.md)
      note "Hopper memory paths (issue 14)"
      CUPY_ACCELERATORS=cub python3 -m experiments.hopper_loads --json "$F/hopper-loads.json" \
        > "$F/archive/hopper-loads.txt" 2>&1 || status=1
      tail -n 60 "$F/archive/hopper-loads.txt"
      ;;
    inductor)
      note "Inductor's Triton for the 1-D sum: static, dynamic (recompile path), coop"
      python3 -m experiments.inductor_code --out "$F/inductor" > "$F/archive/inductor.txt" 2>&1 \
        || status=1
      tail -n 14 "$F/archive/inductor.txt"
      ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
done
tar czf "$OUT/session.tgz" -C "$OUT" files && rm -rf "$F"
echo "gpu_session status=$status"
exit $status
