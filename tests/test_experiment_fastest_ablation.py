"""experiments/fastest_ablation (and its alias `reduce-ladder ablation`): every instantiation it
times and the launch floor compile without local memory, its table's ratios, its exit without a
GPU, triton/fastest's other splits interpreted, the grid policies, and the production grid as its
"capped" policy; on a GPU, every CUDA shape it times sums right."""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

from experiments.fastest_ablation import experiment as fastest_ablation
from experiments.fastest_ablation.experiment import grid_size
from harness.check import verify
from harness.cli.main import main as reduce_ladder
from harness.compile import nvrtc
from harness.core import catalogue, device, mappings
from harness.launch.plan import make_plan
from triton_kernels import fastest

DTYPES = catalogue.FASTEST_DTYPES
ROOT = Path(__file__).resolve().parents[1]


# -- what it compiles, and its table


@pytest.mark.skipif(not nvrtc.available(), reason="libnvrtc not installed")
def test_ablation_kernels_compile_without_spills():
    """Every instantiation the ablation times, and the launch floor, compile for sm_90 without
    local memory; the catalogue's kernel is the acq_rel one with UNROLL 8."""
    exprs = [
        fastest_ablation.cuda_expression(f, t, u)
        for f, t, u, _, _ in fastest_ablation.CUDA_SHAPES.values()
    ]
    exprs = [*dict.fromkeys(exprs), fastest_ablation.LAUNCH_FLOOR]
    r = nvrtc.compile_file("fastest.cu", "sm_90", exprs)
    assert set(r.lowered) == set(exprs)
    for name, res in r.resources.items():
        assert res.spill_store_bytes == 0 and res.stack_bytes == 0, name
    cat = catalogue.get("cuda/fastest").name_expression("float32")
    assert cat == fastest_ablation.cuda_expression(4, 256, 8).replace(", 4>", ", FAST_ACQ_REL>")
    shape = (4, 256, catalogue.FASTEST_UNROLL["float32"], 4, "capped")
    assert fastest_ablation.CUDA_SHAPES["F4 unroll 8"] == shape


def test_ablation_table_ratios_come_from_the_row():
    def t(ms):
        return {"median_ms": ms}

    row = {
        "log2n": 20,
        "verdicts": {"cuda F0 fence ticket": "ok", "cuda F4 acq_rel ticket": "ok"},
        "times": {
            "cuda F0 fence ticket": {"round1": t(0.010), "round2": t(0.011), "graph": t(0.004)},
            "cuda F4 acq_rel ticket": {"round1": t(0.008), "round2": t(0.0085)},
        },
    }
    text = fastest_ablation._table(row)
    assert "n = 2^20" in text
    f4 = next(line for line in text.splitlines() if "F4" in line)
    assert "8.00" in f4 and "8.50" in f4 and "x 1.250" in f4 and "ok" in f4


def test_ablation_without_a_gpu_says_so(capsys):
    from harness.core import device

    if device.cupy_gpu()[0]:
        pytest.skip("exercises the no-GPU path")
    assert fastest_ablation.main(["--json", "unused.json"]) == 2
    assert "needs a GPU" in capsys.readouterr().err


