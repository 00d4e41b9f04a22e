"""Seed 001 without a GPU: the host loop's pass and chunk planning, the kernels' index logic (no
read/write race within a step; the seed's first V1 attempt has one), the exact golden, the
adversarial input, the catalogue records and the `host` command's no-GPU path."""

import itertools
import math
import types
from fractions import Fraction

import numpy as np
import pytest
import torch

from harness.check import verify
from harness.cli.main import main
from harness.core import catalogue, device
from harness.core.mappings import cdiv
from harness.studies import host, host_plan, session
from harness.studies.host_plan import TILE

HOST_IDS = [v.id for v in catalogue.select(family="001")]


def emulate(x: np.ndarray, tree: str) -> np.generic:
    """The CUDA kernels' arithmetic in numpy, pass by pass, in x's dtype (float32 rounds after
    every add, int32 wraps): tree "interleaved" is V0's order, "sequential" V1's (= V2, V3, V4:
    V4 adds the same pairs in the same order). Out-of-range elements are padded with 0, which
    equals the kernels' `right < n` skip since v + 0 = v. The GPU results must match it BIT FOR BIT.
    """
    if tree not in ("interleaved", "sequential"):
        raise ValueError(f"unknown tree {tree!r}")
    a = np.asarray(x).reshape(-1)
    while True:
        blocks = cdiv(a.size, TILE)
        t = np.zeros((blocks, TILE), dtype=a.dtype)
        t.reshape(-1)[: a.size] = a
        with np.errstate(over="ignore"):
            if tree == "interleaved":
                stride = 1
                while stride < TILE:
                    t[:, 0 :: 2 * stride] += t[:, stride :: 2 * stride]
                    stride *= 2
            else:
                stride = TILE // 2
                while stride >= 1:
                    t[:, :stride] += t[:, stride : 2 * stride]
                    stride //= 2
        a = t[:, 0].copy()
        if blocks == 1:
            return a[0]


# -- planning ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "n,launches",
    [
        (1, 1),
        (2047, 1),
        (2048, 1),
        (2049, 2),
        (2**22, 2),
        (2**22 + 1, 3),
        (2**33, 3),
        (2**31 + 3, 3),
    ],
)
def test_launch_count_is_log_2048_of_n(n, launches):
    # The seed: "2^11, 2^22, 2^33 need 1, 2, 3 launches".
    ps = host_plan.host_passes(n)
    assert len(ps) == launches
    assert ps[0].blocks == math.ceil(n / 2048) and ps[-1].blocks == 1
    for a, b in itertools.pairwise(ps):
        assert b.n == a.blocks


def test_grid_past_2_31_elements_fits_in_x():
    p = host_plan.host_passes(2**31 + 3)[0]
    assert p.blocks == 2**20 + 1 < 2**31 - 1


