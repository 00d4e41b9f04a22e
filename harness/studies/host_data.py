"""Seed 001's host data and its exact golden: the inputs the host study reduces and the sums
their results must equal (exactly, or within the stated bound).

The seed insists on an EXACT golden for host data (a naive float sum loses small terms), so the
golden here is computed on the CPU from the caller's array itself: int64 for integers, float64 for
integer-valued floats, math.fsum otherwise. The adversarial input shows why a tree is needed: a
naive float32 running sum loses every one of its small terms.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import torch

from harness.check import verify
from harness.core import catalogue, device, dtypes

ADVERSARIAL_N = 2**22
FSUM_MAX_N = 2**24  # math.fsum walks Python floats: exact, but slow past this


def error_bound(n: int, g: verify.Golden, dtype: str = "float32") -> float:
    """|result - exact| bound of every 001 variant (verify.tolerance: gamma_L * sum|x|, L from the
    passes: per pass 2 + log2(1024) additions on any element's path); 0 when exactness holds."""
    return verify.tolerance(catalogue.get("cuda/001-v1-gmem-sequential"), dtype, n, g)


def _slices(n: int, step: int = 2**26) -> Iterable[slice]:
    return (slice(a, min(n, a + step)) for a in range(0, n, step))


def exact_golden(x: torch.Tensor) -> verify.Golden:
    """The EXACT sum of a CPU tensor, as the seed insists (a naive float sum loses small terms).

    Integers: int64 arithmetic (wrapped to int32 for int32 data, as the kernels wrap). Integer-
    valued floats with sum|x| < 2^53: float64 accumulation, exact whatever the order because every
    partial sum is an integer below 2^53. Other floats: math.fsum (exact, correctly rounded), up to
    FSUM_MAX_N elements. Works in slices, so no n-sized temporary is made.
    """
    x = x.reshape(-1)
    n = x.numel()
    if n == 0:
        return verify.Golden(0, 0.0, True, 0.0)
    if not x.dtype.is_floating_point:
        total = sum(int(torch.sum(x[s], dtype=torch.int64)) for s in _slices(n))
        abs_sum = sum(int(torch.sum(x[s].to(torch.int64).abs())) for s in _slices(n))
        value = verify.wrap_int32(total) if x.dtype == torch.int32 else total
        return verify.Golden(value, float(abs_sum), True, 0.0)
    integer_valued = all(
        bool(torch.isfinite(x[s]).all()) and bool((x[s] == torch.round(x[s])).all())
        for s in _slices(n)
    )
    if integer_valued:
        abs_sum = math.fsum(float(torch.sum(x[s].abs(), dtype=torch.float64)) for s in _slices(n))
        if abs_sum < 2**53:
            total = sum(int(torch.sum(x[s], dtype=torch.float64)) for s in _slices(n))
            return verify.Golden(total, abs_sum, True, 0.0)
    if n > FSUM_MAX_N:
        raise ValueError(
            f"an exact golden of {n:,} non-integer floats needs math.fsum, too slow past "
            f"{FSUM_MAX_N:,}: use integer-valued data at this size"
        )
    vals = x.to(torch.float64).tolist()
    return verify.Golden(math.fsum(vals), math.fsum(abs(v) for v in vals), False, 0.0)


def adversarial_input(n: int = ADVERSARIAL_N) -> torch.Tensor:
    """One large value (2^24) then n-1 ones, float32. A naive float32 running sum loses EVERY one:
    2^24 + 1 rounds back to 2^24 (ties to even), so it returns 2^24 against an exact 2^24 + n - 1.
    A tree adds the ones among themselves first and loses at most a few units."""
    if n < 2:
        raise ValueError("the adversarial input needs n >= 2")
    x = torch.ones(n, dtype=torch.float32)
    x[0] = 2.0**24
    return x


def naive_running_sum(x: torch.Tensor) -> float:
    """s = 0; for v in x: s += v, in float32 (what a plain CPU loop computes)."""
    s = np.float32(0)
    for part in _slices(x.numel()):
        a = x[part].numpy()
        acc = np.add.accumulate(np.concatenate([[s], a]).astype(np.float32), dtype=np.float32)
        s = acc[-1]
    return float(s)


def seed_like_host(n: int, dtype: str = "float32", seed: int = 0) -> torch.Tensor:
    """Integers 0..99 (the seed's rand() % 100) in a pageable CPU tensor; drawn on the GPU when
    there is one (fast at 2^30+), then copied to the host."""
    dev = "cuda" if device.gpu_available() else "cpu"
    g = torch.Generator(device=dev).manual_seed(seed)
    out = torch.empty(n, dtype=dtypes.torch_dtype(dtype))
    step = 2**28
    for a in range(0, n, step):
        b = min(n, a + step)
        part = torch.randint(0, 100, (b - a,), dtype=torch.int32, device=dev, generator=g)
        out[a:b].copy_(part.to(out.dtype))
    return out
