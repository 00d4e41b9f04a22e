"""The seed tables and the counters plot from a SYNTHETIC profile document (no GPU, no ncu).

Every number in SYNTHETIC below is made up for the test; only the seeds' figures, which the
generator types in itself, are real (and labelled as the seeds'). The lead replaces this input with
the committed results/<device>/profile.json once it exists.
"""

from __future__ import annotations

import pytest

from harness.report import documents, profile_tables, records
from harness.studies import profile as profile_study


def _result(vid: str, backend: str, stage: str, dtype: str, n: int, kernels: list[dict],
            twin: str | None = None, family: str = "ladder") -> dict:  # fmt: skip
    ks = [{"id": i, "name": vid, "metrics": m, "derived": profile_study.derive(m)}
          for i, m in enumerate(kernels)]  # fmt: skip
    total = profile_study.aggregate([k["metrics"] for k in ks])
    return {
        "variant": vid,
        "backend": backend,
        "stage": stage,
        "family": family,
        "twin": twin,
        "dtype": dtype,
        "n": n,
        "kernels": ks,
        "total": {"metrics": total, "derived": profile_study.derive(total)},
    }


def _k(**kw) -> dict:
    base = {m.key: None for m in profile_study.ALL_METRICS}
    return base | {"duration_ns": 1000.0, "inst_executed": 1000.0} | kw


N = 2**24
SYNTHETIC = {
    "schema": records.PROFILE_SCHEMA,
    "device": {"name": "SYNTHETIC GPU"},
    "results": [
        _result("cuda/v0-gmem-interleaved", "cuda", "0", "float32", N,
                [_k(dram_throughput_pct=10.0, threads_pred_on=8000.0)], "triton/tile-256"),
        _result("cuda/v2-strided-index", "cuda", "2", "float32", N,
                [_k(dram_throughput_pct=40.0, shared_ld_bank_conflicts=4_700_000.0,
                    threads_pred_on=27_000.0)], "triton/tile-256"),
        _result("cuda/v4-adjacent-256", "cuda", "4", "float32", N,
                [_k(dram_throughput_pct=60.0, warp_cycles_per_issue=16.0, stall_barrier=5.6)],
                "triton/pair-adjacent-256"),
        _result("triton/tile-256", "triton", "0", "float32", N, [_k(dram_throughput_pct=80.0)]),
        _result("peer/torch.sum", "peer", "peer", "float32", N, [_k(dram_throughput_pct=90.0)]),
        *(
            _result(vid, "cuda", "004-" + str(i), "int32", N,
                    [_k(gld_sectors=float(ld), gst_sectors=float(st), duration_ns=100_000.0),
                     _k(gld_sectors=1.0, gst_sectors=1.0)], family="004")
            for i, (vid, (ld, st)) in enumerate(profile_tables.seed004_expected(N).items())
        ),
    ],
}  # fmt: skip


def test_expected_sector_arithmetic_reproduces_the_seeds_counts():
    # Derived from the access pattern alone, the seed's four quoted counts come out exactly.
    e = profile_tables.seed004_expected(2**24)
    assert e["cuda/004-gmem"] == (6_553_600, 3_211_264)
    assert e["cuda/004-smem"] == (2_097_152, 65_536)  # stores = blocks = 16M / 256
    assert e["cuda/004-smem-unroll4"] == (2_097_152, 16_384)  # stores = blocks / 4
    assert profile_tables.gmem_tree_sectors(256) == (100, 49)
    assert profile_tables.sectors(4, 32) == 5 and profile_tables.sectors(8, 32) == 4


def test_seed004_table_puts_the_seeds_figures_beside_ours():
    text = profile_tables.seed004_table(SYNTHETIC)
    assert "quoted from the seed (004_53302091cfe0f7dc.txt" in text
    row = next(line for line in text.splitlines() if "`cuda/004-smem`" in line)
    # seed, expected and (synthetic) ours: the first pass's kernel, not the pass total
    assert row.count("2,097,152") == 3 and row.count("65,536") == 3
    assert "304.02 / 9.50" in row
    assert "671.09 / 20.97" in row  # 2,097,152 x 32 B / 100 us; 65,536 x 32 B / 100 us


def test_seed000_column_compares_ratios_to_stage_0():
    text = profile_tables.seed000_column(SYNTHETIC)
    assert "quoted from the seed (000_63f2b61950f09972.txt" in text
    v2 = next(line for line in text.splitlines() if line.startswith("| v2 "))
    assert "33, 45.18%" in v2 and "3.58" in v2  # the seed's ratio 45.18 / 12.61
    assert "| 40.00 | 4.00 |" in v2  # ours: 40 % of peak, 4x stage 0's
    assert "27.46" in v2 and "| 27.00 |" in v2
    v4 = next(line for line in text.splitlines() if line.startswith("| v4a "))
    assert "34.1%" in v4 and "35.0%" in v4  # seed's barrier share, ours 5.6 / 16


def test_ladder_counters_table_and_plot(tmp_path):
    text = profile_tables.ladder_counters_table(SYNTHETIC, N, "float32")
    lines = text.splitlines()
    i = next(k for k, line in enumerate(lines) if "`cuda/v0-gmem-interleaved`" in line)
    assert lines[i + 1].startswith("| ↳ `triton/tile-256`")  # the twin right below its stage
    assert any("`peer/torch.sum`" in line for line in lines)
    drawn = profile_tables.plot_ladder(SYNTHETIC, tmp_path / "c.png", N, "float32")
    assert drawn == ["cuda/v0-gmem-interleaved", "cuda/v2-strided-index", "cuda/v4-adjacent-256"]
    assert (tmp_path / "c.png").stat().st_size > 10_000
    assert "cuda/v2-strided-index" in profile_tables.terminal_summary(SYNTHETIC)


def test_render_command_writes_the_tables_and_the_plot(tmp_path):
    import json

    from harness.cli import main as reduce_ladder

    path = tmp_path / "profile.json"
    path.write_text(json.dumps(SYNTHETIC))
    assert reduce_ladder(["profile", "--render", str(path), "--out", str(tmp_path / "r")]) == 0
    text = (tmp_path / "r" / "profile.md").read_text()
    assert "## Seed 004: global-memory sectors" in text and "## Seed 000: per stage" in text
    assert (tmp_path / "r" / f"counters-float32-{N}.png").is_file()


def test_merge_pools_one_kinds_lists_and_refuses_mixed_kinds():
    other = SYNTHETIC | {"device": {"name": "ANOTHER GPU"}, "runs": [{"n": 1}]}
    merged = documents.merge_documents([SYNTHETIC, other])
    assert merged["device"] == SYNTHETIC["device"]  # the first document's header
    assert merged["results"] == SYNTHETIC["results"] * 2 and merged["runs"] == [{"n": 1}]
    sanitize_doc = {"schema": records.SANITIZE_SCHEMA, "variants": [{"variant": "x"}]}
    merged = documents.merge_documents([sanitize_doc, sanitize_doc])
    assert merged["variants"] == [{"variant": "x"}] * 2
    for bad in ([SYNTHETIC, sanitize_doc], [], [{"schema": records.ROWS_SCHEMA}]):
        with pytest.raises(ValueError, match="of one kind"):
            documents.merge_documents(bad)