@pytest.mark.parametrize(
    "even, policy", [(True, "capped"), (False, "balanced"), (True, "balanced")]
)
@pytest.mark.parametrize("n", [17, 5003, 70_003])
def test_triton_fastest_other_splits_match_golden(even, policy, n, dev):
    """The ablation's other shapes of triton/fastest (the EVEN split, the balanced grid), every
    configuration, at two alignments: the same sum within the variant's bound (exact here)."""
    v = catalogue.get("triton/fastest")
    base = verify.seed_like_input(n + 1, "float32", dev)
    for off in (0, 1):
        x = base[off : off + n]
        g = verify.golden(x)
        plan = make_plan(v, x)
        launcher = fastest_ablation.triton_shape_launcher(plan, even, policy)
        for cfg in fastest.CONFIGS[:3]:
            plan.poison()
            launcher(cfg)()
            value = verify.as_number(plan.outs[0][0])
            r = verify.compare(v, "float32", n, value, g)
            assert r.ok and r.exact_required, (off, cfg, r.message)
            assert int(plan.workspace[1].item()) == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_grid_is_the_ablations_capped_catalogue_shape(dtype):
    """cuda/fastest's production grid is the ablation's "capped" policy for the catalogue's own
    threads / UNROLL / per_sm (so the ablation's catalogue row and its shapes compare alike)."""
    from harness.launch.single_launch import cuda_grid, vector_tiles

    v = catalogue.get("cuda/fastest")
    unroll = catalogue.FASTEST_UNROLL[dtype]
    cap = min(v.launch.max_blocks, v.launch.per_sm * mappings.sm_count())
    for n in (1, 17, 5003, 2**20 + 7, 2**31 + 5):
        tiles = vector_tiles(dtype, n, v.launch.threads, unroll)
        assert cuda_grid(v, dtype, n) == grid_size(tiles, cap, "capped") == min(tiles, cap)
    assert cuda_grid(v, dtype, 2**31) == cap > 1


def test_grid_policies():
    assert grid_size(10, 528, "capped") == grid_size(10, 528, "balanced") == 10
    assert grid_size(32768, 528, "capped") == 528
    # 63 rounds either way; balanced: 521 blocks, the last round 466 of them, not 32 of 528
    g = grid_size(32768, 528, "balanced")
    assert g == 521 and mappings.cdiv(32768, g) == mappings.cdiv(32768, 528) == 63
    assert 32768 - g * 62 == 466
    with pytest.raises(ValueError, match="grid policy"):
        grid_size(5, 5, "even")


@pytest.mark.gpu
@pytest.mark.parametrize("n", [5003, 2**20 + 7])
def test_ablation_cuda_shapes_match_golden(n, needs_cupy):
    """Every instantiation and grid the ablation times sums right and leaves the counter at 0."""
    v = catalogue.get("cuda/fastest")
    x = verify.seed_like_input(n + 1, "float32", "cuda")[1:]
    g = verify.golden(x)
    for label, shape in fastest_ablation.CUDA_SHAPES.items():
        plan = make_plan(v, x)
        launch = fastest_ablation.cuda_shape_launch(plan, *shape)
        plan.poison()
        launch()
        torch.cuda.synchronize()
        r = verify.compare(v, "float32", n, verify.as_number(plan.outs[0][0]), g)
        # compare() demands the exact sum where sum|x| <= 2^24 (n = 5003), the derived bound above
        assert r.ok, (label, r.message)
        assert int(plan.workspace[1].item()) == 0, label


# -- `reduce-ladder ablation`: the alias, its lazy import


@pytest.mark.skipif(device.cupy_gpu()[0], reason="exercises the no-GPU path")
def test_the_alias_without_a_gpu_exits_2_before_importing_the_experiment(tmp_path):
    """Exit 2 with one line, as before the move, and no experiment imported (a fresh process)."""
    code = (
        "import sys; from harness.cli.main import main; "
        f"rc = main(['ablation', '--json', {str(tmp_path / 'a.json')!r}]); "
        "print(rc, sorted(m for m in sys.modules if m.startswith('experiments')))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert run.stdout.split("\n")[-2] == "2 []", run.stdout + run.stderr
    assert "needs an NVIDIA GPU" in run.stderr and not (tmp_path / "a.json").exists()


def test_the_alias_runs_the_experiments_own_parser(capsys):
    assert reduce_ladder(["ablation", "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: reduce-ladder ablation ") and "--log2" in out


def test_the_alias_says_where_the_experiment_lives_when_it_is_not_installed(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "experiments.fastest_ablation", None)  # as if not there
    assert reduce_ladder(["ablation", "--help"]) == 2
    err = capsys.readouterr().err
    assert "experiments/fastest_ablation/" in err and "not installed" in err
    assert len(err.strip().splitlines()) == 1
