"""The fastest variants without a GPU: triton/fastest interpreted for every dtype, n and alignment
offset; the single-launch plan; cuda/fastest compiled by NVRTC with its SASS read (16-byte loads,
no local memory); the single-launch error bound. (NVRTC compile without spills for sm_80/sm_90:
tests/test_nvrtc.py; the ablation's other shapes: tests/test_experiment_fastest_ablation.py.)"""

import os
import subprocess

import pytest
import torch

from harness.check import verify
from harness.compile import nvrtc
from harness.core import catalogue, dtypes, mappings
from harness.launch.plan import make_plan
from harness.launch.single_launch import COUNTER_DTYPE, FastestPlan
from triton_kernels import fastest
from triton_kernels.fastest import head_elements

DTYPES = catalogue.FASTEST_DTYPES
SIZES = (1, 2, 3, 15, 16, 17, 1000, 5003, 70_003)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_triton_fastest_matches_golden_at_any_offset(dtype, n, dev):
    v = catalogue.get("triton/fastest")
    base = verify.seed_like_input(n + 3, dtype, dev)
    for off in range(4):
        x = base[off : off + n]
        r = verify.check_variant(v, x)
        assert r.ok, (off, r.message)
        assert r.exact_required  # integer data, sum < 2^24: exact in every accumulator


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64"])
def test_triton_fastest_general_floats_within_bound(dtype, dev):
    v = catalogue.get("triton/fastest")
    x = (torch.randn(70_005, device=dev) * 100).to(dtypes.torch_dtype(dtype))[1:]
    r = verify.check_variant(v, x)
    assert r.ok and not r.exact_required and r.tolerance > 0, r


def test_triton_fastest_int32_wraps_like_the_golden(dev):
    x = torch.full((5003,), 2**30, dtype=torch.int32, device=dev)
    r = verify.check_variant(catalogue.get("triton/fastest"), x)
    assert r.ok and r.golden == verify.wrap_int32(5003 * 2**30), r


def test_triton_fastest_is_deterministic_and_reusable(dev):
    x = torch.randn(70_003, device=dev)[1:]
    plan = make_plan(catalogue.get("triton/fastest"), x)
    outs = [plan.run().clone() for _ in range(3)]
    assert all(verify.same_bits(outs[0], o) for o in outs)
    assert int(plan.workspace[1].item()) == 0  # the counter is back at 0 after each launch


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_single_launch_plan_is_one_launch(dtype, dev):
    """The single-launch family's own plan: one launch, its output and workspace, the Plan
    protocol (run with either flag, poison, restore, bytes_moved, n, launch_count, first_blocks)."""
    n = 70_003
    x = verify.seed_like_input(n + 1, dtype, dev)[1:]
    plan = make_plan(catalogue.get("triton/fastest"), x)
    assert isinstance(plan, FastestPlan)
    assert plan.variant.id == "triton/fastest" and plan.dtype == dtype and plan.x is x
    assert plan.n == n and plan.launch_count == 1
    (out,) = plan.outs
    partials, counter = plan.workspace
    assert out.shape == (1,) and out.dtype == dtypes.get(dtype).sum_torch == partials.dtype
    assert counter.dtype == COUNTER_DTYPE and int(counter.item()) == 0
    # the grid it launches: the default configuration's, from the bulk after the head
    cfg = fastest.DEFAULT
    sms = mappings.sm_count()
    assert plan.first_blocks == fastest.program_count(cfg, n - head_elements(x), sms)
    assert 1 < plan.first_blocks <= partials.numel()
    golden = verify.golden(x).value
    plan.poison()
    assert verify.as_number(out[0]) != golden
    plan.restore()  # nothing to restore: the input is only read
    assert plan.run(first_pass_only=True) is out
    assert verify.as_number(out[0]) == golden  # integer data: exact
    assert plan.run(restore=False) is out
    # n elements read and one written, in the input's itemsize (the multi-pass Plan's count)
    itemsize = x.element_size()
    assert plan.bytes_moved() == plan.bytes_moved(first_pass_only=True) == (n + 1) * itemsize


def test_triton_census_spec_names_the_plans_workspace():
    """The census compiles fastest_kernel with the argument dtypes the plan allocates."""
    for dtype in DTYPES:
        spec = fastest.triton_census_spec(dtype)
        assert spec["args"]["count_ptr"] == (dtypes.name_of(COUNTER_DTYPE), True)
        assert spec["args"]["out_ptr"][0] == dtypes.name_of(dtypes.get(dtype).sum_torch)
        assert spec["meta"]["ONE_PROGRAM"] is False and spec["meta"]["EVEN"] is False


def test_half_types_return_float32():
    assert dtypes.get("float16").sum_torch == dtypes.get("bfloat16").sum_torch == torch.float32
    assert (
        dtypes.get("int32").sum_torch == torch.int32
        and dtypes.get("float64").sum_torch == torch.float64
    )


def test_head_elements_reach_the_16_byte_boundary():
    base = torch.zeros(64, dtype=torch.float32)
    assert base.data_ptr() % 16 == 0
    assert [head_elements(base[i:]) for i in range(5)] == [0, 3, 2, 1, 0]
    assert head_elements(base[1:3]) == 2  # capped at n
    h = torch.zeros(64, dtype=torch.float16)
    assert head_elements(h[1:]) == 7


