"""harness.core.timing's logic without a GPU: quantiles, the Timing record, the gate's sizing and
its place before the timed calls, the repetition count, the benchmark timer and the small-size
timings' error path. torch.cuda's events, synchronize and spin are replaced by fakes that log what
timing asks of the device, so the order of operations is checked, not assumed; the device timing
itself runs in every benchmark and in tests/test_gpu_*.py."""

from __future__ import annotations

import json
import types

import pytest
import torch

from harness.core import timing

# ---------------------------------------------------------------------------------------------
# A fake device: a log of what was queued, a device clock that fn advances, a host clock that the
# host-side work advances (deterministic: no real sleeps, no scheduler noise).


class FakeDevice:
    def __init__(self, durations_ms: list[float], host_ms_per_call: float = 1.0) -> None:
        self.log: list[tuple] = []
        self.device_ms = 0.0
        self.host_s = 0.0
        self.calls = 0
        self.durations_ms = durations_ms
        self.host_ms_per_call = host_ms_per_call

    def fn(self) -> None:
        """The timed call: queues device work of the next duration, costs the host some time."""
        self.device_ms += self.durations_ms[min(self.calls, len(self.durations_ms) - 1)]
        self.host_s += self.host_ms_per_call / 1e3
        self.calls += 1
        self.log.append(("fn",))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        dev = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.at = None

            def record(self, stream=None) -> None:
                self.at = dev.device_ms
                dev.log.append(("record", id(self)))

            def elapsed_time(self, end: Event) -> float:
                return end.at - self.at

            def synchronize(self) -> None:
                dev.log.append(("sync",))

        monkeypatch.setattr(torch.cuda, "Event", Event)
        monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: dev.log.append(("sync",)))
        monkeypatch.setattr(timing, "flush_l2", lambda: dev.log.append(("flush",)))
        monkeypatch.setattr(
            timing, "gate_device", lambda s: dev.log.append(("gate", s, dev.host_s))
        )
        monkeypatch.setattr(timing, "time", types.SimpleNamespace(perf_counter=lambda: dev.host_s))


# ---------------------------------------------------------------------------------------------
# Quantiles and the record


def test_quantile_is_nearest_rank_and_leaves_its_input_alone():
    xs = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert timing._quantile(xs, 0.0) == 1.0 and timing._quantile(xs, 1.0) == 5.0
    assert timing._quantile(xs, 0.5) == 3.0
    assert xs == [5.0, 1.0, 3.0, 2.0, 4.0]  # sorted a copy
    eleven = [float(i) for i in range(11, 0, -1)]
    assert timing._quantile(eleven, 0.1) == 2.0 and timing._quantile(eleven, 0.9) == 10.0
    assert timing._quantile([7.0], 0.9) == 7.0


def test_timing_record_is_the_json_form_the_result_files_hold():
    t = timing.Timing(median_ms=2.0, min_ms=1.0, p10_ms=1.5, p90_ms=3.0, reps=7)
    d = json.loads(json.dumps(t.record()))
    assert d == {"median_ms": 2.0, "min_ms": 1.0, "p10_ms": 1.5, "p90_ms": 3.0, "reps": 7}
    assert timing.Timing(**d) == t


# ---------------------------------------------------------------------------------------------
# The gate and the timed loop


def _spin_cycles(monkeypatch: pytest.MonkeyPatch, seconds: float) -> int:
    asked: list[int] = []
    monkeypatch.setattr(torch.cuda, "_sleep", asked.append)
    timing.gate_device(seconds)
    assert len(asked) == 1
    return asked[0]


def test_gate_spin_lasts_at_least_the_asked_time_and_is_capped(monkeypatch):
    # H100 / H200 SXM boost clocks are 1.98 GHz: a spin of this many cycles lasts at least
    # `seconds` on them, so the gate never ends before the host has queued the timed calls.
    for seconds in (1e-6, 1e-3, 0.05, 0.2):
        assert _spin_cycles(monkeypatch, seconds) >= seconds * 1.98e9, seconds
    assert _spin_cycles(monkeypatch, 0.0) >= 1  # a spin is never empty
    # A slow host cannot stall the device for long: the spin stops growing, and lasts at most
    # a second at a 1.1 GHz clock.
    capped = _spin_cycles(monkeypatch, 10.0)
    assert capped == _spin_cycles(monkeypatch, 1e4) <= 1.1e9


