"""One pytest-benchmark per case of every named suite (options in conftest.py): the suite's own
measurement in extra_info["rows"], pytest-benchmark's statistics the wall time of one
synchronized Python call (a case of the ladder's suites: its "call" row too; docs/development.md,
"Adding a benchmark")."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core import catalogue, device
from harness.report.records import results
from harness.studies import axis_bench, call_entries, host, session, suites

WARMUP_ROUNDS = 2


def _one_call(case: suites.Case):
    """(the call pytest-benchmark times, its untimed setup before each round)."""
    import torch

    from harness.core import timing

    if case.suite == "callable":
        fn, views = call_entries.call(case.variant, case.dtype, case.n)
        return (lambda: fn(views[0])), None
    if case.suite == "host":  # one trip from host memory, the input staged
        return host.trip(case.variant, case.dtype, case.n, case.config), None
    from harness.check import verify

    restore = None
    if case.suite == "axis":
        shape, dim = axis_bench.parse_config(case.config)
        fn = axis_bench.call(case.variant, axis_bench.input_for(shape, case.dtype), dim)
    else:  # a case of the ladder's suites: the call check_and_time timed
        x = verify.seed_like_input(case.n, case.dtype, "cuda")
        fn, restore, _ = session.timed_call(catalogue.get(case.variant), x)

    def setup() -> None:
        if restore is not None:
            restore()
        timing.flush_l2()
        torch.cuda.synchronize()

    return fn, setup


def test_reduce(benchmark, case: suites.Case, pytestconfig):
    ok, why = device.torch_gpu()
    if not ok:
        pytest.skip(f"needs an NVIDIA GPU: {why}")
    v = catalogue.BY_ID.get(case.variant)
    if (v and v.backend == "cuda") or "cupy" in case.variant:
        ok, why = device.cupy_gpu()
        if not ok:
            pytest.skip(why)
    import torch

    from harness.core.timing import Timing

    rows = suites.run([case])
    if not rows:
        pytest.skip(f"{case.variant} does not take {case.dtype}")
    if any(r.check == "skipped" for r in rows):
        pytest.skip(rows[0].info.get("message", "unavailable here"))
    benchmark.group = f"{case.suite} {case.dtype} n={case.n}"
    benchmark.extra_info["rows"] = [r.to_json() for r in rows]
    bad = session.failed(rows)
    if bad:
        pytest.fail(f"{case.id}: {bad[0].check}: {bad[0].info.get('message', '')}")
    fn, setup = _one_call(case)

    def target() -> None:
        fn()
        torch.cuda.synchronize()

    rounds = pytestconfig.getoption("--bench-rounds")
    benchmark.pedantic(target, setup=setup, rounds=rounds, warmup_rounds=WARMUP_ROUNDS)
    # a case of the ladder's suites: its call time pytest-benchmark's rounds
    stats = getattr(benchmark, "stats", None)  # None under --benchmark-disable: one call
    if stats is not None and (found := results(rows)) and found[0].timed:
        call = Timing.of([t * 1e3 for t in stats.stats.data]).record()
        total = found[0].by_metric["total"]
        rows = [r for r in rows if r.metric != "call"]
        rows.append(dataclasses.replace(total, metric="call", **call, info={}))
        benchmark.extra_info["rows"] = [r.to_json() for r in rows]
