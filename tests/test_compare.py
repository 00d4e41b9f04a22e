"""`reduce-ladder compare`: N device folders compared (issue 15). On the committed folders (the
committed results/compare/ is what the command makes of them, byte for byte), on synthetic tiny
folders (three devices, every number derived from the records written here), and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli.main import main
from harness.core.device import datasheet_bw
from harness.report import devices
from harness.report.records import Row, rows_document

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ("results/nvidia-h200", "results/nvidia-h100")
OUT = "results/compare"
OUTPUTS = ("README.md", "compare.json")

SYNTHETIC = {  # folder -> (device name as nvidia-smi gives it, ms of variant a, ms of variant b)
    "gpu-a": ("NVIDIA H200", 2.0, 0.5),
    "gpu-b": ("NVIDIA H100 80GB HBM3", 2.5, 0.5),
    "gpu-c": ("NVIDIA A100-SXM4-80GB", 4.0, 1.0),
}
N = 2**24


def _copy_inputs(dst_root: Path) -> None:
    """The committed folders' files the command reads (result sources and env.txt), at the same
    relative paths, so the output's links and command line come out as committed."""
    for folder in COMMITTED:
        src, dst = ROOT / folder, dst_root / folder
        dst.mkdir(parents=True)
        keep = [
            devices.ENV_FILE,
            *(p.name for ps in devices.result_files(src).values() for p in ps),
        ]
        for name in keep:
            if (src / name).is_file():
                shutil.copy2(src / name, dst / name)


def test_committed_compare_is_up_to_date(tmp_path, monkeypatch, capsys):
    """results/compare/ regenerates byte-identical. If this fails:
    reduce-ladder compare results/nvidia-h200 results/nvidia-h100 --out results/compare"""
    _copy_inputs(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["compare", *COMMITTED, "--out", OUT]) == 0
    made = sorted(p.name for p in (tmp_path / OUT).iterdir())
    committed = sorted(p.name for p in (ROOT / OUT).iterdir())
    assert made == committed, "results/compare/ holds other files than the command writes"
    for name in made:
        assert (tmp_path / OUT / name).read_bytes() == (ROOT / OUT / name).read_bytes(), (
            f"results/compare/{name} is stale: reduce-ladder compare "
            + " ".join(COMMITTED)
            + f" --out {OUT}"
        )


def test_committed_compare_rows_are_the_ladder_files_times():
    """Each ladder row's times are the committed ladder files' medians and its ratio their
    quotient; the peers of issue 15 are compared on both devices."""
    doc = json.loads((ROOT / OUT / "compare.json").read_text())
    base, other = (d["label"] for d in doc["devices"])
    medians = {}
    for label, folder in zip((base, other), COMMITTED, strict=True):
        for path in sorted((ROOT / folder).glob("ladder-*.json")):
            for r in json.loads(path.read_text())["rows"]:
                if r.get("check") == "ok" and r["metric"] == "total":
                    medians[(label, r["variant"], r["dtype"], r["shape"])] = r["median_ms"]
    ladder = [r for r in doc["rows"] if r["source"] == "ladder"]
    assert ladder
    for row in ladder:
        key = (row["variant"], row["dtype"], row["n"])
        assert row["ms"][base] == medians[(base, *key)]
        assert row["ms"][other] == medians[(other, *key)]
        assert row["ratio_to_baseline"][other] == pytest.approx(
            medians[(base, *key)] / medians[(other, *key)]
        )
    peers = {r["variant"] for r in ladder if r["family"] == "peer"}
    assert {"peer/torch.compile-dynamic", "peer/cuda.compute"} <= peers
    names = [d["device"] for d in doc["devices"]]
    assert [d["expected_ratio"] for d in doc["devices"]] == [
        None,
        pytest.approx(datasheet_bw(names[1]) / datasheet_bw(names[0])),
    ]


CUDA, PEER = "cuda/v3-sequential", "peer/torch.sum"  # families "ladder" and "peer"


def _synthetic(root: Path, folder: str) -> Path:
    name, ms_a, ms_b = SYNTHETIC[folder]
    d = root / folder
    d.mkdir()
    (d / "env.txt").write_text(
        "name, driver_version, memory.total [MiB]\n"
        f"{name}, 1.2.3, 1000 MiB\ntorch X triton Y ({folder})\n"
    )
    rows = [
        Row(device=name, suite="ladder", variant=vid, config="", dtype="float32", shape=N,
            metric="total", median_ms=ms, min_ms=ms, p10_ms=ms, p90_ms=ms, reps=3, check="ok")
        for vid, ms in ((CUDA, ms_a), (PEER, ms_b))
    ]  # fmt: skip
    doc = rows_document(rows, suite="ladder", device={"name": name}, mode="timed")
    (d / "ladder-float32.json").write_text(json.dumps(doc))
    return d


