"""One pytest-benchmark per variant x dtype x n (see conftest.py for the options).

Each benchmark first checks the variant's sum on the input (fresh seed-like data, the golden of
harness.check.verify) and fails on a wrong sum; then times it with benchmark.pedantic:
- setup (untimed, every round): flush L2 (write a buffer twice its size) and wait for the device,
  so inputs that would fit in L2 are read from device memory as at large n;
- target: the variant's launches between two CUDA events, then a device synchronize, so the
  host-side time pytest-benchmark reports is one synchronized Python call (launch overhead
  included) even with the default timer; --benchmark-timer=harness.core.timing.sync_perf_counter
  gives the same and is what benchmarks/gpu_session.sh passes.
extra_info is the result record's JSON form (harness.report.records, schema BENCH_SCHEMA): the
device time ("total": CUDA events, median over the timed rounds), the bytes moved and effective
GB/s, the host wall time per call ("call"), for n <= 2^20 the CUDA-graph replay time per call
("graph"), the check and the device name. harness.report.documents reads it.
"""

from __future__ import annotations

import dataclasses
import functools
import statistics
import time

import pytest

from harness.core import catalogue, device
from harness.core.timing import Timing
from harness.report import records

WARMUP_ROUNDS = 2
_inputs: dict = {}


def _input(dtype: str, n: int):
    """The input (and its golden) for (dtype, n), kept only while consecutive cases share it."""
    from harness.check import verify

    key = (dtype, n)
    if key not in _inputs:
        _inputs.clear()
        x = verify.seed_like_input(n, dtype, "cuda")
        _inputs[key] = (x, verify.golden(x))
    return _inputs[key]


@functools.cache
def _device_name() -> str | None:
    return device.device_info().get("name")


def _runner(v: catalogue.Variant, x):
    """(callable that launches the variant, untimed setup before each call, bytes it moves).

    For an in-place variant the setup refills its scratch copy, so the copy is never timed."""
    if v.backend == "peer":
        from harness.launch import peers

        return peers.prepare(v, x), None, peers.bytes_moved(v, x.numel(), x.element_size())
    from harness.launch.plan import make_plan

    plan = make_plan(v, x)
    return (lambda: plan.run(restore=False)), plan.restore, plan.bytes_moved()


def _stats(ms: list[float]) -> Timing:
    from harness.core.timing import _quantile

    return Timing(
        median_ms=statistics.median(ms),
        min_ms=min(ms),
        p10_ms=_quantile(ms, 0.1),
        p90_ms=_quantile(ms, 0.9),
        reps=len(ms),
    )


def _extra_info(rec: records.ResultRecord) -> dict:
    return {"schema": records.BENCH_SCHEMA, **rec.to_json()}


def test_reduce(benchmark, case, bench_cfg):
    vid, dtype, n = case
    ok, why = device.torch_gpu()
    if not ok:
        pytest.skip(f"needs an NVIDIA GPU: {why}")
    v = catalogue.get(vid)
    if v.backend == "cuda" or "cupy" in vid:
        ok, why = device.cupy_gpu()
        if not ok:
            pytest.skip(why)
    import torch

    from harness.check import verify
    from harness.core import timing
    from harness.launch.errors import PeerUnavailable

    x, g = _input(dtype, n)
    try:
        check = verify.check_variant(v, x, g)
    except PeerUnavailable as e:  # e.g. cuda.compute not installed: skipped with the reason
        pytest.skip(str(e))
    rec = records.for_variant(
        v,
        dtype,
        n,
        status="ok" if check.ok else "wrong",
        message=check.message,
        check=records.check_from(check),
        device=_device_name(),
    )
    benchmark.group = f"{dtype} n={'2^' + str(n.bit_length() - 1) if n & (n - 1) == 0 else n}"
    benchmark.extra_info.update(_extra_info(rec))
    if not check.ok:
        pytest.fail(f"{vid} {dtype} n={n}: {check.message}")

    fn, prepare, nbytes = _runner(v, x)
    rounds = bench_cfg["rounds"]
    walls: list[float] = []

    # pytest-benchmark's own numbers: the wall time of one synchronized Python call (what a call
    # costs a user, launch overhead included), with L2 flushed and the device idle before it.
    def setup() -> None:
        if prepare is not None:
            prepare()
        timing.flush_l2()
        torch.cuda.synchronize()

    def target() -> None:
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)

    benchmark.pedantic(
        target, setup=setup, rounds=rounds, warmup_rounds=WARMUP_ROUNDS, iterations=1
    )
    call_ms = walls[-rounds:]
    # Device time: CUDA events around each call, calls queued back to back behind an L2 flush
    # (harness.core.timing.time_ms, as the CLI measures), so host launch overhead is not counted.
    total = timing.time_ms(fn, setup=prepare, reps=rounds)
    rec = dataclasses.replace(rec, total=total, call=_stats(call_ms), bytes_total=nbytes)
    if n <= timing.GRAPH_MAX_N:
        try:
            rec = dataclasses.replace(rec, graph=timing.graph_ms(fn))
        except Exception as e:  # reported, not fatal: the per-call numbers stand
            torch.cuda.synchronize()
            rec = dataclasses.replace(rec, extra={"graph_error": f"{type(e).__name__}: {e}"})
    benchmark.extra_info.update(_extra_info(rec))
