"""The compiled peers without a GPU (issue 15): their catalogue records, the report's rows for them,
cuda.compute's skip reason where it is not installed, the cooperative reduction's config handling,
prepare()'s compile policy (with torch.compile replaced by a recorder: a real CPU compile takes
~7-25 s here), the inductor study's code reader and CLI, and the porting section's generator."""

from __future__ import annotations

import json
import sys
import types

import pytest
import torch

from harness.core import catalogue, device
from harness.launch import peers, peers_compiled
from harness.launch.errors import PeerUnavailable
from harness.report import ladder_table, records
from harness.report.ratios import PEER_LABELS, PEER_ORDER
from harness.studies import inductor_code, session
from porting import inductor as porting_inductor

NEW = [*catalogue.COMPILE_IDS, *catalogue.CCCL_IDS]


def test_new_peers_are_catalogue_peer_records_with_labels():
    assert NEW == [
        "peer/torch.compile",
        "peer/torch.compile-dynamic",
        "peer/torch.compile-coop",
        "peer/cuda.compute",
        "peer/cuda.compute-nondeterministic",
    ]
    for vid in NEW:
        v = catalogue.get(vid)
        assert v.backend == "peer" and v.launch is None and v.dtypes == ("float32", "int32")
        assert vid in catalogue.PEER_IDS and vid in PEER_ORDER and PEER_LABELS[vid]
        assert peers.bytes_moved(v, 1000, 4) == 4008  # a sum: n read, one result written


@pytest.fixture
def no_cccl(monkeypatch):
    """cuda.compute not importable, whatever is installed here."""
    monkeypatch.setitem(sys.modules, "cuda.compute", None)


@pytest.mark.parametrize("vid", catalogue.CCCL_IDS)
def test_cuda_compute_not_installed_is_a_reason_not_a_failure(vid, no_cccl):
    v = catalogue.get(vid)
    why = peers.unavailable_reason(v)
    assert why and "cuda.compute is not installed" in why and ".[cccl]" in why
    with pytest.raises(PeerUnavailable, match=f"{vid}: cuda.compute is not installed"):
        peers.prepare(v, torch.ones(8))
    row = session.check_and_time(v, "float32", 1000)
    assert row["status"] == "skipped" and row["message"] == f"unavailable: {vid}: {why}"
    assert row["extra"][session.UNAVAILABLE] is True
    ok = session.check_and_time(catalogue.get(catalogue.TORCH_SUM_ID), "float32", 1000)
    assert not session.failed([ok, row])  # the run does not fail for it ...
    assert session.summarize([ok, row])[session.SKIPPED] == 1  # ... and says so
    assert session.failed([ok, {**ok, "status": "error"}])  # a real error still fails it


def test_cooperative_option_where_torch_has_it_and_reason_where_not(monkeypatch):
    from torch._inductor import config

    v = catalogue.get(catalogue.COMPILE_COOP_ID)
    assert hasattr(config.triton, "cooperative_reductions")  # this torch has it
    before = config.triton.cooperative_reductions
    kw = peers_compiled.compile_kwargs(v)
    assert kw == {
        "dynamic": False,
        "fullgraph": True,
        "options": {"compile_threads": 1, peers_compiled.COOP_OPTION: True},
    }
    assert config.triton.cooperative_reductions == before  # only the compile sees the option
    assert peers.unavailable_reason(v) is None
    monkeypatch.delattr(config.triton, "cooperative_reductions")
    why = peers.unavailable_reason(v)
    assert why and "not available in this torch" in why
    with pytest.raises(PeerUnavailable, match="not available in this torch"):
        peers_compiled.compile_kwargs(v)


def test_compile_kwargs_per_peer():
    kw = {vid: peers_compiled.compile_kwargs(catalogue.get(vid)) for vid in catalogue.COMPILE_IDS}
    assert kw[catalogue.COMPILE_ID]["dynamic"] is False
    assert kw[catalogue.COMPILE_DYNAMIC_ID]["dynamic"] is True
    # each compiles in this process (no pool of compile workers to start and stop)
    assert all(k["options"]["compile_threads"] == 1 for k in kw.values())
    with pytest.raises(ValueError, match=r"not a torch\.compile peer"):
        peers_compiled.compile_kwargs(catalogue.get(catalogue.TORCH_SUM_ID))


