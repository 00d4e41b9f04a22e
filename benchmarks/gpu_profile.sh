#!/usr/bin/env bash
# Issue 17 on the lent GPU machine, in one call: hardware counters (Nsight Compute) and
# compute-sanitizer, then the GPU tests on what was just measured. Budget: under 8 minutes on an
# H100 (each variant's passes profiled ONCE; the sanitizer at n = 1000 and 2^12 + 3).
#   profile   float32 ladder + Triton twins + fastest pair + peers at n = 2^24
#   seed004   seed 004's kernels and their twins at 16M int32
#   fastest28 the fastest pair at n = 2^28 (the >= 90% of DRAM peak lesson)
#   sanitize  every default kernel under memcheck / racecheck / synccheck / initcheck, plus the
#             wrong demonstrations and the seeds' bugs (--include-wrong)
#   tests     tests/test_stored_profile.py and tests/test_stored_sanitize.py on the documents above
#   render    profile.md (seed tables, counters per stage) and the counters plot
# Usage: OUT=dir bash benchmarks/gpu_profile.sh [steps...]   (default: all, in that order)
# Writes $OUT/files/: profile.json (merged), profile-raw/ (.ncu-rep, CSV exports, ncu logs),
# sanitize.json, archive/sanitize-raw.txt (every tool's log, concatenated), sanitize-raw/, pytest logs,
# render/; packs them into $OUT/profile.tgz; prints a short summary last.
# Without ncu / compute-sanitizer / readable counters a step prints one line and the script
# goes on (status 2 at the end).
set -uo pipefail
OUT=${OUT:-out}
F="$OUT/files"
mkdir -p "$F" "$F/archive"  # archive/: console captures, kept, never regenerated
F=$(cd "$F" && pwd)  # absolute: the tests step exports paths to its files
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
steps=${*:-profile seed004 fastest28 sanitize tests render}
status=0
note() { echo "== $* ($(date +%T))"; }
keep() { local rc=$1; if [ "$rc" -ne 0 ] && [ "$status" -ne 2 ]; then status=$rc; fi; }
SEED004_IDS="cuda/004-gmem cuda/004-smem cuda/004-gmem-unroll4 cuda/004-smem-unroll4 \
cuda/004-smem-dyn cuda/004-smem-unroll4-dyn triton/tile-256 triton/quad-adjacent-256"
parts=()
# profile.json: the documents this call measured, merged (runs and results in order)
merge_profile() {
  local existing=() p
  for p in ${parts[@]+"${parts[@]}"}; do [ -f "$p" ] && existing+=("$p"); done
  [ ${#existing[@]} -gt 0 ] || return 0
  python3 -c "import json, sys; from harness.report.documents import merge_documents, write_document; \
write_document(sys.argv[1], merge_documents([json.load(open(p)) for p in sys.argv[2:]]))" \
    "$F/profile.json" "${existing[@]}" || keep 1
}
for step in $steps; do
  case $step in
    profile)
      note "ncu: float32 ladder, twins, fastest pair, peers at 2^24"
      python3 -m harness profile --dtype float32 --sizes 2^24 \
        --json "$F/profile-float32-2_24.json" --raw "$F/profile-raw" 2>&1 | tail -n 60
      keep "${PIPESTATUS[0]}"; parts+=("$F/profile-float32-2_24.json")
      ;;
    seed004)
      note "ncu: seed 004 at 16M int32"
      # shellcheck disable=SC2086
      python3 -m harness profile --dtype int32 --sizes 2^24 --variants $SEED004_IDS \
        --json "$F/profile-int32-2_24.json" --raw "$F/profile-raw" 2>&1 | tail -n 20
      keep "${PIPESTATUS[0]}"; parts+=("$F/profile-int32-2_24.json")
      ;;
    fastest28)
      note "ncu: fastest pair at 2^28"
      python3 -m harness profile --dtype float32 --sizes 2^28 --variants cuda/fastest triton/fastest \
        --json "$F/profile-float32-2_28.json" --raw "$F/profile-raw" 2>&1 | tail -n 8
      keep "${PIPESTATUS[0]}"; parts+=("$F/profile-float32-2_28.json")
      ;;
    sanitize)
      note "compute-sanitizer: every default kernel, the wrong demonstrations, the seed bugs"
      python3 -m harness sanitize --include-wrong --json "$F/sanitize.json" \
        --raw "$F/sanitize-raw" > "$F/archive/sanitize.txt" 2>&1
      keep $?
      tail -n 80 "$F/archive/sanitize.txt"
      for f in "$F"/sanitize-raw/*.txt; do [ -f "$f" ] && { echo "##### $(basename "$f")"; cat "$f"; }; done \
        > "$F/archive/sanitize-raw.txt"
      ;;
    tests)
      note "the stored-document tests on the measured documents"
      merge_profile
      # only the test files whose document this call measured (they read it beside the committed ones)
      files=()
      if [ -f "$F/profile.json" ]; then
        export REDUCE_LADDER_PROFILE_JSON="$F/profile.json"; files+=(tests/test_stored_profile.py)
      fi
      if [ -f "$F/sanitize.json" ]; then
        export REDUCE_LADDER_SANITIZE_JSON="$F/sanitize.json"; files+=(tests/test_stored_sanitize.py)
      fi
      if [ ${#files[@]} -eq 0 ]; then echo "tests: no document measured in this call"; continue; fi
      python3 -m pytest -q -p no:cacheprovider "${files[@]}" \
        --junitxml="$F/junit-profile.xml" > "$F/pytest-profile.log" 2>&1 || keep 1
      tail -n 15 "$F/pytest-profile.log"
      ;;
    render)
      merge_profile
      [ -f "$F/profile.json" ] || { echo "render: no profile measured in this call"; continue; }
      python3 -m harness profile --render "$F/profile.json" --out "$F/render" || keep 1
      ;;
    *) echo "unknown step $step"; status=2 ;;
  esac
done
merge_profile
note "summary"
python3 - "$F" <<'PY'
import json, sys
from pathlib import Path
f = Path(sys.argv[1])
if (f / "profile.json").is_file():
    from harness.report.profile_tables import terminal_summary
    doc = json.loads((f / "profile.json").read_text())
    print(terminal_summary(doc))
    print("NVTX attribution:", sorted({r["nvtx_check"][:40] for r in doc["runs"]}))
if (f / "sanitize.json").is_file():
    doc = json.loads((f / "sanitize.json").read_text())
    from collections import Counter
    print("sanitize verdicts:", dict(Counter(r["verdict"].split(":")[0] for r in doc["variants"])))
    for r in doc["variants"]:
        if r["verdict"] != "clean":
            print(f"  {r['variant']:<36} {r['verdict']}")
PY
tar czf "$OUT/profile.tgz" -C "$OUT" files && rm -rf "$F"
echo "gpu_profile status=$status"
exit $status