@pytest.mark.parametrize("n", [1, 2047, 2048, 2049, 10_000, 2**22 + 5])
@pytest.mark.parametrize("chunk", [1, 2048, 3000, 2**20])
def test_chunks_partition_and_land_where_one_pass_would(n, chunk):
    ranges = host_plan.chunk_ranges(n, chunk)
    assert ranges[0][0] == 0 and ranges[-1][1] == n
    assert all(b0 == a1 for (_, b0), (a1, _) in itertools.pairwise(ranges))
    assert all(a % TILE == 0 for a, _ in ranges)  # a chunk's partials start at a / TILE
    # chunk [a, b) writes partials [a / TILE, a / TILE + its blocks): one pass's, in order
    slots = [(a // TILE, a // TILE + cdiv(b - a, TILE)) for a, b in ranges]
    assert slots[0][0] == 0 and slots[-1][1] == host_plan.host_passes(n)[0].blocks
    assert all(e == s for (_, e), (s, _) in itertools.pairwise(slots))
    assert host_plan.round_chunk(chunk) % host_plan.TILE == 0


# -- the kernels' index logic, in pure Python ----------------------------------------------------


def _steps(kind: str, threads: int = 1024):
    """(reads, writes) per thread for each step of a block of `threads` threads."""
    if kind == "v0":
        stride, active = 1, threads
        while active:
            yield {
                i: ({i * 2 * stride, i * 2 * stride + stride}, {i * 2 * stride})
                for i in range(active)
            }
            stride, active = stride * 2, active // 2
    elif kind == "v1":
        stride = active = threads
        while active:
            yield {i: ({i, i + stride}, {i}) for i in range(active)}
            stride, active = stride // 2, active // 2
    else:  # the seed's first V1 attempt: input[block_start + tid] = input[2 tid] + input[2 tid + 1]
        active = threads
        while active:
            yield {i: ({2 * i, 2 * i + 1}, {i}) for i in range(active)}
            active //= 2


def _conflicts(step: dict) -> int:
    writer = {w: t for t, (_, ws) in step.items() for w in ws}
    return sum(1 for t, (rs, _) in step.items() for r in rs if writer.get(r, t) != t)


@pytest.mark.parametrize("kind", ["v0", "v1"])
def test_no_thread_reads_a_slot_another_writes_in_the_same_step(kind):
    assert all(_conflicts(s) == 0 for s in _steps(kind, 64))


def test_the_seeds_first_v1_attempt_had_the_race_it_describes():
    assert sum(_conflicts(s) for s in _steps("seed-v1-first", 64)) > 0


@pytest.mark.parametrize("n", [1, 2, 2047, 2048, 2049, 5000, 2**22 + 7])
@pytest.mark.parametrize("tree", ["interleaved", "sequential"])
def test_emulated_host_loop_sums_integers_exactly(n, tree):
    x = np.random.default_rng(n).integers(-50, 100, n).astype(np.int64)
    assert int(emulate(x, tree)) == int(x.sum())


def test_emulated_int32_wraps_as_the_golden_does():
    x = np.full(5000, 2**30, dtype=np.int32)
    g = host.exact_golden(torch.from_numpy(x))
    assert int(emulate(x, "sequential")) == g.value == ((5000 * 2**30 + 2**31) % 2**32) - 2**31


# -- golden and adversarial input ------------------------------------------------------------------


def test_exact_golden_of_general_floats_is_exact():
    x = torch.randn(10_001, generator=torch.Generator().manual_seed(1)) * 1e3
    g = host.exact_golden(x)
    exact = sum(Fraction(float(v)) for v in x.tolist())
    assert not g.integer_valued and g.own_error == 0
    assert g.value == float(exact)  # fsum is correctly rounded


def test_exact_golden_of_integer_valued_floats_is_an_int():
    x = torch.randint(0, 100, (100_003,), dtype=torch.int32).float()
    g = host.exact_golden(x)
    assert g.integer_valued and g.value == int(x.long().sum())


def test_exact_golden_past_int64_friendly_floats_is_exact():
    # cancelling huge values around small ones, and integer-valued floats too large for the int64
    # path: both summed exactly in binary (a float64 sum would lose the 1.5 and the 1)
    x = torch.tensor([1e30, 1.5, -1e30, 2.0**40, 1.0, -(2.0**40)], dtype=torch.float32)
    g = host.exact_golden(x)
    exact = sum(Fraction(float(v)) for v in x.tolist())
    assert g.value == float(exact) == 2.5 and not g.integer_valued
    assert g.abs_sum == float(sum(abs(Fraction(float(v))) for v in x.tolist()))


@pytest.mark.parametrize("n", [2**12, 2**16 + 3])
def test_adversarial_input_defeats_the_naive_sum_but_not_the_trees(n):
    x = host.adversarial_input(n)
    g = host.exact_golden(x)
    assert g.value == 2**24 + n - 1
    naive = host.naive_running_sum(x)
    assert naive == 2.0**24  # every one of the n-1 ones lost
    bound = verify.tolerance(catalogue.get("cuda/001-v1-gmem-sequential"), "float32", n, g)
    assert 0 < bound < abs(naive - g.value)  # the naive error is visibly outside the bound
    for tree in ("interleaved", "sequential"):
        assert abs(float(emulate(x.numpy(), tree)) - g.value) <= bound


# -- catalogue and commands ------------------------------------------------------------------------


def test_host_records():
    by_seed = {s: v for v in catalogue.select(family="001") for s in v.seeds}
    assert sorted(by_seed) == [f"001:V{i}" for i in range(5)]
    stagings = {s: by_seed[s].staging for s in by_seed}
    assert stagings == {
        "001:V0": "pageable",
        "001:V1": "pageable",
        "001:V2": "pinned",
        "001:V3": "streams",
        "001:V4": "pinned",
    }
    for v in catalogue.select(family="001"):
        assert v.launch.threads == 1024 and v.launch.tiles == 2 and v.max_n > 2**32
        assert set(v.dtypes) == {"float32", "int32"}
        if v.backend == "cuda":
            twin = catalogue.get(v.twin)
            assert twin.family == "001" and twin.staging == v.staging
    # V2 and V3 launch V1's kernel (the seed's V2 = V1 + pinned memory; V3 = + streams).
    v1 = catalogue.get("cuda/001-v1-gmem-sequential").kernel
    assert catalogue.get("cuda/001-v2-pinned").kernel == v1
    assert catalogue.get("cuda/001-v3-streams").kernel == v1


def test_ladder_selection_leaves_seed_001_out_unless_named():
    assert not [v for v in session.ladder_variants("float32") if v.family == "001"]
    named = session.ladder_variants("float32", ["cuda/001-v4-smem"])
    assert [v.id for v in named] == ["cuda/001-v4-smem"]


def test_host_command_bad_usage_exits_2(capsys):
    assert main(["host", "--variants", "cuda/v3-sequential"]) == 2
    assert "cuda/001-v0-gmem-interleaved" in capsys.readouterr().err
    assert main(["host", "--streams", "0"]) == 2
    assert main(["host", "--pipeline", "4"]) == 2
    assert main(["host", "--sizes", "0"]) == 2


@pytest.mark.skipif(device.gpu_available(), reason="exercises the no-GPU path")
def test_host_command_without_gpu_says_so_and_exits_2(capsys):
    assert main(["host", "--sizes", "2^11"]) == 2
    err = capsys.readouterr().err
    assert "needs an NVIDIA GPU" in err and "Traceback" not in err


# -- the suite on the CPU, SYNTHETIC times (the logic only; no measured numbers) -----------------


@pytest.fixture
def on_cpu(monkeypatch):
    """host.measure with staging, trips and timing replaced by CPU stand-ins: every trip 2 ms end
    to end (p10-p90 spread 0.2 ms; 1.5 ms H2D + 0.2 ms kernels where split), the copy alone 1 ms
    pinned and 4 ms pageable, the kernels alone 0.2 ms; a variant in the yielded list sums off by
    one (a wrong sum, as the exact golden tells)."""
    from harness.core.timing import Timing

    wrong: list[str] = []
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)

    def runner(v, s, **pipe):
        value = int(s.host.sum()) + (v.id in wrong)
        check = lambda g: verify.compare(v, "float32", s.n, value, g)  # noqa: E731
        return types.SimpleNamespace(check=check, trip=None)

    def timed(trip, *, reps, split=True):
        times = {"device": 1.8, "d2h": 0.1} | ({"h2d": 1.5, "kernels": 0.2} if split else {})
        return Timing(2.0, 1.9, 1.95, 2.15, 5), times

    fakes = {"stage": lambda x: types.SimpleNamespace(host=x, n=x.numel()),
             "HostRunner": runner, "time_trips": timed,
             "peer_trip": lambda kind, s: lambda ev=None: float(s.host.sum()),
             "h2d_alone": lambda s, pinned: 1.0 if pinned else 4.0,
             "kernels_alone": lambda v, s: 0.2}  # fmt: skip
    for name, fake in fakes.items():
        monkeypatch.setattr(host, name, fake)
    monkeypatch.setattr(session, "_kept", {})
    yield wrong


SMALL = {"sizes": [2**11, 2**12], "sweep_sizes": [2**22], "streams": [1, 2],
         "chunks": [2**20, 2**21]}  # fmt: skip


def _measured(**settings) -> list:
    from harness.studies import suites

    found = host.cases(host.host_variants(), **(SMALL | settings))
    return suites.run([suites.Case("host", *c) for c in found])


def test_the_suite_measures_every_part_into_rows(on_cpu):
    """A row set per size and variant or peer (e2e, then the event split), the wrong sum marked
    wrong, GB/s from the bytes and the time; the adversarial input's checks; the sweep over every
    streams x chunk beside the copy alone, the kernels alone and V2."""
    on_cpu.append(HOST_IDS[0])
    rows = _measured()
    e2e = [r for r in rows if r.metric == "e2e" and r.config == ""]
    assert [(r.n, r.variant) for r in e2e] == [
        (n, v) for n in SMALL["sizes"] for v in [*(v.id for v in host.host_variants()), *host.PEERS]
    ]
    assert {r.variant for r in e2e if r.check != "ok"} == {HOST_IDS[0]}
    assert all(r.bytes == 4 * r.n and r.info["spread_ms"] == pytest.approx(0.2) for r in e2e)
    streams = {r.variant for r in rows if r.metric == "h2d" and r.config == ""}
    assert catalogue.get("cuda/001-v3-streams").id not in streams  # the pipeline is not split
    adv = {r.variant: r for r in rows if r.config == "adversarial"}
    assert adv[host.NAIVE].info["check"]["value"] == 2.0**24 and adv[HOST_IDS[1]].check == "ok"
    sweep = [r for r in rows if r.config.startswith("sweep streams=") and r.metric == "e2e"]
    assert [r.config for r in sweep] == [
        f"sweep streams={k} chunk={c}" for c in (2**20, 2**21) for k in (1, 2)
    ]
    refs = {(r.variant, r.metric): r.median_ms for r in rows if r.config == "sweep"}
    assert refs == {("H2D pinned", "h2d"): 1.0, ("H2D pageable", "h2d"): 4.0,
                    ("cuda/001-v3-streams", "kernels"): 0.2, ("cuda/001-v2-pinned", "e2e"): 2.0,
                    **{("cuda/001-v2-pinned", m): t for m, t in (("device", 1.8), ("d2h", 0.1),
                       ("h2d", 1.5), ("kernels", 0.2))}}  # fmt: skip


def test_a_pipeline_not_the_default_is_in_the_config_and_a_part_can_be_skipped(on_cpu):
    found = host.cases(host.host_variants(["cuda/001-v3-streams"]), [2**11], pipeline=(2, 3000),
                       adversarial=False, sweep_sizes=[])  # fmt: skip
    assert found[0] == ("cuda/001-v3-streams", "float32", 2**11, "streams=2 chunk=4096")
    assert {c[3] for c in found[1:]} == {""}  # the peers
    no_v3 = host.host_variants(["cuda/001-v4-smem"])
    assert not host.cases(no_v3, [], adversarial=False, sweep_sizes=[2**22])  # no pipeline


def test_the_page_renders_every_part_and_the_finding(on_cpu):
    from harness.report import host_tables

    on_cpu.append(HOST_IDS[1])
    page = host_tables.markdown({"device": {"name": "GPU"}}, _measured())
    assert "| 11 | 2.000 | WRONG |" in page and "T-streams" in page and "dev 1.800" in page
    assert "| 1.500 + 0.200 (75%) |" in page  # H2D + kernels (H2D share of end to end)
    assert "exact sum 20971519; a naive float32 running sum gives 16777216" in page
    assert "| 1,048,576 x4 | 2.000 (8.4) | 2.000 (8.4) |" in page
    assert "pinned H2D alone 1.000 ms = 16.8 GB/s" in page and "V2 one copy 2.000 ms" in page
    assert "No stream count beat one stream" in page


def test_sweep_finding_states_a_win_only_above_the_spread():
    from harness.report import host_tables
    from harness.report.records import Row

    def row(ms, spread):
        return Row("GPU", "host", "v", "", "float32", 2**25, "e2e", ms, bytes=2**27,
                   info={"spread_ms": spread})  # fmt: skip

    pinned, pageable = row(2.5, 0), row(9.0, 0)
    win = {(2**20, 1): row(3.0, 0.01), (2**20, 4): row(2.6, 0.01)}
    text = host_tables.sweep_finding(2**25, win, pinned, pageable, 2.9)
    assert "Streams beat one stream" in text and "4 streams" in text and "copy-engine" in text
    tie = {(2**20, 1): row(3.0, 0.5), (2**20, 4): row(2.8, 0.5)}
    assert "No stream count beat one stream" in host_tables.sweep_finding(
        2**25, tie, pinned, pageable, 2.9
    )


@pytest.mark.parametrize("wrong", [None, HOST_IDS[2]])
def test_host_command_prints_the_page_it_writes(monkeypatch, capsys, tmp_path, on_cpu, wrong):
    """`reduce-ladder host` with the device parts replaced: the JSON document loads as the host
    suite's rows, stdout holds the page `report --host` renders from it, a wrong sum exits 1."""
    from harness.cli import common
    from harness.report import host_tables

    on_cpu += [wrong] if wrong else []
    monkeypatch.setattr(common, "require_gpu", lambda *a, **k: None)
    monkeypatch.setattr(device, "cupy_gpu", lambda: (True, ""))
    out = tmp_path / "host.json"
    argv = ["host", "--quiet", "--json", str(out), "--sizes", "2^11", "--sweep-sizes", "2^22",
            "--streams", "1,2", "--chunk", "2^20"]  # fmt: skip
    assert main(argv) == (1 if wrong else 0)
    doc = host_tables.load(out)
    page = host_tables.markdown(doc.raw, doc.rows)
    printed = capsys.readouterr().out
    assert page in printed and "Finding:" in page and "adversarial input" in page
    assert doc.raw["method"] == host.METHOD and doc.raw["options"]["sweep_sizes"] == [2**22]
    assert (f"{wrong} " in printed.split(page)[1]) == bool(wrong)  # the failure said after it