def test_fastest_records():
    c, t = catalogue.get("cuda/fastest"), catalogue.get("triton/fastest")
    assert c.family == t.family == "fastest" and c.stage == t.stage == "fastest"
    assert c.counterpart == t.id and t.counterpart == c.id
    assert c.twin is None and t.twin is None  # not tile twins
    assert set(c.dtypes) == set(t.dtypes) == set(DTYPES)
    assert c.max_n > 2**31 and t.max_n > 2**31
    # the ladder's seeds keep their own dtypes
    for v in catalogue.select(family="ladder"):
        assert set(v.dtypes) <= {"float32", "int32"}, v.id


@pytest.mark.parametrize(("sms", "per_thread"), [(2, 16386), (132, 258)])
def test_single_launch_bound_grows_with_the_per_lane_work(sms, per_thread, monkeypatch):
    # cuda/fastest at 2^25: 2^25 / (256 threads x 32 tiles) = 4096 tiles over a grid of
    # min(2048, 4 * SMs) blocks: 2 SMs: 512 steps, 512 * 32 + 2 (head, tail) = 16386;
    # 132 SMs (an H100): ceil(4096 / 528) = 8 steps, 8 * 32 + 2 = 258.
    from harness.core import mappings

    monkeypatch.setattr(mappings, "sm_count", lambda: sms)
    launch = catalogue.get("cuda/fastest").launch
    (p,) = mappings.plan_passes(launch, 2**25)
    assert p.blocks == 1 and p.per_thread == per_thread
    assert launch.chain_length(2**25) > launch.chain_length(2**10)


def _cuobjdump() -> str | None:
    import triton

    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    return path if os.access(path, os.X_OK) else None


@pytest.mark.skipif(not nvrtc.available(), reason="libnvrtc not installed")
@pytest.mark.skipif(_cuobjdump() is None, reason="no cuobjdump in the Triton wheel")
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_cuda_fastest_sass_uses_16_byte_loads(arch, tmp_path):
    v = catalogue.get("cuda/fastest")
    exprs = [v.name_expression(d) for d in v.dtypes]
    r = nvrtc.compile_file("fastest.cu", arch, exprs)
    cubin = tmp_path / "fastest.cubin"
    cubin.write_bytes(r.cubin)
    sass = subprocess.run(
        [_cuobjdump(), "-sass", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    funcs = {}
    for chunk in sass.split("Function : ")[1:]:
        funcs[chunk.split()[0]] = chunk
    for dtype in v.dtypes:
        body = funcs[r.lowered[v.name_expression(dtype)]]
        # the UNROLL loads of the main loop, all issued before the first add, 16 bytes each
        assert body.count("LDG.E.128") >= 2 * catalogue.FASTEST_UNROLL[dtype], dtype
        assert "LDL" not in body and "STL" not in body, dtype  # no local memory
        assert "ATOMG" in body or "RED" in body or "ATOM" in body, dtype  # the ticket
    f32 = funcs[r.lowered[v.name_expression("float32")]]
    loop = f32.split("LDG.E.128", 1)[1].split("BRA", 1)[0]
    # within the main loop, the 4 vector loads come before any FADD
    first_loads = f32.split("LDG.E.128")[1 : catalogue.FASTEST_UNROLL["float32"]]
    assert all("FADD" not in seg for seg in first_loads), "loads interleaved with adds"
    assert loop
    # the guarded last tile: every predicated 16-byte load before the first add (one memory round
    # trip, not one per vector: the compiler serialized them when each load had its own add)
    lines = [ln for ln in f32.splitlines() if "/*0" in ln]
    guarded = [i for i, ln in enumerate(lines) if "LDG.E.128" in ln and "@" in ln]
    assert len(guarded) >= catalogue.FASTEST_UNROLL["float32"]
    assert not any("FADD" in ln for ln in lines[guarded[0] : guarded[-1]])


def test_triton_fastest_ptx_for_sm90_has_16_byte_loads_and_ordered_finish():
    """Compile triton/fastest for sm_90 without a GPU (the census's compile path: a child process
    without the interpreter, ptxas from the wheel; a compile error fails the test) and read the
    PTX: 16-byte loads in the main loop, the ticket as an acq_rel atomic after a barrier, volatile
    loads of the partials, no local memory."""
    import re

    from porting import census

    v = catalogue.get("triton/fastest")
    job = census.triton_job(v, "float32", "sm_90")
    assert job["meta"]["EVEN"] is False and job["meta"]["BLOCK"] == 4096
    ptx = census.run_triton_jobs([job])[0]["ptx"]
    assert len(re.findall(r"ld\.global(?:\.\w+)*\.v4\.b32", ptx)) >= 4  # 4096 / 256 lanes / 4
    assert re.search(
        r"bar\.sync[^\n]*\n(?:[^\n]*\n){0,8}[^\n]*atom\.global\.gpu\.acq_rel\.add", ptx
    )
    assert re.search(r"ld\.volatile\.global", ptx)
    assert ".local" not in ptx
