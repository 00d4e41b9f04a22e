"""The porting guide's hardware parts (porting.measured: the counters and notes per stage in
docs/porting.md, the sanitizer's findings in docs/porting-appendix.md) and the run report's
links, checked against the committed results/*/profile.json and sanitize.json (no GPU).

The freshness test in test_inspect.py proves the doc is what the generator makes of the committed
JSON; these prove the generator reads the right fields: each number checked here is read back
from the doc and compared with the document's own per-kernel values.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.report import profile_tables, records, run_report
from porting import doc as porting_doc
from porting import measured

ROOT = porting_doc.ROOT
PROFILE = measured.newest(ROOT, profile_tables.PROFILE_NAME)
SANITIZE = measured.committed(ROOT, "sanitize.json", "sanitize")
needs_profile = pytest.mark.skipif(PROFILE is None, reason="no results/*/profile.json committed")
needs_sanitize = pytest.mark.skipif(SANITIZE is None, reason="no results/*/sanitize.json committed")


@pytest.fixture(scope="module")
def doc_text() -> str:
    """The appendix: the sanitizer section."""
    return porting_doc.appendix_path(porting_doc.DOC).read_text()


@pytest.fixture(scope="module")
def guide_text() -> str:
    return porting_doc.DOC.read_text()


def _stage_block(text: str, fam: str, stage: str) -> str:
    start = text.index(f'<a id="{fam}-stage-{stage}"></a>')
    end = text.find('<a id="', start + 1)
    return text[start : end if end > 0 else None]


def _hardware_cells(block: str, vid: str) -> dict[str, str]:
    """The cells of `vid` in a stage's line of counters in the guide, by column name."""
    line = next(ln for ln in block.splitlines() if ln.startswith("**Hardware counters**"))
    cells = re.search(rf"`{re.escape(vid)}` \(([^)]*)\)", line).group(1)
    return dict(c.rsplit(" ", 1) for c in cells.split(", "))


def _int(cell: str) -> int:
    return int(cell.replace(",", ""))


def _kernel_sum(vid: str, key: str, n: int = 2**24, dtype: str = "float32") -> float:
    """The metric summed over the variant's kernels, straight from the document (no helper)."""
    _, doc = PROFILE
    (r,) = [r for r in doc["results"] if (r["variant"], r["n"], r["dtype"]) == (vid, n, dtype)]
    return sum(k["metrics"][key] for k in r["kernels"])


@needs_profile
def test_v2_counters_show_about_100x_the_bank_conflicts_of_v3(guide_text):
    cells = {
        vid: _hardware_cells(_stage_block(guide_text, "ladder", stage), vid)
        for vid, stage in (("cuda/v2-strided-index", "2"), ("cuda/v3-sequential", "3"))
    }
    ld = {vid: _int(c["bank conflicts ld"]) for vid, c in cells.items()}
    for vid, value in ld.items():  # the cell is the ncu counter, summed over the passes
        assert value == round(_kernel_sum(vid, "shared_ld_bank_conflicts")), vid
    ratio = ld["cuda/v2-strided-index"] / ld["cuda/v3-sequential"]
    assert 30 <= ratio <= 300, ratio  # the "about 100x", with its GPU test's margin


@needs_profile
def test_stage_counters_show_cuda_beside_its_twin_at_the_profiled_size(guide_text):
    _, doc = PROFILE
    block = _stage_block(guide_text, "ladder", "5")
    assert f"({doc['device']['name']}, n = 2^24 float32)" in block
    for vid in ("cuda/v5-volatile", "cuda/v5-syncwarp", "triton/pair-adjacent-256"):
        cells = _hardware_cells(block, vid)
        duration_us = _kernel_sum(vid, "duration_ns") / 1e3
        assert float(cells["µs"].replace(",", "")) == pytest.approx(duration_us, abs=0.06), vid


