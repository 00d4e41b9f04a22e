#!/usr/bin/env bash
# One sum across K GPUs on NCCL (docs/several-gpus.md), on a machine of several GPUs
# (nvidia-h200-x4; nvidia-h200-x2 runs the same with GPUS="1 2"). One call of at most 10
# minutes; every step writes its own file under $OUT/files, so a step can be run again alone:
#   OUT=dir bash benchmarks/gpu_distributed.sh [steps...]
#   default steps: env tests weak strong sweep big render   (about 5 minutes in all, estimated)
# Each launch spawns K processes (import torch, CUDA and NCCL init, the local kernel's compile:
# estimated 10-15 s) before any timing; the estimates below count that.
#   env     nvidia-smi, topology, versions                                         (~5 s)
#   tests   tests/test_gpu_distributed.py + tests/test_distributed.py (gloo)       (~60-75 s)
#   two-gpus  tests/test_gpu_two_devices.py: one process, every cached family on
#           cuda:1 with cuda:0 current and the reverse (not in the default steps)  (~2-3 min)
#   weak    K = 1, 2, 4; 2^30 float32 per GPU; both combines; the scalar combine     (~45 s)
#   strong  K = 1, 2, 4; 2^32 float32 in total; both combines                      (~45 s)
#   sweep   all_reduce of 2^10..2^28 float32 (nccl-tests' algbw / busbw), K = 2, 4  (~30 s)
#   big     2^36 float32 on 4 GPUs (2^34 = 64 GiB per GPU), checked exact          (~40 s)
#   render  the pooled table -> files/report/, files/distributed.json             (~5 s)
# Then, on the dev machine: unpack session.tgz; commit files/distributed.json and
# files/report/distributed.md (and the step files, the logs) under results/<device>-x4/.
# Steps run in separate calls come back in separate archives: render needs no GPU, so pool them
# there:  reduce-ladder distributed --render DIR/distributed-*.json --out DIR/report \
#             --json DIR/distributed.json
# Each .txt is the command's stdout, the tables (tests/test_result_files.py regenerates it from
# the JSON beside it); progress and failures go to files/distributed-progress.log too.
# NVLink multicast stays off: the launcher sets NCCL_NVLS_ENABLE=0,
# TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 for every rank (exported here too).
set -uo pipefail
OUT=${OUT:-out}
F="$OUT/files"
mkdir -p "$F"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
present=$(nvidia-smi -L 2>/dev/null | wc -l)
# The K values run: 1, 2, 4 where present (GPUS overrides, e.g. GPUS="1 2").
GPUS=${GPUS:-$(for k in 1 2 4; do [ "$k" -le "$present" ] && printf '%s ' "$k"; done)}
KS=$(echo $GPUS | tr ' ' ',')
MULTI=$(for k in $GPUS; do [ "$k" -gt 1 ] && printf '%s,' "$k"; done | sed 's/,$//')
steps=${*:-env tests weak strong sweep big render}
status=0
note() { echo "== $* ($(date +%T))"; }
# stdout (the tables) to the step's .txt; stderr (progress, a failure) to the console and the log
dist() { python3 -m harness distributed "$@" 2> >(tee -a "$F/distributed-progress.log" >&2); }
for step in $steps; do
  case $step in
    env)
      nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv | tee "$F/env.txt"
      nvidia-smi topo -m >> "$F/env.txt" 2>&1
      python3 -c "import torch; print('torch', torch.__version__, 'nccl', torch.cuda.nccl.version(), 'gpus', torch.cuda.device_count())" \
        | tee -a "$F/env.txt"
      ;;
    tests)
      note "distributed tests: NCCL across GPUs, and the gloo CPU path"
      python3 -m pytest -q -p no:cacheprovider tests/test_gpu_distributed.py \
        tests/test_distributed.py > "$F/pytest-distributed.log" 2>&1 || status=1
      tail -n 6 "$F/pytest-distributed.log"
      ;;
    two-gpus)
      note "one process, two GPUs: reduce_sum and the op on either with the other current"
      python3 -m pytest -q -p no:cacheprovider -rA tests/test_gpu_two_devices.py \
        > "$F/pytest-two-gpus.log" 2>&1 || status=1
      tail -n 8 "$F/pytest-two-gpus.log"
      ;;
    weak)
      note "weak scaling, 2^30 per GPU, K = $KS"
      dist --gpus "$KS" --scaling weak --sizes 2^30 --json "$F/distributed-weak.json" \
        > "$F/distributed-weak.txt" || status=1
      grep -E "^\| weak|WRONG" "$F/distributed-weak.txt"
      ;;
    strong)
      note "strong scaling, 2^32 in total, K = $KS"
      dist --gpus "$KS" --scaling strong --sizes 2^32 --combine-calls 0 --json "$F/distributed-strong.json" \
        > "$F/distributed-strong.txt" || status=1
      grep -E "^\| strong|WRONG" "$F/distributed-strong.txt"
      ;;
    sweep)
      [ -n "$MULTI" ] || { echo "sweep: needs 2 GPUs"; continue; }
      note "all_reduce sweep 2^10..2^28, K = $MULTI"
      dist --gpus "$MULTI" --sweep --combine-calls 0 --json "$F/distributed-sweep.json" \
        > "$F/distributed-sweep.txt" || status=1
      grep -E "^\| [0-9]|WRONG" "$F/distributed-sweep.txt" | tail -n 45
      ;;
    big)
      [ "$present" -ge 4 ] || { echo "big: needs 4 GPUs ($present present)"; continue; }
      note "2^36 float32 on 4 GPUs (2^34 per GPU)"
      dist --gpus 4 --scaling weak --sizes 2^34 --reps 5 --combine-calls 0 \
        --json "$F/distributed-2e36.json" > "$F/distributed-2e36.txt" || status=1
      grep -E "^\| weak|WRONG" "$F/distributed-2e36.txt"
      ;;
    render)
      note "the pooled table"
      mkdir -p "$F/report"
      ls "$F"/distributed-*.json > /dev/null 2>&1 || { echo "render: no step files"; continue; }
      dist --render "$F"/distributed-*.json --out "$F/report" --json "$F/distributed.json" \
        > "$F/distributed.txt" || status=1
      cat "$F/distributed.txt" | tail -n 80
      ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
done
wait  # the last tee of stderr
tar czf "$OUT/session.tgz" -C "$OUT" files && rm -rf "$F"
echo "gpu_distributed status=$status"
exit $status
