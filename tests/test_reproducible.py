"""Family "reproducible" without a GPU: the geometry, the numpy model's own properties, the Triton
kernel under the interpreter equal to the model bit for bit (any grid, misaligned views, 16-bit
inputs, NaN / Inf), the catalogue records and mapping, the plan, and the CUDA source compiled by
NVRTC (every instantiation the plan can pick, no spills, vector loads)."""

import os
import re
import subprocess

import numpy as np
import pytest
import torch

import harness
from harness.compile import nvrtc
from harness.core import catalogue, mappings
from harness.launch import reproducible_plan
from harness.launch.plan import make_plan
from tests import exact_data
from triton_kernels.reproducible import reference_sum

TRITON = "triton/reproducible"
CUDA = "cuda/reproducible"


def _triton(x: torch.Tensor, grid: int | None = None) -> bytes:
    v = catalogue.get(TRITON)
    dtype = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
    plan = reproducible_plan.make_plan(v, dtype.get(x.dtype, "float64"), x, grid=grid)
    plan.poison()
    return plan.run().numpy().tobytes()


def _model(x: torch.Tensor) -> bytes:
    host = x.float() if x.dtype == torch.bfloat16 else x
    return reference_sum(host.numpy()).tobytes()


def test_geometry_depends_on_n_only():
    assert mappings.chunk_size(1) == 4096
    assert mappings.chunk_size(2**21) == 4096  # 512 chunks of the smallest size
    assert mappings.chunk_size(2**21 + 1) == 8192
    assert mappings.chunk_size(2**25) == 2**16
    assert mappings.chunk_size(2**30) == 2**21
    for n in (1, 4095, 4096, 4097, 2**25 - 1, 2**25 + 1, 3 * 2**30 + 7, 2**36 + 5):
        c, m = mappings.chunk_size(n), mappings.chunk_count(n)
        assert c & (c - 1) == 0 and c >= 4096 and (m - 1) * c < n <= m * c <= n + c - 1
        assert m <= mappings.MAX_CHUNKS and mappings.lane_steps(n) * 1024 == c


def test_model_is_exact_on_integers_and_keeps_small_terms():
    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, 70001).astype(np.float32)
    assert reference_sum(x) == np.float32(int(x.astype(np.int64).sum()))
    # seed 001's lesson: 2^24 then ones; a float32 running sum stays at 2^24, this does not
    ones = np.ones(100_000, dtype=np.float32)
    ones[0] = 2.0**24
    assert reference_sum(ones) == np.float32(2**24 + 99_999)
    # cancellation: 1e30, 1, -1e30 repeated sums to exactly the ones
    mixed = np.tile(np.array([1e30, 1, -1e30], dtype=np.float32), 5000)
    assert reference_sum(mixed) == np.float32(5000)


def test_model_nan_inf_zero_and_empty():
    x = np.ones(9000, dtype=np.float32)
    assert reference_sum(np.zeros(0, dtype=np.float32)) == 0.0
    assert reference_sum(np.zeros(5, dtype=np.float32)).tobytes() == np.float32(0).tobytes()
    x[17] = np.inf
    assert reference_sum(x) == np.inf
    x[8000] = -np.inf
    assert np.isnan(reference_sum(x))
    y = np.ones(9000, dtype=np.float32)
    y[5] = np.nan
    assert np.isnan(reference_sum(y))
    big = np.full(9000, 3e38, dtype=np.float32)  # the float64 lanes do not overflow; float32 does
    assert reference_sum(big) == np.inf
    assert reference_sum(np.array([1e300, 1e300, -1e300], dtype=np.float64)) == 1e300
    assert reference_sum(np.array([1.5], dtype=np.float32)) == np.float32(1.5)


@pytest.mark.interpreter  # tests/test_gpu_reproducible.py: the compiled kernel
@pytest.mark.parametrize("n", [1, 1000, 4096, 4097, 3 * 4096 + 5, 70000])
def test_triton_interpreted_equals_model(n):
    x = torch.from_numpy(np.random.default_rng(n).standard_normal(n).astype(np.float32) * 100)
    assert _triton(x) == _model(x)


@pytest.mark.interpreter  # tests/test_gpu_reproducible.py: the compiled kernel
@pytest.mark.filterwarnings("ignore:invalid value encountered")  # inf - inf in the interpreter
def test_triton_interpreted_grid_view_and_dtypes():
    n = 3 * 4096 + 5
    base = torch.randn(n + 3, generator=torch.Generator().manual_seed(1)) * 10
    x = base[3:]  # a misaligned view (12 bytes in)
    want = _model(x)
    assert {_triton(x, grid=g) for g in (1, 2, 3, 4, 9)} == {want}
    for dt in (torch.float16, torch.bfloat16, torch.float64):
        h = base[1:4098].to(dt)
        assert _triton(h) == _model(h), dt
    x2 = x.clone()
    x2[100], x2[9000] = float("inf"), float("nan")
    assert np.isnan(np.frombuffer(_triton(x2), dtype=np.float32)[0])
    assert torch.equal(base[3:], x)  # the caller's data unchanged


