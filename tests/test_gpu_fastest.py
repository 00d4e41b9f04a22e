"""The fastest variants on the GPU: every dtype, the issue's sizes, alignment offsets 0..3, exact
where exactness is owed and within the stated bound otherwise; bit-identical repeated launches;
the counter left at 0; CUDA-graph capture; every Triton candidate configuration; n > 2^31.
Skipped (with the reason) without a GPU. (The ablation's other CUDA shapes:
tests/test_experiment_fastest_ablation.py.)"""

import pytest
import torch

import harness
from harness.check import verify
from harness.core import catalogue, dtypes
from harness.launch.plan import make_plan
from tests import exact_data

pytestmark = pytest.mark.gpu

FASTEST = ["cuda/fastest", "triton/fastest"]
DTYPES = catalogue.FASTEST_DTYPES
SIZES = (1, 2, 3, 15, 16, 17, 1000, 2**16 + 3, 2**20 + 7, 2**24, 2**27 + 5)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vid", FASTEST)
def test_matches_golden_at_offsets_0_to_3(vid, dtype, n, needs_cupy):
    # exact in every dtype and order (tests/exact_data.py); the poison past base's end catches an
    # over-read at offset 3, the data past the view's end at offsets 0-2 move the sum as well
    v = catalogue.get(vid)
    base = exact_data.signed_integers(n + 3, dtype, seed=n)
    for off in range(4):
        x = base[off : off + n]
        r = verify.check_variant(v, x)
        assert r.ok, (off, r.message)
        assert r.value == exact_data.exact_total(x), (off, r.value)
    del base


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
@pytest.mark.parametrize("vid", FASTEST)
def test_general_floats_within_bound(vid, dtype, needs_cupy):
    x = (torch.randn(2**22 + 5, device="cuda") * 100).to(dtypes.torch_dtype(dtype))
    for off in (0, 1):
        r = verify.check_variant(catalogue.get(vid), x[off:])
        assert r.ok and r.tolerance > 0, r.message


@pytest.mark.parametrize("dtype", ["int32"])
@pytest.mark.parametrize("vid", FASTEST)
def test_int32_wraps_exactly(vid, dtype, needs_cupy):
    x = torch.randint(-(2**31), 2**31 - 1, (2**24 + 1,), dtype=torch.int32, device="cuda")
    r = verify.check_variant(catalogue.get(vid), x[1:])
    assert r.ok and r.exact_required, r.message


@pytest.mark.parametrize("n", [5000, 2**20 + 7, 2**25 + 1])
@pytest.mark.parametrize("vid", FASTEST)
def test_deterministic_and_counter_resets(vid, n, needs_cupy):
    x = torch.randn(n + 1, device="cuda")[1:]
    plan = make_plan(catalogue.get(vid), x)
    outs = []
    for _ in range(5):
        plan.poison()
        outs.append(plan.run().clone())
        assert int(plan.workspace[1].item()) == 0, "counter not reset"
    assert all(verify.same_bits(outs[0], o) for o in outs), [float(o) for o in outs]
    r = verify.compare(plan.variant, "float32", n, float(outs[0].item()), verify.golden(x))
    assert r.ok, r.message


@pytest.mark.parametrize("vid", FASTEST)
def test_cuda_graph_capture(vid, needs_cupy):
    from harness.core import timing

    x = torch.randn(2**20 + 3, device="cuda")
    plan = make_plan(catalogue.get(vid), x)
    ref = plan.run().clone()
    t = timing.graph_ms(plan.run, calls=5, replays=3)
    assert t.median_ms > 0
    assert verify.same_bits(plan.outs[0], ref)
    assert int(plan.workspace[1].item()) == 0


@pytest.mark.parametrize("dtype", DTYPES)
def test_cuda_plan_launches_its_grid(dtype, needs_cupy):
    from harness.launch.single_launch import FastestPlan, cuda_grid

    v = catalogue.get("cuda/fastest")
    x = verify.seed_like_input(2**20 + 7, dtype, "cuda")
    plan = make_plan(v, x)
    assert isinstance(plan, FastestPlan) and plan.launch_count == 1
    assert plan.first_blocks == cuda_grid(v, dtype, x.numel()) > 1
    assert plan.first_blocks <= plan.workspace[0].numel()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_every_triton_candidate_configuration(dtype, needs_cupy, monkeypatch):
    from triton_kernels import fastest

    name = torch.cuda.get_device_name()
    v = catalogue.get("triton/fastest")
    for n in (2**20 + 7, 2**24 + 3):
        # exact data between poison, at offsets 0..3 (the scalar head): the sum must be exact, so
        # a configuration that drops its partial tile or the head fails (the tuner may pick any)
        base = exact_data.signed_integers(n + 3, dtype, seed=n)
        for cfg in fastest.CONFIGS:  # a cached choice is used as is (no timing)
            monkeypatch.setitem(fastest._chosen, (name, dtype, fastest.bucket(n)), cfg)
            for k in range(4):
                x = base[k : k + n]
                r = verify.check_variant(v, x, exact=True)
                assert r.ok and r.tolerance == 0, (cfg, n, k, r.message)


def test_triton_autotune_picks_and_caches(needs_cupy, monkeypatch):
    from triton_kernels import fastest

    monkeypatch.setenv("REDUCE_LADDER_TRITON_TUNE", "1")
    monkeypatch.setattr(fastest, "_chosen", {})
    x = verify.seed_like_input(2**22, "float32", "cuda")
    r = verify.check_variant(catalogue.get("triton/fastest"), x)
    assert r.ok, r.message
    assert len(fastest._chosen) == 1 and next(iter(fastest._chosen.values())) in fastest.CONFIGS


@pytest.mark.parametrize("vid", FASTEST)
def test_api_half_returns_float32(vid, needs_cupy):
    # 1..64 repeating (no constant data: n * x[0] = 4097 is not the sum):
    # 64 * (1 + ... + 64) + 1 = 64 * 2080 + 1 = 133121, above float16's range (65504)
    x = (torch.arange(4097, device="cuda") % 64 + 1).to(torch.float16)
    s = harness.reduce_sum(x, vid)
    assert s.dtype == torch.float32 and float(s) == 133121


@pytest.mark.slow
@pytest.mark.parametrize("vid", FASTEST)
def test_more_than_2_31_elements(vid, needs_cupy):
    # +-1 with random signs (every partial sum stays far below 2^24: exact, tests/exact_data.py)
    # and distinct powers of two around and past index 2^31: the result must EQUAL the exact sum,
    # so a 32-bit index that wraps, or a missed last tile, shows.
    x = exact_data.signs_with_marks(2**31 + 5)
    view = x[1:]
    want = exact_data.exact_total(view)
    r = verify.check_variant(catalogue.get(vid), view)
    assert r.ok and r.value == want, (r.value, want, r.message)
    del x, view
    torch.cuda.empty_cache()
