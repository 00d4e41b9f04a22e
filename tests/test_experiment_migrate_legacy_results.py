"""experiments/migrate_legacy_results: the old fastest bench's side-by-side rows become records as
its reader made them; a legacy folder is rewritten in the current formats with the very records
and rows (times, checks, the header) the old readers made, and a second run changes nothing;
every committed result file is in a current format already."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from experiments.migrate_legacy_results import experiment as migrate
from experiments.migrate_legacy_results import legacy_record
from harness.core import catalogue
from harness.core.timing import Timing
from harness.report import documents, records

ROOT = Path(__file__).resolve().parents[1]
T = {"median_ms": 0.5, "min_ms": 0.4, "p10_ms": 0.45, "p90_ms": 0.55, "reps": 5}


def test_fastest_bench_rows_become_records():
    row = {
        "dtype": "bfloat16",
        "n": 1024,
        "bytes_read": 2048,
        "cuda/fastest:ok": True,
        "cuda/fastest": T,
        "triton/fastest:ok": False,
        "triton/fastest:message": "|result - golden| = 1 > tolerance 0",
        "triton/fastest": T,
        "torch.sum": T,
        "cupy.sum-cub": {"error": "peer/cupy.sum-cub cannot take bfloat16: TypeError: no"},
        "copy": T,
        "cuda/fastest:graph": {"error": "RuntimeError: capture"},
    }
    got = {r.variant: r for r in migrate.fastest_bench_records(row, "GPU")}
    assert list(got) == [
        "cuda/fastest",
        "triton/fastest",
        "peer/torch.sum",
        "peer/cupy.sum-cub",
        "peer/copy",
    ]
    assert got["cuda/fastest"].ok and got["cuda/fastest"].extra["graph_error"]
    assert got["triton/fastest"].status == "wrong"  # checked, wrong, still timed
    assert got["peer/cupy.sum-cub"].status == "error" and got["peer/cupy.sum-cub"].total is None
    assert got["peer/copy"].extra["bytes_read"] == 2048 and got["peer/copy"].device == "GPU"


def _legacy_folder(root: Path) -> dict[str, list[dict]]:
    """results/gpu/ with a file of each legacy family (fastest-bench/1, host/1, run/2,
    callable/1); the records the old readers made of each, by name."""
    folder = root / "results" / "gpu"
    folder.mkdir(parents=True)
    device = {"name": "GPU", "torch": "2.11"}
    row = {"dtype": "float32", "n": 1024, "bytes_read": 4096, "cuda/fastest:ok": True,
           "cuda/fastest": T, "copy": T}  # fmt: skip
    fastest = {"schema": migrate.FASTEST_V1, "created": "then", "device": device,
               "timing": "CUDA events", "wall_s": 3.0, "rows": [row]}  # fmt: skip
    trip = {"reps": 5, "e2e_ms": 0.05, "e2e_min_ms": 0.04, "e2e_spread_ms": 0.01,
            "device_ms": 0.04, "d2h_ms": 0.01, "h2d_ms": 0.02, "kernels_ms": 0.01}  # fmt: skip
    trip |= {"h2d_share": 0.02 / 0.05, "kernels_share": 0.01 / 0.05}
    host_row = {"n": 2048, "log2n": 11.0, "variant": "cuda/001-v2-pinned", "staging": "pinned",
                "value": 7.0, "golden": 7, "abs_err": 0.0, "bound": 0.0, "status": "ok", **trip,
                "gbps": 2048 * 4 / 0.05 / 1e6}  # fmt: skip
    host = {"schema": migrate.host.HOST_V1, "created": "then", "device": device,
            "method": {"units": "ms"}, "options": {"dtype": "float32"},
            "table": [host_row]}  # fmt: skip
    timed = legacy_record.for_variant(catalogue.get("cuda/fastest"), "float32", 1024, passes=1,
                                total=Timing(**T), bytes_total=4100, device="GPU")  # fmt: skip
    demo = legacy_record.for_variant(catalogue.get("cuda/v5-wrong-nosync"), "float32", 1024,
                               status="wrong", message="raced", device="GPU")  # fmt: skip
    run = {"schema": migrate.RUN_V2, "created": "then", "mode": "timed", "device": device,
           "results": [timed.to_json(), demo.to_json()],
           "seed_tables": [{"seed": "004"}]}  # fmt: skip
    calls = [{"dtype": "int32", "n": 1024, "calls_per_loop": 256, "loops": 5, "entry": e,
              "touched_bytes": 4096, "us_per_call": us, "min_us": us - 1}
             for e, us in (("torch.sum", 12.5), ("api cuda/fastest", 9.0))]  # fmt: skip
    per_call = {"schema": migrate.CALLABLE_V1, "created": "then", "device": device,
                "method": "a loop", "results": calls}  # fmt: skip
    docs = {"fastest.json": fastest, "host.json": host, "ladder-float32.json": run,
            "callable.json": per_call}  # fmt: skip
    for name, doc in docs.items():
        (folder / name).write_text(json.dumps(doc))
    return {"fastest.json": [r.to_json() for r in migrate.fastest(fastest)[1]],
            "ladder-float32.json": [timed.to_json(), demo.to_json()]}  # fmt: skip


def test_a_legacy_folder_is_rewritten_with_its_records_and_once(tmp_path: Path, capsys):
    before = _legacy_folder(tmp_path)
    assert migrate.main(["--root", str(tmp_path), "--dry-run"]) == 0
    assert "2 records kept" in capsys.readouterr().out
    fastest_file = tmp_path / "results" / "gpu" / "fastest.json"
    assert records.ROWS_SCHEMA not in fastest_file.read_text()  # a dry run writes nothing
    assert migrate.main(["--root", str(tmp_path)]) == 0
    fastest = documents.load_document(fastest_file, "rows")
    host = documents.load_document(tmp_path / "results" / "gpu" / "host.json", "rows")
    assert [r.to_json() for r in legacy_record.records_from_rows(fastest.rows)] == before[
        "fastest.json"
    ]
    assert fastest.raw["suite"] == "fastest" and fastest.created == "then"
    assert fastest.raw["timing"] == "CUDA events"
    assert host.raw["suite"] == "host" and host.raw["method"] == {"units": "ms"}
    assert {r.metric: r.median_ms for r in host.rows} == {
        "e2e": 0.05, "device": 0.04, "d2h": 0.01, "h2d": 0.02, "kernels": 0.01
    }  # fmt: skip
    assert host.rows[0].info == {"check": {"value": 7.0, "golden": 7, "abs_err": 0.0,
                                           "tolerance": 0.0}, "spread_ms": 0.01}  # fmt: skip
    ladder = documents.load_document(tmp_path / "results" / "gpu" / "ladder-float32.json", "rows")
    assert [r.to_json() for r in legacy_record.records_from_rows(ladder.rows)] == before[
        "ladder-float32.json"
    ]
    assert ladder.raw["suite"] == "ladder" and ladder.meta["mode"] == "timed"
    assert ladder.raw["seed_tables"] == [{"seed": "004"}] and ladder.created == "then"
    calls = documents.load_document(tmp_path / "results" / "gpu" / "callable.json", "rows")
    assert calls.raw["suite"] == "callable" and calls.raw["method"] == "a loop"
    assert not calls.results  # per-call entries, not cases of the ladder's suites
    got = {(r.variant, r.config, r.metric, r.check): (r.median_ms, r.min_ms, r.reps, r.bytes)
           for r in documents.rows(calls)}  # fmt: skip
    assert got == {
        ("torch.sum", "torch.sum", "call", "ok"): (12.5 / 1e3, 11.5 / 1e3, 5, 4096),
        ("api cuda/fastest", "api", "call", "ok"): (9.0 / 1e3, 8.0 / 1e3, 5, 4096),
    }
    capsys.readouterr()
    assert migrate.main(["--root", str(tmp_path)]) == 0
    assert capsys.readouterr().out == ""  # nothing left to convert
    assert not list(tmp_path.rglob("*.migrating"))


def test_every_committed_result_file_is_in_a_current_format(tmp_path: Path):
    copy = tmp_path / "results"
    shutil.copytree(ROOT / "results", copy, ignore=shutil.ignore_patterns("*.png", "*raw*"))
    assert [p for p in copy.rglob("*.json") if migrate.convert(documents.read_json(p))] == []
