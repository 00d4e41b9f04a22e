"""`--seed 004`: the selection, the CLI's CPU path, and the seed table's arithmetic.

The rows fed to tables.seed_rows below are SYNTHETIC (made-up times, no device): they test the
formulas (elements, bytes, effective bandwidth), not any GPU. Real tables come from the GPU run
(benchmarks/gpu_session.sh, step seed004) and are filed by benchmarks/seed_table.py.
"""

import importlib.util
import json
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core import catalogue, device
from harness.report import tables
from harness.report.documents import document_from, load_document
from harness.report.records import Row, rows_document
from harness.studies import session

N = 2**24


def test_seed_variants_004():
    vs = session.seed_variants(catalogue.select(dtype="int32"), "004")
    ids = {v.id for v in vs if v.backend != "peer"}
    assert ids == {
        "cuda/004-gmem",
        "cuda/004-smem",
        "cuda/004-gmem-unroll4",
        "cuda/004-smem-unroll4",
        "cuda/004-smem-dyn",
        "cuda/004-smem-unroll4-dyn",
        "triton/tile-256",
        "triton/quad-adjacent-256",
    }
    assert session.seed_dtypes("004") == ["int32"]
    assert session.seed_dtypes("999") == []


def test_unknown_seed_and_wrong_dtype_are_usage_errors(capsys):
    assert main(["check", "--seed", "999"]) == 2
    assert "unknown seed" in capsys.readouterr().err
    assert main(["check", "--seed", "004", "--dtype", "float32"]) == 2
    assert "int32" in capsys.readouterr().err


@pytest.mark.skipif(device.gpu_available(), reason="exercises the no-GPU path")
def test_seed_004_cpu_path_defaults_to_int32(tmp_path, capsys):
    out = tmp_path / "s.json"
    rc = main(["run", "--seed", "004", "--sizes", "257,1025", "--quiet", "--json", str(out)])
    assert rc == 0, capsys.readouterr().out
    assert json.loads(out.read_text())["mode"] == "cpu"
    results = load_document(out).results  # the cases joined from the rows
    assert {r.variant for r in results} == {"triton/tile-256", "triton/quad-adjacent-256"}
    assert all(r.dtype == "int32" and r.status == "ok" for r in results)


COMMON = {"device": "Synthetic GPU", "suite": "ladder", "versions": ()}


def _row(vid: str, ms: float) -> list[Row]:
    """A case's rows as the ladder's suites write them: its first pass, then its total."""
    case = {**COMMON, "variant": vid, "config": "", "dtype": "int32", "shape": N, "check": "ok"}
    return [Row(**case, metric="first_pass", median_ms=ms),
            Row(**case, metric="total", median_ms=ms * 1.1)]  # fmt: skip


def test_seed_rows_arithmetic_on_synthetic_rows():
    cases = [
        _row("cuda/004-gmem", 0.5),
        _row("cuda/004-smem-unroll4", 0.25),
        _row("triton/tile-256", 0.4),
        _row("triton/quad-adjacent-256", 0.2),
        [Row(**COMMON, variant="peer/torch.sum", config="", dtype="int32", shape=N,
             metric="total", median_ms=0.1, check="ok")],  # a peer: its total alone
    ]  # fmt: skip
    rows = tables.seed_rows([r for case in cases for r in case], N, "int32")
    assert [r["kernel"] for r in rows] == ["reduceGmem", "reduceSmemUnroll", "torch.sum"]
    gmem, unroll, peer = rows
    assert (gmem["read"], gmem["written"], gmem["bytes"]) == (N, 65536, 67371008)  # seed's table
    assert (unroll["written"], unroll["bytes"]) == (16384, 67174400)  # seed's table
    assert gmem["cuda_ms"] == 0.5, "the first pass alone, not the total (0.55)"
    assert gmem["cuda_gbps"] == pytest.approx(67371008 / 0.5e-3 / 1e9)
    assert gmem["twin_gbps"] == pytest.approx(67371008 / 0.4e-3 / 1e9)
    assert unroll["twin"] == "triton/quad-adjacent-256" and unroll["twin_ms"] == 0.2
    assert gmem["seed_ms"] == 0.248 and unroll["seed_ms"] == 0.097
    assert peer["written"] == 1 and peer["cuda_gbps"] == pytest.approx((N + 1) * 4 / 0.1e-3 / 1e9)
    from rich.console import Console

    console = Console(record=True, width=250)
    console.print(tables.rich_seed(rows, "synthetic"))
    text = console.export_text()
    assert "reduceSmemUnroll" in text and "16384" in text and "torch.sum" in text
    md = tables.markdown_seed(rows)
    assert md.count("\n|") == 2 + len(rows) - 1 and "effective bandwidth" in md
    assert "| reduceGmem (in place) | 500.0 | tile-256 | 400.0 | 16777216 | 65536 |" in md


def test_seed_table_script_renders_and_refuses_cpu_runs(tmp_path):
    path = Path(__file__).resolve().parent.parent / "benchmarks" / "seed_table.py"
    spec = importlib.util.spec_from_file_location("seed_table", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert mod.slug("NVIDIA H100 80GB HBM3") == "nvidia-h100"
    assert mod.slug("NVIDIA H200") == "nvidia-h200"
    rows = [r for vid in ("cuda/004-smem", "triton/tile-256") for r in _row(vid, 0.3)]
    doc = rows_document(rows, suite="ladder",
                        device={"name": "Synthetic GPU"}, mode="timed",
                        seed_tables=[{"seed": "004", "n": N, "dtype": "int32"}])  # fmt: skip
    seed, md = mod.markdown(document_from(doc, "run.json"))
    assert seed == "004" and "| reduceSmem | 300.0 |" in md
    run = tmp_path / "run.json"
    run.write_text(json.dumps({**doc, "device": {}}))
    with pytest.raises(SystemExit):
        mod.main([str(run), "--results", str(tmp_path / "results")])
    assert not (tmp_path / "results").exists()
