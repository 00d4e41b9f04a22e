"""experiments/inductor_code: its reader of Inductor's generated code and of the autotuner's
choice, its usage and no-GPU exits, its page (docs/porting-inductor.md) rendered from a capture
and kept fresh, and (on a GPU) the study at small sizes. (The real run:
benchmarks/gpu_session.sh's `inductor` step.)"""

from __future__ import annotations

import json
import types

import pytest

from experiments.inductor_code import experiment as inductor_code
from experiments.inductor_code import page
from harness.core import device

SAMPLE_WRAPPER = """
async_compile.triton('triton_red_fused_sum_0', '''
@triton_heuristics.reduction(
    size_hints={'x': 1024, 'r0_': 262144},
    reduction_hint=ReductionHint.INNER,
)
@triton.jit
def triton_red_fused_sum_0(in_ptr0, out_ptr0, xnumel, r0_numel, XBLOCK : tl.constexpr):
    xnumel = 1024
    r0_numel = 262144
    R0_BLOCK: tl.constexpr = 2048
''')
def call(args):
    triton_red_fused_sum_0.run(arg0_1, buf0, 1024, 262144, stream=stream0)
"""


def test_code_facts_reads_the_split_from_the_generated_code():
    facts = inductor_code.code_facts(SAMPLE_WRAPPER)
    assert facts["kernels"] == ["triton_red_fused_sum_0"]
    assert facts["heuristics"] == [
        {"kind": "reduction", "size_hints": "{'x': 1024, 'r0_': 262144}"}
    ]
    assert facts["reduction_hints"] == ["INNER"]
    assert facts["constants"] == {"xnumel": [1024], "r0_numel": [262144], "R0_BLOCK": [2048]}
    assert facts["launches"] == [
        {"kernel": "triton_red_fused_sum_0", "args": "arg0_1, buf0, 1024, 262144, stream=stream0"}
    ]


def test_kept_configs_reads_the_autotuners_choice():
    cfg = types.SimpleNamespace(kwargs={"XBLOCK": 1, "R0_BLOCK": 2048}, num_warps=16, num_stages=1)
    tuner = types.SimpleNamespace(launchers=[types.SimpleNamespace(config=cfg)])
    module = types.SimpleNamespace(triton_red_fused_sum_0=tuner, other=object())
    assert inductor_code.kept_configs([module]) == [
        {
            "kernel": "triton_red_fused_sum_0",
            "XBLOCK": 1,
            "R0_BLOCK": 2048,
            "num_warps": 16,
            "num_stages": 1,
        }
    ]


def test_inductor_study_cli_needs_an_out_folder():
    with pytest.raises(SystemExit) as e:
        inductor_code.main([])
    assert e.value.code == 2


def test_inductor_study_cli_needs_a_gpu(tmp_path, capsys):
    if device.gpu_available():
        pytest.skip("exercises the no-GPU path")
    assert inductor_code.main(["--out", str(tmp_path)]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err


def test_committed_page_is_what_the_captures_render():
    """docs/porting-inductor.md is this experiment's recorded result, rendered from the committed
    captures without a GPU; if this fails: python -m experiments.inductor_code --write-doc
    docs/porting-inductor.md"""
    assert (page.ROOT / page.DOC).read_text() == page.page(), page.REGEN


def test_write_doc_renders_without_a_gpu(tmp_path, capsys):
    out = tmp_path / "porting-inductor.md"
    assert inductor_code.main(["--write-doc", str(out)]) == 0
    assert out.read_text() == page.page()


def test_porting_inductor_section(tmp_path):
    assert page.inductor_section(tmp_path / "absent") == ""
    call = {
        "n": 2**28,
        "compiled": False,
        "median_us": 42478.0,
        "gb_per_s": 25.3,
        "ok": True,
        "message": "",
        "code_facts": [inductor_code.code_facts(SAMPLE_WRAPPER)],
        "kept_configs": [{"kernel": "triton_red_fused_sum_0", "XBLOCK": 1, "num_warps": 16}],
    }
    doc = {
        "versions": {"torch": "2.11", "triton": "3.6", "cuda": "13.0", "device": "GPU X"},
        "dtype": "float32",
        "sizes": [2**28],
        "modes": [
            {"mode": "dynamic", "calls": [call]},
            {"mode": "coop", "unavailable": "no such config", "calls": []},
        ],
    }
    (tmp_path / "inductor.json").write_text(json.dumps(inductor_code.document(doc)))
    (tmp_path / "inductor-dynamic.py").write_text("# the code\n")
    md = page.inductor_section(tmp_path)
    assert "torch 2.11, Triton 3.6" in md and "# the code" in md
    row = next(line for line in md.splitlines() if line.startswith("| 2^28 |"))
    assert (
        "42,478.0" in row and "R0_BLOCK 2048" in row and "`triton_red_fused_sum_0` XBLOCK=1" in row
    )
    assert "Not run: no such config" in md


@pytest.mark.gpu
def test_inductor_study_writes_code_and_json(tmp_path, monkeypatch):
    """The study at small sizes (the real run uses 2^10, 2^20, 2^28): its files, a kernel found in
    each captured file, the dynamic path recompiled once after the first size."""
    monkeypatch.setattr(inductor_code, "SIZES", (2**10, 2**14, 2**16))
    doc = inductor_code.study(tmp_path, log=lambda _: None)
    names = {p.name for p in tmp_path.iterdir()}
    assert {"inductor.json", "inductor-static.py", "inductor-dynamic.py"} <= names
    assert json.loads((tmp_path / "inductor.json").read_text())["sizes"] == [2**10, 2**14, 2**16]
    by_mode = {m["mode"]: m for m in doc["modes"]}
    for mode in ("static", "dynamic"):
        calls = by_mode[mode]["calls"]
        assert all(c["ok"] for c in calls), calls
        assert calls[0]["compiled"] and calls[0]["code_facts"][0]["kernels"]
    assert [c["compiled"] for c in by_mode["static"]["calls"]] == [True, True, True]
    assert [c["compiled"] for c in by_mode["dynamic"]["calls"]] == [True, True, False]
