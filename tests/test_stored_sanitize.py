"""The stored sanitize documents: compute-sanitizer on every default kernel found 0 errors from
memcheck, synccheck and initcheck, no racecheck hazard outside the volatile warp-synchronous forms
(whose hazards are reported with their counts, not failed), and the seeds' two bugs as the tools
see them.

These tests read committed JSON only: each results/<device>/sanitize.json with the
sanitize-*.json documents beside it (later runs over variants added since, e.g.
sanitize-reproducible.json), read as one; and with REDUCE_LADDER_SANITIZE_JSON set to one sanitize
document or several joined by os.pathsep (benchmarks/gpu_profile.sh writes one), those too. Nothing
is sanitized here and no GPU is needed, so they run in CI. tests/test_gpu_sanitize.py runs the
sanitizer live and checks these same facts on what it finds.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.report import documents
from harness.studies import sanitize

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_IDS = [v.id for v in sanitize.select()]


def stored_documents() -> list[tuple[str, list[Path]]]:
    """(id, the files read as one document): each device folder's sanitize.json and the
    sanitize-*.json beside it, then the files REDUCE_LADDER_SANITIZE_JSON names (if any)."""
    found = []
    for main in sorted(ROOT.glob("results/*/sanitize.json")):
        found.append((main.parent.name, [main, *sorted(main.parent.glob("sanitize-*.json"))]))
    paths = os.environ.get("REDUCE_LADDER_SANITIZE_JSON")
    if paths:
        found.append((paths, [Path(p) for p in paths.split(os.pathsep)]))
    return found


def test_stored_sanitize_documents_are_committed():
    assert sorted(ROOT.glob("results/*/sanitize.json")), "no results/<device>/sanitize.json"


@pytest.fixture(scope="module", params=stored_documents(), ids=lambda p: p[0])
def doc(request) -> dict:
    return documents.merge_documents([json.loads(p.read_text()) for p in request.param[1]])


def by_variant(doc: dict) -> dict[str, dict]:
    return {r["variant"]: r for r in doc["variants"]}


def test_stored_sanitize_every_run_completed(doc):
    for run in doc["runs"]:
        assert run["complete"], f"{run['tool']} {run['batch']}: no summary line (see {run['log']})"


def test_stored_sanitize_default_kernels_have_no_errors(doc):
    results = by_variant(doc)
    assert set(DEFAULT_IDS) <= set(results), "not every default kernel was sanitized"
    for tool in ("memcheck", "synccheck", "initcheck"):
        found = {v: results[v]["tools"][tool] for v in DEFAULT_IDS}
        flagged = {v: r for v, r in found.items() if r["records"]}
        assert not flagged, (tool, flagged)
        kernels = [k for k in doc["kernels"] if k["tool"] == tool]
        stray = [k for k in kernels if k["variants"] == ["unattributed"]]
        assert not stray, (tool, stray)


def test_stored_sanitize_racecheck_hazards_only_in_the_volatile_forms(doc):
    results = by_variant(doc)
    racy = {v for v in DEFAULT_IDS if results[v]["tools"]["racecheck"]["records"]}
    assert racy <= sanitize.VOLATILE_SHARED, sorted(racy - sanitize.VOLATILE_SHARED)


def test_stored_sanitize_seed_004_early_return_is_flagged_by_memcheck(doc):
    r = by_variant(doc)["cuda/demo-004-gmem-early-return"]["tools"]["memcheck"]
    assert r["records"] > 0, "memcheck did not flag 004's early return on a partial tile"


def test_stored_sanitize_seed_000_barrier_in_divergent_if_is_not_seen_by_the_tools(doc):
    """What the hardware shows instead of the seed's lesson: on Hopper (first run on an H200,
    sm_90) none of memcheck, racecheck, synccheck and initcheck reports 000's `__syncthreads()`
    inside `if (tid % (2*i) == 0)`, and its sum is right. The CUDA programming guide calls a
    barrier in divergent code undefined; the tools do not catch this instance here, so the fix
    in cuda_kernels/interleaved.cu (the barrier outside the if) rests on the guide, not on a
    tool. If a later tool or GPU flags it, this test fails and the note must change."""
    tools = by_variant(doc)["cuda/demo-000-v1-sync-in-if"]["tools"]
    assert {t: tools[t]["records"] for t in tools} == {t: 0 for t in tools}


# Every fact above, for tests/test_gpu_sanitize.py to check on what the sanitizer finds live.
FACTS: dict[str, Callable[[dict], None]] = {
    name.removeprefix("test_stored_sanitize_"): f
    for name, f in list(globals().items())
    if name.startswith("test_stored_sanitize_") and not name.endswith("_documents_are_committed")
}
