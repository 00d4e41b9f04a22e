"""harness.core.timing without a GPU: what it computes on the host (the timing itself runs on the "
"GPU,
in every benchmark and in tests/test_gpu_*.py)."""

from harness.core import timing


def test_gate_is_bounded_and_outlasts_the_queuing():
    assert timing.GATE_MARGIN >= 1.5  # the device waits longer than the host takes to queue
    assert 0 < timing.GATE_MAX_S <= 1.0  # a slow host cannot stall the device for long
    assert timing._SPIN_HZ >= 2.0e9  # at least an H100/H200 boost clock: the spin is never short


def test_quantiles():
    xs = [5.0, 1.0, 3.0, 2.0, 4.0]
    assert timing._quantile(xs, 0.0) == 1.0 and timing._quantile(xs, 1.0) == 5.0
    assert timing._quantile(xs, 0.5) == 3.0