@pytest.mark.interpreter  # tests/test_gpu_reproducible.py: the compiled kernel
@pytest.mark.parametrize("steps", [4, 16])
def test_triton_unroll_keeps_the_bits(steps, monkeypatch):
    """Phase 1 loads UNROLL rows per iteration as one tile and applies them in row order: every
    UNROLL gives the model's partials bit for bit, on whole chunks and the masked last one, also
    when steps is not a multiple of UNROLL (8 rows over 4 steps). C(n) is patched to steps x LANES
    in both the model and the launcher, so long chunks run under the interpreter in seconds.
    Two inputs: magnitudes 2^-120 .. 2^120 (the row order shows in lo) and, in float64, the lanes'
    edge cases of exact_data.lane_edge_values (signed zeros, exact cancellations, |hi| == |v|:
    where the CUDA twin's Fast2Sum could part from TwoSum; it is checked on them on the GPU)."""
    from triton_kernels import reproducible as trepro

    c = steps * mappings.LANES
    monkeypatch.setattr(trepro, "chunk_size", lambda n: c)
    monkeypatch.setattr(trepro, "chunk_count", lambda n: -(-n // c))
    n = 2 * c + 777
    rng = np.random.default_rng(steps)
    wide = (rng.standard_normal(n) * np.exp2(rng.integers(-120, 120, n))).astype(np.float32)
    for x in (torch.from_numpy(wide), torch.from_numpy(exact_data.lane_edge_values(n, steps))):
        want_hi, want_lo = trepro.reference_partials(x.numpy())
        assert np.all(want_lo[:2] != 0)  # the whole chunks carry an error to get wrong
        for unroll in (1, 2, 4, 8):
            out, phi, plo = (
                torch.empty(1, dtype=torch.float64 if x.dtype == torch.float64 else torch.float32),
                torch.empty(3, dtype=torch.float64),
                torch.empty(3, dtype=torch.float64),
            )
            trepro.launch(x, out, phi, plo, programs=2, unroll=unroll)()
            assert phi.numpy().tobytes() == want_hi.tobytes(), (x.dtype, unroll)
            assert plo.numpy().tobytes() == want_lo.tobytes(), (x.dtype, unroll)
    with pytest.raises(ValueError, match="unroll"):
        trepro.launch(x, out, phi, plo, programs=2, unroll=3)


def test_fast2sum_on_ordered_operands_is_twosum_bit_for_bit():
    """cuda/reproducible's two_sum: the error of s = hi + v by Fast2Sum on the operands ordered by
    magnitude, and lo + e, are TwoSum's bits (numpy float64, round to nearest, one lane run down
    each column of exact_data.lane_edge_values). e may differ only as -0.0 against +0.0, and lo
    is never -0.0, so lo + e never does."""
    x = exact_data.lane_edge_values(64 * 1024, seed=3).reshape(64, 1024)
    with np.errstate(all="raise"):
        hi, lo, lo2 = np.zeros(1024), np.zeros(1024), np.zeros(1024)
        for v in x:
            s = hi + v
            bp = s - hi
            lo = lo + ((hi - (s - bp)) + (v - bp))  # TwoSum, as the model writes it
            big = np.where(np.abs(hi) >= np.abs(v), hi, v)
            small = np.where(np.abs(hi) >= np.abs(v), v, hi)
            lo2 = lo2 + (small - (s - big))  # Fast2Sum, as the CUDA kernel writes it
            hi = s
            assert lo2.tobytes() == lo.tobytes()
    assert np.count_nonzero(lo) > 900 and not np.signbit(lo[lo == 0]).any()


def test_records_mapping_and_bound():
    c, t = catalogue.get(CUDA), catalogue.get(TRITON)
    assert c.family == t.family == "reproducible" and c.stage == t.stage == "repro"
    assert (c.counterpart, t.counterpart) == (TRITON, CUDA) and not c.twin
    assert set(c.dtypes) == set(t.dtypes) >= {"float32", "float16", "bfloat16"}
    assert catalogue.select(family="reproducible") == [c, t]
    m = c.launch.mapping
    assert not m.one_launch and m.sum_dtype("bfloat16") == "float32"
    # the bound's chain grows with the lane's work (C / 1024 updates) and the final's
    small, big = m.chain_length(c.launch, 2**20), m.chain_length(c.launch, 2**30)
    assert small == 4 + 1 + 21 and big == 2**21 // 1024 + 1 + 21
    want = "reduce_reproducible<rl_half, 256, REPRO_UNROLL, true, REPRO_PREFETCH>"
    assert c.name_expression("float16") == want


@pytest.mark.interpreter  # tests/test_gpu_reproducible.py: the compiled kernel
def test_plan_and_public_api_on_the_interpreter():
    v = catalogue.get(TRITON)
    x = torch.randn(5000)
    plan = make_plan(v, x)
    assert isinstance(plan, reproducible_plan.ReproduciblePlan) and plan.launch_count == 2
    assert plan.bytes_moved() == 5000 * 4 + 32 * 2 + 4
    s = harness.reduce_sum(x, TRITON)
    assert s.dtype == torch.float32 and s.numpy().tobytes() == _model(x)
    assert float(harness.reduce_sum(torch.zeros(0), TRITON)) == 0.0
    with pytest.raises(ValueError, match="at least one block"):
        reproducible_plan.make_plan(v, "float32", x, grid=0)
    assert reproducible_plan.default_grid(v, 5000) == 2  # 2 chunks, fewer than 4 x CPU_SM_COUNT


def test_cuda_vector_alignment_and_expressions():
    assert reproducible_plan.vector_alignment("float32", 256) == 16
    assert reproducible_plan.vector_alignment("bfloat16", 256) == 8
    assert reproducible_plan.vector_alignment("float64", 256) == 16
    assert reproducible_plan.vector_alignment("float16", 512) == 4
    want = catalogue.get(CUDA).name_expression("float32")
    assert reproducible_plan.cuda_expression("float32", 256, "REPRO_UNROLL", True) == want
    named = reproducible_plan.cuda_expression("float32", 256, 8, True, prefetch=False)
    assert named == "reduce_reproducible<float, 256, 8, true, false>"


def _cuobjdump() -> str | None:
    import triton

    path = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    return path if os.access(path, os.X_OK) else None


@pytest.mark.skipif(not nvrtc.available(), reason="libnvrtc not installed")
def test_cuda_instantiations_compile_without_spills_with_vector_loads(tmp_path):
    v = catalogue.get(CUDA)
    exprs = [  # the other vector instantiations: tests/test_nvrtc.py (the catalogue's)
        reproducible_plan.cuda_expression(d, v.launch.threads, "REPRO_UNROLL", vec)
        for d, vec in (("float32", True), ("bfloat16", True), ("float32", False))
    ]
    no_prefetch = reproducible_plan.cuda_expression("float32", 256, "REPRO_UNROLL", True, False)
    exprs += [no_prefetch, reproducible_plan.cuda_expression("float32", 256, 8, True, True)]
    r = nvrtc.compile_file("reproducible.cu", "sm_90", exprs)
    for name, res in r.resources.items():
        assert res.spill_store_bytes == 0 and res.stack_bytes == 0, name
    if _cuobjdump() is None:
        return
    cubin = tmp_path / "reproducible.cubin"
    cubin.write_bytes(r.cubin)
    sass = subprocess.run(
        [_cuobjdump(), "-sass", str(cubin)], capture_output=True, text=True, check=True
    ).stdout
    funcs = {c.split()[0]: c for c in sass.split("Function : ")[1:]}
    f32 = funcs[r.lowered[reproducible_plan.cuda_expression("float32", 256, "REPRO_UNROLL", True)]]
    bf16 = funcs[
        r.lowered[reproducible_plan.cuda_expression("bfloat16", 256, "REPRO_UNROLL", True)]
    ]
    scalar = funcs[
        r.lowered[reproducible_plan.cuda_expression("float32", 256, "REPRO_UNROLL", False)]
    ]
    assert f32.count("LDG.E.128") >= 4 and "LDG.E.64" in bf16  # UNROLL vectors per thread
    # PREFETCH: the next chunk's first UNROLL (4) vectors, a load site of their own
    assert f32.count("LDG.E.128") >= funcs[r.lowered[no_prefetch]].count("LDG.E.128") + 4
    assert "LDG.E.128" not in scalar
    for body in (f32, bf16, scalar):
        assert "DFMA" not in body and "ATOM" in body  # adds only; the ticket
        assert not re.search(r"\bLDL|\bSTL", body)


def test_bench_usage_errors(tmp_path, capsys):
    from harness.cli.main import main

    argv = ["fastest-bench", "--json", str(tmp_path / "x.json"), "--variants", "peer/copy"]
    assert main(argv) == 2 and "peer/copy" in capsys.readouterr().err


def test_bench_takes_the_reproducible_pair_beside_the_peers():
    from harness.studies import suites

    found = suites.cases("fastest", variants=[CUDA, TRITON, *suites.FASTEST_PEERS],
                         dtypes=["bfloat16"], sizes=[2**20])  # fmt: skip
    assert [c.variant for c in found] == [CUDA, TRITON, "peer/torch.sum", "peer/copy"]
