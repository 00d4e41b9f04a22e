"""harness.timing without a GPU: the choices it refuses (the timing itself runs on the GPU, in every
benchmark and in tests/test_gpu_*.py)."""

import pytest

from harness import timing


def test_unknown_lead_is_refused():
    assert timing.LEAD in timing.LEADS
    with pytest.raises(ValueError, match="lead"):
        timing.keep_device_busy("nap")