@needs_profile
def test_divergence_note_says_what_this_gpu_shows(guide_text):
    """The stage-2 sentence follows the data: "does not show" exactly when v2's threads per warp
    instruction are not above v1's; the instruction ratio it quotes is the document's."""
    v1, v2 = (
        measured.counters(PROFILE[1], vid, 2**24, "float32")
        for vid in ("cuda/v1-smem-interleaved", "cuda/v2-strided-index")
    )
    block = _stage_block(guide_text, "ladder", "2")
    shows = v2["threads_per_inst"] > v1["threads_per_inst"]
    assert ("does not show it" in block) is (not shows)
    ratio = re.search(r"v1 executes ([\d.]+)x v2's warp instructions", block)
    assert ratio and float(ratio.group(1)) == round(v1["inst_executed"] / v2["inst_executed"], 1)


@needs_profile
def test_seed_tables_are_linked_from_the_doc(guide_text):
    """The guide links the profile's rendering, which holds the seeds' own tables regenerated
    from the same document."""
    path, doc = PROFILE
    links = re.findall(r"\]\((\.\./results/[^)]+/profile\.md)\)", guide_text)
    assert links, "no link to the profile's rendering"
    rendering = (porting_doc.DOC.parent / links[0]).resolve()
    assert rendering.parent.parent.parent == (ROOT / path).parent.resolve()
    text = rendering.read_text()
    assert profile_tables.seed004_table(doc) in text
    assert profile_tables.seed000_column(doc) in text


@needs_profile
def test_guide_shows_each_stages_counters_beside_its_twin(guide_text):
    """The guide's one line of a stage's counters: the summary columns only, each variant's µs
    the document's."""
    block = _stage_block(guide_text, "ladder", "5")
    line = next(ln for ln in block.splitlines() if ln.startswith("**Hardware counters**"))
    assert "bank conflicts ld" in line and "occupancy %" not in line  # the summary columns
    for vid in ("cuda/v5-volatile", "triton/pair-adjacent-256"):
        cell = re.search(rf"`{re.escape(vid)}` \(µs ([\d,.]+),", line)
        assert cell, vid
        duration_us = _kernel_sum(vid, "duration_ns") / 1e3
        assert float(cell.group(1).replace(",", "")) == pytest.approx(duration_us, abs=0.06), vid


@needs_sanitize
def test_sanitizer_section_agrees_with_the_study_verdicts(doc_text):
    """The clean count and the seed bugs' wording match sanitize.json's own verdicts."""
    doc = SANITIZE["doc"]
    default = [v for v in doc["variants"] if not v["wrong"]]
    clean = sum(1 for v in default if v["verdict"] == "clean")
    assert f"{clean} of the {len(default)} default variants are clean" in doc_text
    for v in doc["variants"]:
        if v["family"] != "sanitizer-demo":
            continue
        line = next(ln for ln in doc_text.splitlines() if ln.startswith(f"- `{v['variant']}`"))
        flagged = [t for t, f in v["tools"].items() if f["records"]]
        assert ("flagged by no tool" in line) is (not flagged), line
        assert all(t in line for t in flagged), line
    for v in default:
        race = v["tools"]["racecheck"]
        if race["records"]:
            row = f"| `{v['variant']}` ({v['volatile']} memory) | {race['records']:,} | "
            assert row + f"{race['hazards']:,} |" in doc_text, v["variant"]


def test_without_documents_nothing_is_added(tmp_path):
    assert measured.newest(tmp_path, "profile.json") is None
    assert measured.committed(tmp_path) is None
    assert measured.profile_view(tmp_path, tmp_path) is None
    assert measured.counter_line(None, []) is None
    assert measured.sanitize_view(tmp_path) is None
    ctx = porting_doc.context(porting_doc.CENSUS, tmp_path, porting_doc.DOC)
    appendix = porting_doc.ENV.get_template("appendix.md").render(ctx)
    guide = porting_doc.ENV.get_template("guide.md").render(ctx)
    assert "**Hardware counters**: not measured yet" in guide and "Nsight Compute on" not in guide
    assert '<a id="sanitizer">' not in appendix


