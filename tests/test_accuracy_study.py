"""The accuracy study on the CPU (Triton's interpreter and torch.sum): its rows, its table and
plot, the reproducible document, `reduce-ladder report --accuracy`, and the accuracy command's
usage errors (exit 2, before any work)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.check import battery, exact
from harness.cli.main import main
from harness.core import catalogue, device
from harness.report import accuracy_tables, documents, records
from harness.report.documents import document_from
from harness.studies import accuracy as study

ROOT = Path(__file__).resolve().parents[1]
VARIANTS = [catalogue.get("triton/tile-256"), catalogue.get(catalogue.TORCH_SUM_ID)]
FAMILIES = ["seed001", "cancellation", "past-limit"]


@pytest.fixture(scope="module")
def doc() -> dict:
    return study.accuracy(VARIANTS, FAMILIES, [5000], log=lambda s: None, where="cpu")


def _read(doc: dict):
    """The document as the report reads it (the one loader)."""
    return document_from(json.loads(json.dumps(doc)), "accuracy.json")


@pytest.mark.interpreter  # the study over the interpreter (doc)
def test_rows_hold_the_exact_comparison(doc):
    assert doc["schema"] == records.ROWS_SCHEMA and doc["suite"] == "accuracy"
    rows = _read(doc).rows
    assert [(r.variant, r.config) for r in rows] == [(v.id, f) for f in FAMILIES for v in VARIANTS]
    for r in rows:
        x = battery.get(r.config).generate(5000, study.SEED)
        s, info = exact.exact_sum(x), r.info
        value = info["check"]["value"]
        assert (r.check, r.metric, r.median_ms, r.n) == ("ok", "check", None, 5000)
        assert info["check"]["golden"] == exact.round_nearest(s)
        assert info["faithful"] == exact.faithful(value, s)
        assert info["ulps"] == exact.ulp_error(value, s)
        assert info["within_limit"] == (r.config != "past-limit")
        assert float.fromhex(info["result_hex"]) == value


@pytest.mark.interpreter  # the study over the interpreter (doc)
def test_document_loads_as_the_rows_of_the_committed_files(doc, tmp_path):
    path = tmp_path / "accuracy.json"
    path.write_text(json.dumps(doc))
    loaded = accuracy_tables.load(path)
    assert loaded.kind == "rows" and len(accuracy_tables.accuracy_rows(loaded)) == len(doc["rows"])
    assert documents.rows(loaded) == []  # no times
    # a committed file (accuracy/1 once, converted by experiments/migrate_legacy_results, whose
    # test turns an accuracy/1 document into this study's very document) holds rows of the form
    committed = accuracy_tables.load(ROOT / "results" / "nvidia-h200" / "accuracy.json")
    assert committed.schema == records.ROWS_SCHEMA and not committed.results
    assert committed.raw["suite"] == "accuracy" and set(committed.raw) == set(doc)
    old, new = committed.rows[0], loaded.rows[0]
    assert (old.suite, old.metric, old.check, set(old.info)) == (
        new.suite, new.metric, new.check, set(new.info))  # fmt: skip
    assert set(old.info["check"]) == set(new.info["check"]) and old.config in battery.NAMES


@pytest.mark.interpreter  # the study over the interpreter (doc)
def test_table_marks_and_plot(doc, tmp_path):
    text = accuracy_tables.markdown(_read(doc))
    for v in VARIANTS:
        assert f"| {v.id} |" in text
    assert "past-limit †" in text and "| kappa |" in text
    drawn = accuracy_tables.plot(_read(doc), tmp_path / "a.png")
    assert set(drawn[5000]) == {v.id for v in VARIANTS}
    assert (tmp_path / "a.png").stat().st_size > 0


@pytest.mark.interpreter  # the study over the interpreter (doc)
def test_failures_are_errors_and_promised_variants_unfaithful_inside_the_limit(doc):
    assert accuracy_tables.failures(_read(doc), set()) == []  # the ladder's misses are findings
    marked = json.loads(json.dumps(doc))
    for r in marked["rows"]:  # every result unfaithful: only promised, inside-limit ones fail
        r["info"]["faithful"] = False
    found = accuracy_tables.failures(_read(marked), {"triton/tile-256"})
    assert [line.split(":")[0] for line in found] == [
        "triton/tile-256 seed001 n=5000",
        "triton/tile-256 cancellation n=5000",
    ]
    marked["rows"][0].update(check="error", info={"message": "RuntimeError: boom"})
    assert accuracy_tables.failures(_read(marked), set()) == [
        f"{marked['rows'][0]['variant']} seed001 n=5000: RuntimeError: boom"
    ]


def test_a_variant_that_raises_is_an_error_row_and_the_study_goes_on(monkeypatch):
    """The row of a sum that raised (session.errored): check "error", the exception's message
    and its traceback; the next variant is measured."""
    real = study.run_sum

    def run_sum(v, x):
        if v.id == catalogue.CUB_ID:
            raise RuntimeError("boom")
        return real(v, x)

    monkeypatch.setattr(study, "run_sum", run_sum)
    peers = [catalogue.get(catalogue.CUB_ID), catalogue.get(catalogue.TORCH_SUM_ID)]
    bad, ok = study.accuracy(peers, ["seed001"], [1000], log=lambda s: None, where="cpu")["rows"]
    assert (bad["check"], bad["info"]["message"], bad["config"]) == ("error", "RuntimeError: boom",
                                                                     "seed001")  # fmt: skip
    assert "RuntimeError: boom" in bad["info"]["traceback"]
    assert ok["check"] == "ok" and "ulps" in ok["info"]


@pytest.mark.interpreter  # the GPU suite runs the study on the device
def test_reproducible_document_bits_same_at_every_offset():
    inputs = [i for i in study.reproducible_inputs() if i["n"] == 4097 and i["family"] == "normal"]
    assert [i["offset"] for i in inputs] == [0, 1, 2, 3, 0, 1, 2, 3]
    rdoc = study.reproducible(VARIANTS[:1], log=lambda s: None, inputs=inputs, where="cpu")
    by_key = rdoc["results"]["triton/tile-256"]
    float32 = {e["bits"] for k, e in by_key.items() if "/float32/" in k}
    assert len(float32) == 1
    (bits,) = float32
    want = by_key[inputs[0]["key"]]
    assert np.array([int(bits, 16)], np.uint32).view(np.float32)[0] == float.fromhex(want["hex"])
    assert not any("/bfloat16/" in k for k in by_key)  # tile-256 takes no bfloat16


def test_reproducible_inputs_are_fixed_and_cover_the_brief():
    inputs = study.reproducible_inputs()
    assert len({i["key"] for i in inputs}) == len(inputs)
    assert {i["n"] for i in inputs} == set(study.REPRO_SIZES)
    assert {i["dtype"] for i in inputs} == set(study.REPRO_DTYPES)
    assert {i["family"] for i in inputs} == set(battery.NAMES)
    assert {i["offset"] for i in inputs if i["n"] == 2**20 + 3} == {0, 1, 2, 3}


def test_study_variants_skip_host_staged_and_wrong():
    ids = [v.id for v in study.study_variants()]
    assert ids[-2:] == list(study.PEERS)
    assert not any(catalogue.get(i).staging or catalogue.get(i).wrong for i in ids)
    assert "cuda/fastest" in ids and "triton/tile-256" in ids


@pytest.mark.interpreter  # the study over the interpreter (doc)
def test_report_renders_the_accuracy_section(doc, tmp_path):
    run = tmp_path / "run.json"
    run.write_text((ROOT / "results" / "nvidia-h200" / "ladder-float32.json").read_text())
    acc = tmp_path / "accuracy.json"
    acc.write_text(json.dumps(doc))
    out = tmp_path / "report"
    assert main(["report", str(run), "--out", str(out), "--accuracy", str(acc)]) == 0
    assert "accuracy.md" in (out / "report.md").read_text()
    assert "| triton/tile-256 |" in (out / "accuracy.md").read_text()
    assert (out / "accuracy.png").is_file()


# -- usage errors -----------------------------------------------------------------------------


def _usage(capsys, *argv: str) -> str:
    assert main(["accuracy", *argv]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_unknown_family(capsys):
    assert "unknown data family 'gauss'; valid: uniform" in _usage(capsys, "--families", "gauss")


def test_bad_size(capsys):
    assert "size" in _usage(capsys, "--sizes", "2^x")


def test_unknown_and_excluded_variants(capsys):
    assert "did you mean cuda/v3-sequential" in _usage(capsys, "--variants", "v3-sequential")
    assert "not in the accuracy study" in _usage(capsys, "--variants", "cuda/v5-wrong-nosync")


def test_unwritable_json_before_any_work(tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "accuracy.json"
    assert "is a file, not a folder" in _usage(capsys, "--json", str(target))
    err = _usage(capsys, "--reproducible-json", str(target))
    assert "--reproducible-json" in err


@pytest.mark.skipif(device.gpu_available(), reason="checks the no-GPU policy")
def test_no_gpu_is_exit_2_before_any_work(tmp_path, capsys):
    target = tmp_path / "accuracy.json"
    err = _usage(capsys, "--sizes", "1000", "--json", str(target))
    assert "needs an NVIDIA GPU" in err and not target.exists()
