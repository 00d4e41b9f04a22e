"""Test setup: choose Triton's interpreter when there is no GPU (before any kernel is imported),
skip GPU-marked tests with a reason that says what is missing, and skip interpreter-marked tests
(the CPU path: Triton's interpreter, which the GPU machine's Triton is not built to run) where a
GPU is present, since their gpu-marked twins cover the device there."""

from __future__ import annotations

import os

import pytest

from harness.core import device

device.use_interpreter_if_no_gpu()
# triton/fastest: no autotuning inside tests (its default configuration; test_gpu_fastest runs
# every candidate configuration explicitly), so the suite does not compile every candidate for
# every dtype. The benchmark tunes.
os.environ.setdefault("REDUCE_LADDER_TRITON_TUNE", "0")

# Sizes the issue asks every variant to be checked at on the GPU.
GPU_SIZES = (1, 255, 256, 257, 1000, 2**20 + 3, 2**24, 2**25)
# Sizes the interpreted Triton twins are checked at on the CPU (every mapping's edge cases:
# a single element, one short of / exactly / one past a tile, several blocks, several passes).
CPU_SIZES = (1, 255, 256, 257, 1000, 2049, 70_003)


# The reasons of the skip rules in pytest_collection_modifyitems (filled in at collection).
RULE_REASONS: set[str] = set()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ok, why = device.torch_gpu()
    if ok or not device.interpreting():
        skip = pytest.mark.skip(
            reason="the CPU path (Triton's interpreter): runs where there is no GPU, under "
            "TRITON_INTERPRET=1; the gpu-marked tests cover the device"
        )
        RULE_REASONS.add(skip.kwargs["reason"])
        for item in items:
            if "interpreter" in item.keywords:
                item.add_marker(skip)
    if ok:
        return
    skip = pytest.mark.skip(reason=f"needs an NVIDIA GPU, and this machine has none: {why}")
    RULE_REASONS.add(skip.kwargs["reason"])
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    """A test skipped by the rules above is reported at the rules (this file, no line), not at the
    test, so that `-ra` prints one line per reason ("SKIPPED [2201] tests/conftest.py: needs an
    NVIDIA GPU ...") instead of one per test file and line."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = report.longrepr[2].removeprefix("Skipped: ")
        if reason in RULE_REASONS:
            report.longrepr = (__file__, None, reason)
    return report


@pytest.fixture(scope="session")
def dev() -> str:
    """Where tensors live in device-agnostic tests: the GPU if present, else the CPU."""
    return "cuda" if device.gpu_available() else "cpu"


@pytest.fixture
def needs_cupy() -> None:
    ok, why = device.cupy_gpu()
    if not ok:
        pytest.skip(f"needs CuPy with a working GPU driver: {why}")


def skip_if_peer_unavailable(vid: str) -> None:
    """Skip, with the reason, a peer that cannot run in this environment (cuda.compute not
    installed, a torch without the cooperative reduction): harness.launch.peers says why."""
    from harness.core import catalogue
    from harness.launch import peers

    why = peers.unavailable_reason(catalogue.get(vid))
    if why:
        pytest.skip(why)