def test_newest_prefers_the_later_created_stamp_then_the_later_path(tmp_path):
    for device, created in (("a-gpu", "2026-02-01"), ("b-gpu", "2026-01-01"), ("c-gpu", None)):
        (tmp_path / "results" / device).mkdir(parents=True)
        doc = {"schema": records.PROFILE_SCHEMA, "device": {"name": device}} | (
            {"created": created} if created else {}
        )
        (tmp_path / "results" / device / "profile.json").write_text(json.dumps(doc))
    (tmp_path / "results" / "d-gpu").mkdir()
    (tmp_path / "results" / "d-gpu" / "profile.json").write_text("{not json")
    path, doc = measured.newest(tmp_path, "profile.json")
    assert (path, doc["device"]["name"]) == ("results/a-gpu/profile.json", "a-gpu")


def _run_in(folder: Path) -> SimpleNamespace:
    """What hardware_section reads of a run document: its path."""
    return SimpleNamespace(path=str(folder / "bench.json"))


def test_run_report_links_the_profile_rendering_beside_the_run(tmp_path):
    folder, out = tmp_path / "results" / "gpu", tmp_path / "results" / "gpu" / "report"
    out.mkdir(parents=True)
    assert run_report.hardware_section(_run_in(folder), out) == []
    (folder / "profile.json").write_text("{}")
    lines = run_report.hardware_section(_run_in(folder), out)
    assert "not rendered yet" in "\n".join(lines) and "--render" in "\n".join(lines)
    (out / "profile").mkdir()
    (out / "profile" / "profile.md").write_text("# counters\n")
    (folder / "sanitize.json").write_text("[]")  # not a sanitize document
    text = "\n".join(run_report.hardware_section(_run_in(folder), out))
    assert "[profile/profile.md](profile/profile.md)" in text
    assert "([sanitize.json](../sanitize.json)): unreadable" in text


@needs_sanitize
def test_committed_report_links_the_hardware_documents():
    report = ROOT / "results" / "nvidia-h200" / "report" / "report.md"
    if not (report.parent.parent / "profile.json").is_file():
        pytest.skip("no profile.json beside the committed H200 run")
    text = report.read_text()
    assert "[profile/profile.md](profile/profile.md)" in text
    assert (
        profile_tables.sanitize_summary(
            json.loads((report.parent.parent / "sanitize.json").read_text())
        )
        in text
    )


def test_axis_chapter_shows_counters_and_verdicts_once_committed(tmp_path):
    """With an axis variant in a profile-*.json beside profile.json and in a sanitize-*.json
    beside sanitize.json, the axis stage shows its counters and the family its verdicts (no
    "not measured yet"); the numbers are the documents' own."""
    folder = tmp_path / "results" / "gpu-x"
    folder.mkdir(parents=True)
    (folder / "axis.json").write_text((ROOT / "results" / "nvidia-h100" / "axis.json").read_text())
    head = {"schema": records.PROFILE_SCHEMA, "device": {"name": "GPU X"}}
    (folder / "profile.json").write_text(json.dumps(head | {"results": []}))
    total = {"metrics": {"duration_ns": 12345.0, "inst_executed": 2e6}, "derived": {}}
    axis = {"variant": "cuda/axis-r1-block-row", "n": 2**24, "dtype": "float32", "total": total}
    (folder / "profile-axis.json").write_text(json.dumps(head | {"results": [axis]}))
    sanitize = {"schema": records.SANITIZE_SCHEMA, "device": {"name": "GPU X"}, "variants": []}
    (folder / "sanitize.json").write_text(json.dumps(sanitize))
    tools = {t: {"records": 0, "hazards": 0} for t in profile_tables.TOOLS}
    clean = {"variant": "triton/axis-r1-block-row", "tools": tools, "wrong": False}
    (folder / "sanitize-axis.json").write_text(json.dumps(sanitize | {"variants": [clean]}))
    ctx = porting_doc.context(porting_doc.CENSUS, tmp_path, porting_doc.DOC)
    guide = porting_doc.ENV.get_template("guide.md").render(ctx)
    chapter = guide[guide.index("## Along an axis") :]
    assert "not measured yet" not in chapter and "not run on this family yet" not in chapter
    assert "1 of its 1 variants clean under memcheck" in chapter
    block = _stage_block(chapter, "axis", "r1")
    assert (
        "**Hardware counters** (GPU X, n = 2^24 float32): `cuda/axis-r1-block-row` (µs 12.3,"
        in block
    )
    assert "warp instr. 2.0M" in block