class _RecordingCompile:
    """Stands in for torch.compile: records what it was given and every call of the result."""

    def __init__(self):
        self.compiled: list[tuple[types.FunctionType, dict]] = []
        self.calls: list[int] = []

    def __call__(self, fn, **kwargs):
        self.compiled.append((fn, kwargs))

        def run(t):
            self.calls.append(t.numel())
            return fn(t)

        return run


@pytest.mark.parametrize("vid", catalogue.COMPILE_IDS)
def test_prepare_compiles_a_fresh_function_and_warms_it(vid, monkeypatch):
    rec = _RecordingCompile()
    monkeypatch.setattr(torch, "compile", rec)
    v, n = catalogue.get(vid), 5000
    x = torch.arange(n, dtype=torch.int32)
    fn_a, fn_b = peers.prepare(v, x), peers.prepare(v, x)
    (a, kw_a), (b, _) = rec.compiled
    assert a.__code__ is not b.__code__  # each compile its own Dynamo cache
    assert kw_a == peers_compiled.compile_kwargs(v)
    first = catalogue.DYNAMIC_FIRST_N if vid == catalogue.COMPILE_DYNAMIC_ID else n
    assert rec.calls[: 2 if first != n else 1] == ([first, n] if first != n else [n])
    warm = len(rec.calls)
    assert fn_a().item() == n * (n - 1) // 2 and fn_b().item() == n * (n - 1) // 2
    assert len(rec.calls) == warm + 2  # the closures call; they compile nothing more


def _rec(vid: str, ms: float, n: int = 2**24) -> records.ResultRecord:
    from harness.core.timing import Timing

    t = Timing(median_ms=ms, min_ms=ms, p10_ms=ms, p90_ms=ms, reps=10)
    v = catalogue.get(vid)
    return records.for_variant(v, "float32", n, total=t, bytes_total=peers.bytes_moved(v, n, 4))


def test_new_peers_are_rows_in_peer_order_with_ratios_to_cub_and_torch():
    rs = [_rec(catalogue.CUB_ID, 0.1), _rec(catalogue.TORCH_SUM_ID, 0.2)]
    rs += [_rec(vid, 0.4) for vid in reversed(NEW)]
    rows = ladder_table.ladder_rows(rs, "float32", 2**24)
    got = [r.main.variant for r in rows]
    assert got == [p for p in PEER_ORDER if p in got] and set(got) == {r.variant for r in rs}
    compiled = next(r for r in rows if r.main.variant == catalogue.COMPILE_ID)
    assert compiled.main_ratios.x_cub == pytest.approx(0.25)
    assert compiled.main_ratios.x_torch == pytest.approx(0.5)
    old = ladder_table.markdown_ladder(rs[:2], "float32", 2**24)  # a run without the new peers
    assert not any(vid in old for vid in NEW)


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


def test_porting_inductor_section(tmp_path):
    assert porting_inductor.inductor_section(tmp_path / "absent") == ""
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
        "schema": records.INDUCTOR_CODE_SCHEMA,
        "versions": {"torch": "2.11", "triton": "3.6", "cuda": "13.0", "device": "GPU X"},
        "dtype": "float32",
        "sizes": [2**28],
        "modes": [
            {"mode": "dynamic", "calls": [call]},
            {"mode": "coop", "unavailable": "no such config", "calls": []},
        ],
    }
    (tmp_path / "inductor.json").write_text(json.dumps(doc))
    (tmp_path / "inductor-dynamic.py").write_text("# the code\n")
    md = porting_inductor.inductor_section(tmp_path)
    assert "torch 2.11, Triton 3.6" in md and "# the code" in md
    row = next(line for line in md.splitlines() if line.startswith("| 2^28 |"))
    assert (
        "42,478.0" in row and "R0_BLOCK 2048" in row and "`triton_red_fused_sum_0` XBLOCK=1" in row
    )
    assert "Not run: no such config" in md
