"""Running one piece of work in several threads at once, for the tests of the caches and the call
path under threads."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable

import torch


def run_in_threads(work: Callable[[], Iterable], count: int = 4) -> list:
    """work() in `count` threads; every thread's returned items together (in no set order). An
    exception in any thread fails the caller's test, naming every one raised."""
    results: list = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.extend(work())
        except BaseException as e:  # reported below, in the caller's thread
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    return results


def current_device(x: torch.Tensor) -> contextlib.AbstractContextManager:
    """x's device made current in this thread, as every API call makes it: a cached launch
    called directly from a new thread otherwise has no current CUDA context (the driver's
    CUDA_ERROR_INVALID_CONTEXT)."""
    return torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext()