def test_three_synthetic_devices(tmp_path, capsys):
    folders = [str(_synthetic(tmp_path, f)) for f in SYNTHETIC]
    out = tmp_path / "cmp"
    assert main(["compare", *folders, "--out", str(out)]) == 0
    doc = json.loads((out / "compare.json").read_text())
    assert [d["label"] for d in doc["devices"]] == list(SYNTHETIC)
    base_name = SYNTHETIC["gpu-a"][0]
    for dev in doc["devices"][1:]:
        assert dev["expected_ratio"] == pytest.approx(
            datasheet_bw(dev["device"]) / datasheet_bw(base_name)
        )
    by_variant = {r["variant"]: r for r in doc["rows"]}
    assert set(by_variant) == {CUDA, PEER}
    for vid, k in ((CUDA, 1), (PEER, 2)):
        row = by_variant[vid]
        for folder, (_, *ms) in SYNTHETIC.items():
            assert row["ms"][folder] == ms[k - 1]
            if folder != "gpu-a":
                assert row["ratio_to_baseline"][folder] == pytest.approx(
                    SYNTHETIC["gpu-a"][k] / ms[k - 1]
                )
    readme = (out / "README.md").read_text()
    for folder in SYNTHETIC:
        assert f"{folder} µs" in readme and f"({folder})" in readme  # tables, env.txt notes
    assert "![compare_ladder.png](compare_ladder.png)" in readme
    assert (out / "compare_ladder.png").stat().st_size > 0
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(["compare", *folders, "--out", str(out)]) == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == first, "not deterministic"


def test_unknown_device_has_no_expected_ratio(tmp_path, capsys):
    a = _synthetic(tmp_path, "gpu-a")
    b = _synthetic(tmp_path, "gpu-b")
    env = (b / "env.txt").read_text().replace(SYNTHETIC["gpu-b"][0], "Some Future GPU")
    (b / "env.txt").write_text(env)
    assert main(["compare", str(a), str(b), "--out", str(tmp_path / "o")]) == 0
    doc = json.loads((tmp_path / "o" / "compare.json").read_text())
    assert doc["devices"][1]["expected_ratio"] is None
    assert "unknown" in (tmp_path / "o" / "README.md").read_text()


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing", "no such folder"),
        ("empty", "holds no result file"),
        ("file", "not a folder"),
        ("twice", "named twice"),
        ("one", "two device folders or more"),
        ("out-is-file", "is a file, not a folder"),
    ],
)
def test_bad_input_exits_2_before_any_work(tmp_path, capsys, case, message):
    a = _synthetic(tmp_path, "gpu-a")
    b = _synthetic(tmp_path, "gpu-b")
    out = tmp_path / "out"
    (tmp_path / "empty").mkdir()
    (tmp_path / "afile").write_text("x")
    folders = {
        "missing": [a, tmp_path / "nope"],
        "empty": [a, tmp_path / "empty"],
        "file": [a, tmp_path / "afile"],
        "twice": [a, b, a],
        "one": [a],
        "out-is-file": [a, b],
    }[case]
    if case == "out-is-file":
        out = tmp_path / "afile"
    assert main(["compare", *map(str, folders), "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    if case != "out-is-file":
        assert not out.exists(), "the output folder was made before the input was checked"


# -- the Inductor page's comparison (experiments/inductor_code/compare.py) ----------


def _captures() -> list[Path]:
    return sorted((ROOT / "results").glob("*/inductor/inductor.json"))


@pytest.mark.parametrize("path", _captures(), ids=lambda p: p.parent.parent.name)
def test_parsed_inductor_code_agrees_with_the_studys_own_facts(path):
    """The doc's parser of the captured code and the study's facts (inductor.json, read by other
    regular expressions when the code was captured) give the same kernels, rows and launches."""
    from experiments.inductor_code.compare import parse_compiles

    doc = json.loads(path.read_text())
    for entry in doc["modes"]:
        code_path = path.parent / f"inductor-{entry['mode']}.py"
        if entry.get("unavailable") or not code_path.is_file():
            continue
        facts = [f for c in entry["calls"] for f in c["code_facts"]]
        compiles = parse_compiles(code_path.read_text())
        assert len(compiles) == len(facts), entry["mode"]
        for c, f in zip(compiles, facts, strict=True):
            assert [k.name for k in c.kernels] == f["kernels"]
            assert len(c.launches) == len(f["launches"])
            fixed = [int(k.xnumel) for k in c.kernels if k.xnumel.isdigit()]
            assert fixed == f["constants"].get("xnumel", [])


def test_porting_doc_states_the_dynamic_pitfall_from_the_files():
    """The doc's dynamic-pitfall lines carry the ladder files' and the study's times."""
    text = "\n".join(p.read_text() for p in sorted((ROOT / "docs").glob("porting*.md")))
    for folder in COMMITTED:
        ladder = json.loads((ROOT / folder / "ladder-float32.json").read_text())
        dyn = [
            r
            for r in ladder["rows"]
            if r["variant"] == "peer/torch.compile-dynamic" and r["metric"] == "total"
        ]
        assert dyn
        for r in dyn:
            ms = r["median_ms"]
            assert f"{Path(folder).name}, ladder run at 2^{r['shape'].bit_length() - 1}" in text
            assert f"{ms:,.1f} ms" in text
        study = json.loads((ROOT / folder / "inductor" / "inductor.json").read_text())
        calls = {(e["mode"], c["n"]): c for e in study["modes"] for c in e.get("calls", [])}
        big = max(study["sizes"])
        assert f"dynamic {calls[('dynamic', big)]['median_us']:,.1f} µs" in text
    block = text.split("**The dynamic pitfall, from the code.**")[1].split("```python\n")[1]
    quoted = block.split("```")[0].strip().splitlines()
    assert len(quoted) >= 4
    captured = {
        ln.strip()
        for f in COMMITTED
        for ln in (ROOT / f / "inductor" / "inductor-dynamic.py").read_text().splitlines()
    }
    assert set(quoted) <= captured, "the doc quotes lines the captured code does not have"
