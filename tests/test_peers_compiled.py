"""The compiled peers without a GPU (issue 15): their catalogue records, the report's rows for them,
cuda.compute's skip reason where it is not installed, the cooperative reduction's config handling,
prepare()'s compile policy (with torch.compile replaced by a recorder: a real CPU compile takes
~7-25 s here),."""

from __future__ import annotations

import dataclasses
import sys
import types

import pytest
import torch

from harness.core import catalogue
from harness.launch import peers
from harness.launch.errors import PeerUnavailable
from harness.report import ladder_table, records
from harness.report.ladder_table import PEER_LABELS, PEER_ORDER
from harness.studies import session, suites

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
    [row] = session.check_and_time(v, "float32", 1000, suites.common("ladder"))
    assert row.check == "skipped" and row.info["message"] == f"unavailable: {vid}: {why}"
    assert row.info[session.UNAVAILABLE] is True
    rows = suites.run(
        [suites.Case("ladder", i, "float32", 1000) for i in (catalogue.TORCH_SUM_ID, vid)]
    )
    assert not session.failed(rows)  # the run does not fail for it ...
    assert session.summarize(rows)[session.SKIPPED] == 1  # ... and says so
    assert session.failed([*rows, dataclasses.replace(rows[0], check="error")])  # a real error


def test_cooperative_option_where_torch_has_it_and_reason_where_not(monkeypatch):
    from torch._inductor import config

    v = catalogue.get(catalogue.COMPILE_COOP_ID)
    assert hasattr(config.triton, "cooperative_reductions")  # this torch has it
    before = config.triton.cooperative_reductions
    kw = peers.compile_kwargs(v)
    assert kw == {
        "dynamic": False,
        "fullgraph": True,
        "options": {"compile_threads": 1, peers.COOP_OPTION: True},
    }
    assert config.triton.cooperative_reductions == before  # only the compile sees the option
    assert peers.unavailable_reason(v) is None
    monkeypatch.delattr(config.triton, "cooperative_reductions")
    why = peers.unavailable_reason(v)
    assert why and "not available in this torch" in why
    with pytest.raises(PeerUnavailable, match="not available in this torch"):
        peers.compile_kwargs(v)


def test_compile_kwargs_per_peer():
    kw = {vid: peers.compile_kwargs(catalogue.get(vid)) for vid in catalogue.COMPILE_IDS}
    assert kw[catalogue.COMPILE_ID]["dynamic"] is False
    assert kw[catalogue.COMPILE_DYNAMIC_ID]["dynamic"] is True
    # each compiles in this process (no pool of compile workers to start and stop)
    assert all(k["options"]["compile_threads"] == 1 for k in kw.values())
    with pytest.raises(ValueError, match=r"not a torch\.compile peer"):
        peers.compile_kwargs(catalogue.get(catalogue.TORCH_SUM_ID))


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
    assert kw_a == peers.compile_kwargs(v)
    first = catalogue.DYNAMIC_FIRST_N if vid == catalogue.COMPILE_DYNAMIC_ID else n
    assert rec.calls[: 2 if first != n else 1] == ([first, n] if first != n else [n])
    warm = len(rec.calls)
    assert fn_a().item() == n * (n - 1) // 2 and fn_b().item() == n * (n - 1) // 2
    assert len(rec.calls) == warm + 2  # the closures call; they compile nothing more


def _total(vid: str, ms: float, n: int = 2**24) -> records.Row:
    nbytes = peers.bytes_moved(catalogue.get(vid), n, 4)
    return records.Row(device="GPU", suite="ladder", variant=vid, config="", dtype="float32",
                       shape=n, metric="total", median_ms=ms, bytes=nbytes, check="ok")  # fmt: skip


def test_new_peers_are_rows_in_peer_order_with_ratios_to_cub_and_torch():
    rs = [_total(catalogue.CUB_ID, 0.1), _total(catalogue.TORCH_SUM_ID, 0.2)]
    rs += [_total(vid, 0.4) for vid in reversed(NEW)]
    rows = ladder_table.ladder_rows(records.results(rs), "float32", 2**24)
    got = [r.main.variant for r in rows]
    assert got == [p for p in PEER_ORDER if p in got] and set(got) == {r.variant for r in rs}
    compiled = next(r for r in rows if r.main.variant == catalogue.COMPILE_ID)
    assert compiled.main_ratios.x_cub == pytest.approx(0.25)
    assert compiled.main_ratios.x_torch == pytest.approx(0.5)
    old = ladder_table.markdown_ladder(rs[:2], "float32", 2**24)  # a run without the new peers
    assert not any(vid in old for vid in NEW)
