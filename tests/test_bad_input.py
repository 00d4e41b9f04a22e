"""Odd input through every entry point, on the CPU (Triton interpreted where a kernel must run).
The GPU-side cases are in tests/test_gpu_bad_input.py."""

import math
import subprocess
import sys

import numpy as np
import pytest
import torch

import harness
from harness.cli.main import main
from harness.core import catalogue, device
from harness.launch import plan
from harness.studies import session, suites

TWIN = "triton/tile-256"
cpu_only = pytest.mark.skipif(device.gpu_available(), reason="CPU-tensor behaviour (no GPU)")


def _x(n, dev="cpu"):
    return torch.randint(0, 100, (n,), dtype=torch.int32, device=dev).float()


@cpu_only
def test_empty_input_sums_to_zero():
    s = harness.reduce_sum(torch.empty(0), TWIN)
    assert s.dim() == 0 and float(s) == 0.0
    assert harness.partials(torch.empty(0), TWIN).numel() == 0
    # in the dtype a sum of that variant comes back in: the input's, or the single-launch
    # family's accumulator (float16 -> float32)
    assert harness.reduce_sum(torch.empty(0, dtype=torch.int32), "triton/tile-256").dtype == (
        torch.int32
    )
    s16 = harness.reduce_sum(torch.empty(0, dtype=torch.float16), "triton/fastest")
    assert s16.dtype == torch.float32 and float(s16) == 0.0


def test_numpy_input_is_refused_with_a_hint():
    with pytest.raises(TypeError, match="move host data to the GPU"):
        harness.reduce_sum(np.ones(10, dtype=np.float32), TWIN)


def test_cpu_tensor_for_a_cuda_variant_is_refused():
    with pytest.raises(ValueError, match=r"runs on a CUDA GPU .* \.cuda\(\)"):
        harness.reduce_sum(torch.ones(10), "cuda/v3-sequential")


@cpu_only
def test_unsupported_dtype_names_the_supported_ones():
    with pytest.raises(TypeError, match="float32"):
        harness.reduce_sum(torch.ones(10, dtype=torch.float64), TWIN)


def test_unknown_variant_says_where_the_valid_ids_are():
    with pytest.raises(KeyError, match=r"59 ids: `reduce-ladder list`, harness.core.catalogue"):
        harness.reduce_sum(torch.ones(10), "cuda/v99")


@cpu_only
@pytest.mark.parametrize("shape", [(), (3, 5, 7), (2, 1, 300)])
def test_any_shape_is_flattened(shape):
    x = torch.randint(0, 100, shape).float()
    assert float(harness.reduce_sum(x, TWIN)) == float(x.sum())


@cpu_only
def test_non_contiguous_and_offset_views_sum_right_and_stay_untouched():
    base = _x(3001)
    keep = base.clone()
    for view in (
        base[::2],
        base[1:],
        base[3:],
        base.view(3, 1000, 1)[:, 1:, 0].t() if False else base[1:].view(1000, 3)[:, 1],
    ):
        assert float(harness.reduce_sum(view, TWIN)) == float(view.double().sum())
    assert torch.equal(base, keep)


@cpu_only
# inf + -inf is NaN on purpose: numpy (under Triton's interpreter) warns as it makes it.
@pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")
@pytest.mark.parametrize("vid", ["triton/tile-256", "triton/grid-stride-1024"])
@pytest.mark.parametrize(
    "specials,expected",
    [
        ([math.nan], math.nan),
        ([math.inf], math.inf),
        ([-math.inf], -math.inf),
        ([math.inf, -math.inf], math.nan),
        ([math.nan, math.inf], math.nan),
    ],
)
def test_nan_and_inf_propagate(vid, specials, expected):
    x = _x(1000)
    for i, s in enumerate(specials):
        x[137 + 400 * i] = s
    got = float(harness.reduce_sum(x, vid))
    assert (math.isnan(got) and math.isnan(expected)) or got == expected
    from harness.check import verify

    assert verify.check_variant(catalogue.get(vid), x).ok


@pytest.mark.parametrize(
    "vid", ["cuda/v3-sequential", "triton/tile-256", "cuda/v8-shuffle-strided"]
)
def test_sizes_past_2_31_are_refused_naming_the_limit(vid):
    x = torch.empty(2**31, dtype=torch.float32, device="meta")  # no memory behind it
    with pytest.raises(ValueError, match="2,147,483,647"):
        plan.make_plan(catalogue.get(vid), x)


def test_unwritable_json_path_is_a_usage_error(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    rc = main(
        [
            "check",
            "--variants",
            TWIN,
            "--sizes",
            "3",
            "--quiet",
            "--json",
            str(blocker / "out.json"),
        ]
    )
    assert rc == 2
    assert "cannot write" in capsys.readouterr().err


@cpu_only
def test_a_failing_variant_is_reported_and_the_run_goes_on(monkeypatch, capsys):
    real = plan.make_plan

    def broken(variant, x):
        if variant.id == "triton/pair-split-128":
            raise RuntimeError("simulated launch failure")
        return real(variant, x)

    monkeypatch.setattr(plan, "make_plan", broken)
    vs = catalogue.select(["triton/tile-256", "triton/pair-split-128", "triton/chunked-1024"])
    rows = suites.run([suites.Case("ladder", v.id, "float32", 300) for v in vs], timed=False)
    assert [r.check for r in rows] == ["ok", "error", "ok"]
    assert "simulated launch failure" in rows[1].info["message"]
    assert session.failed(rows)
    rc = main(
        [
            "check",
            "--variants",
            "triton/tile-256,triton/pair-split-128",
            "--sizes",
            "300",
            "--quiet",
        ]
    )
    assert rc == 1
    assert "simulated launch failure" in capsys.readouterr().out


def test_two_processes_at_once_both_finish(tmp_path):
    env = {"TRITON_CACHE_DIR": str(tmp_path / "triton"), "CUPY_CACHE_DIR": str(tmp_path / "cupy")}
    import os

    cmd = [
        sys.executable,
        "-m",
        "harness",
        "check",
        "--quiet",
        "--sizes",
        "1000,2049",
        "--variants",
        "cuda/v3-sequential,triton/tile-256,cuda/v8-shuffle-strided,triton/grid-stride-1024",
    ]
    procs = [
        subprocess.Popen(
            cmd,
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    for p, out in zip(procs, outs, strict=True):
        assert p.returncode == 0, out
        assert "Traceback" not in out