def test_time_ms_queues_every_rep_behind_a_gate_that_outlasts_the_queuing(monkeypatch):
    reps = 5
    # warm-up (3 calls), the gate's dry run (2 calls), then the timed calls
    fake = FakeDevice([100.0] * 5 + [1.0, 5.0, 2.0, 4.0, 3.0], host_ms_per_call=1.0)
    fake.install(monkeypatch)
    setups = []
    t = timing.time_ms(fake.fn, reps=reps, setup=lambda: setups.append(fake.calls))
    assert t == timing.Timing(median_ms=3.0, min_ms=1.0, p10_ms=1.0, p90_ms=5.0, reps=reps)
    gates = [i for i, e in enumerate(fake.log) if e[0] == "gate"]
    assert len(gates) == 1
    _, gate_s, host_at_gate = fake.log[gates[0]]
    after = fake.log[gates[0] + 1 :]
    # each repetition: (setup) flush, start event, the call, end event; nothing waits on the
    # device until all of them are queued
    assert [e[0] for e in after] == ["flush", "record", "fn", "record"] * reps + ["sync"]
    assert len(setups) == 2 + reps  # before every queued repetition, the dry run's included
    queuing_s = fake.host_s - host_at_gate
    assert gate_s >= queuing_s > 0, "the device would reach the timed calls before they are queued"


def test_time_ms_without_gate_or_flush(monkeypatch):
    fake = FakeDevice([2.0])
    fake.install(monkeypatch)
    t = timing.time_ms(fake.fn, reps=4, gate=False, flush=False, warmup=0)
    assert t.median_ms == 2.0 and t.reps == 4
    assert not [e for e in fake.log if e[0] in ("gate", "flush")]


@pytest.mark.parametrize(
    "call_ms,target_ms,max_reps,want",
    [
        (1.0, 50.0, 200, 50),  # enough repetitions to fill the target time
        (1.0, 3.0, 200, 10),  # but at least 10
        (0.001, 300.0, 200, 200),  # and at most max_reps
    ],
)
def test_time_ms_sizes_the_repetitions_from_the_measured_call(
    monkeypatch, call_ms, target_ms, max_reps, want
):
    fake = FakeDevice([call_ms])
    fake.install(monkeypatch)
    t = timing.time_ms(fake.fn, target_ms=target_ms, max_reps=max_reps, gate=False, flush=False)
    assert t.reps == want


# ---------------------------------------------------------------------------------------------
# The benchmark timer and the small-size timings


def test_sync_perf_counter_is_perf_counter_without_a_gpu(monkeypatch):
    import time

    def no_device():
        raise AssertionError("synchronize called without a GPU")

    monkeypatch.setattr(timing.device, "gpu_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "synchronize", no_device)
    a = timing.sync_perf_counter()
    b = time.perf_counter()
    c = timing.sync_perf_counter()
    assert a <= b <= c  # the same clock as perf_counter (pytest-benchmark calibrates with it)


def test_sync_perf_counter_waits_for_the_device_before_reading_the_clock(monkeypatch):
    log = []
    monkeypatch.setattr(timing.device, "gpu_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: log.append("sync"))
    monkeypatch.setattr(
        timing, "time", types.SimpleNamespace(perf_counter=lambda: log.append("clock") or 1.0)
    )
    assert timing.sync_perf_counter() == 1.0
    assert log == ["sync", "clock"]


def test_small_size_timings_only_small_sizes_and_reports_capture_failures(monkeypatch):
    one = timing.Timing(1.0, 1.0, 1.0, 1.0, 1)

    def no_capture(fn):
        raise RuntimeError("operation not permitted when stream is capturing")

    monkeypatch.setattr(timing, "call_ms", lambda fn: one)
    monkeypatch.setattr(timing, "graph_ms", no_capture)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    assert timing.small_size_timings(lambda: None, timing.GRAPH_MAX_N + 1) == {}
    out = timing.small_size_timings(lambda: None, timing.GRAPH_MAX_N)
    assert out["call"] == one.record() and "graph" not in out
    assert out["graph_error"].startswith("RuntimeError: operation not permitted")
    monkeypatch.setattr(timing, "graph_ms", lambda fn: one)
    assert timing.small_size_timings(lambda: None, 1) == {
        "call": one.record(),
        "graph": one.record(),
    }


def test_loop_ms_times_calls_back_to_back_rotating_over_the_args(monkeypatch):
    fake = FakeDevice([2.0])
    fake.install(monkeypatch)
    seen: list[str] = []
    t = timing.loop_ms(lambda x: seen.append(x) or fake.fn(), ["a", "b", "c"], calls=4, loops=3)
    assert t.median_ms == 2.0 and t.reps == 3  # the loop's time over its calls
    assert seen == list("ab" + "abca" * 3)  # 2 warm-up calls, then 3 loops of 4, rotating
    loop = fake.log[fake.log.index(("sync",)) + 1 :][:6]
    assert [e[0] for e in loop] == ["record", "fn", "fn", "fn", "fn", "record"]


def test_call_ms_is_the_host_wall_time_of_a_synchronized_call(monkeypatch):
    fake = FakeDevice([1.0], host_ms_per_call=3.0)
    fake.install(monkeypatch)
    t = timing.call_ms(fake.fn, reps=4, warmup=1)
    assert t.median_ms == pytest.approx(3.0) and t.reps == 4
    assert fake.calls == 5
    # each timed call is bracketed by synchronizations: the device is idle at both clock reads
    timed = [e[0] for e in fake.log[1:]]  # after the warm-up call
    assert timed == ["sync", "fn", "sync"] * 4
