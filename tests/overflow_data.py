"""int32 inputs whose sums overflow, for the int32 tests (CPU and GPU)."""

from __future__ import annotations

import torch

# Kinds of int32 input chosen so that sums overflow: a random sum of n values of this size passes
# 2^31 after a handful of elements, and every block / pass wraps many times.
OVERFLOW_KINDS = ("full-range", "near-max", "near-min", "alternating")


def overflow_input(n: int, kind: str, device: str | torch.device, generator=None) -> torch.Tensor:
    """int32 data whose partial sums wrap past +/-2^31: full-range (all of int32), near-max /
    near-min (within 2^20 of INT32_MAX / INT32_MIN), alternating (near 2^31, random signs)."""

    def draw(lo: int, hi: int) -> torch.Tensor:
        return torch.randint(lo, hi, (n,), dtype=torch.int64, generator=generator)

    make = {
        "full-range": lambda: draw(-(2**31), 2**31),
        "near-max": lambda: 2**31 - 1 - draw(0, 2**20),
        "near-min": lambda: -(2**31) + draw(0, 2**20),
        "alternating": lambda: (2**31 - 1 - draw(0, 2**20)) * (draw(0, 2) * 2 - 1),  # mag, sign
    }
    if kind not in make:
        raise ValueError(f"unknown overflow kind {kind!r}; expected one of {OVERFLOW_KINDS}")
    return make[kind]().to(torch.int32).to(device)
