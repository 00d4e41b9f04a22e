"""Test data whose sum changes when any element is missed, read twice, or read from past the end.

signed_integers: nonzero integers in [-8, 8] with random signs (seeded, numpy's PCG64, made on the
CPU), in a view of a larger buffer whose head and tail are poisoned (NaN for floats, a large odd
value for int32), so an over-read or under-read lands on poison, not on allocator slack.

Why the float sums of these data are EXACT in any order: a kernel's partial sums are sums over
subsets S of the elements fixed by its mapping, not by the data. With independent random signs and
|x| <= 8, Hoeffding's inequality gives P(|sum_S x| >= 2^24) <= 2 exp(-2^48 / (2 * 64 |S|)), which
for |S| <= 2^31 is below 2 exp(-2^10); so every partial sum (with overwhelming probability, and
for the fixed seeds here, certainly: the sums are deterministic) is an integer of magnitude below
2^24, exactly representable in float32, and every addition is exact. float16 / bfloat16 inputs
are summed in float32 by the variants that take them. The result must therefore EQUAL the exact
integer sum, and one element dropped or duplicated moves it by 1 to 8.
"""

from __future__ import annotations

import numpy as np
import torch

HEAD = 64  # elements of poison before the view (256 bytes for float32: the alignment is kept)
TAIL = 2**16  # elements of poison after it: past any tile or unrolled block of the catalogue
INT_POISON = 2**30 + 1  # int32 poison: one read of it moves the sum by about 2^30


def signed_integer_values(n: int, seed: int) -> np.ndarray:
    """n nonzero int64 values in [-8, 8], random signs, the same on every machine."""
    rng = np.random.default_rng([seed, 20240611])
    mag = rng.integers(1, 9, n, dtype=np.int64)
    return np.where(rng.integers(0, 2, n, dtype=np.int8) == 1, mag, -mag)


def signed_integers(n: int, dtype: str, seed: int, device: str = "cuda") -> torch.Tensor:
    """signed_integer_values(n, seed) as `dtype` on `device`: a contiguous view of n elements
    with HEAD poisoned elements before it and TAIL after it."""
    dt = getattr(torch, dtype)
    poison = float("nan") if dt.is_floating_point else INT_POISON
    buf = torch.full((HEAD + n + TAIL,), poison, dtype=dt, device=device)
    buf[HEAD : HEAD + n] = torch.from_numpy(signed_integer_values(n, seed)).to(
        device=device, dtype=dt
    )
    return buf[HEAD : HEAD + n]


def exact_total(x: torch.Tensor, step: int = 2**26) -> int:
    """The exact sum of integer-valued x, in int64 slices (no float64 copy of a large x)."""
    return sum(int(x[i : i + step].to(torch.int64).sum()) for i in range(0, x.numel(), step))


# Distinct powers of two around and past index 2^31 (the last at n - 1): one read from a 32-bit
# index that wrapped, or a missed last tile, moves the sum by a value no +-1 can cancel.
PAST_2_31_MARKS = ((1, 64.0), (2**31 - 1, 128.0), (2**31, 256.0), (2**31 + 1, 512.0), (-1, 1024.0))


def signs_with_marks(
    n: int,
    marks=PAST_2_31_MARKS,
    dtype: torch.dtype = torch.float16,
    device: str = "cuda",
    seed: int = 31,
) -> torch.Tensor:
    """+-1 with random signs (seeded; every partial sum exact, as the module docstring says) and
    `marks` ((index, value); a negative index counts from the end) written over them."""
    g = torch.Generator(device=device).manual_seed(seed)
    x = (torch.randint(0, 2, (n,), dtype=torch.int8, device=device, generator=g) * 2 - 1).to(dtype)
    for i, v in marks:
        x[i] = v
    return x


def lane_edge_values(n: int, seed: int, lanes: int = 1024) -> np.ndarray:
    """float64 values for the reproducible pair's lanes (element i goes to lane i % lanes, in
    rows of `lanes`): where computing a TwoSum's error another exact way could part from TwoSum.
    Rows of signed zeros, a row then its negation (an exact cancellation to +0.0), a row repeated
    (|hi| == |v|), and small integers times 2^-60 .. 2^60 (exact sums beside large errors)."""
    rng = np.random.default_rng([seed, 20261125])
    rows = -(-n // lanes)
    x = rng.integers(-8, 9, (rows, lanes)) * np.exp2(rng.integers(-60, 61, (rows, lanes)))
    kind = rng.integers(0, 5, rows)
    for j in range(1, rows):
        if kind[j] == 0:
            x[j] = 0.0
        elif kind[j] == 1:
            x[j] = -0.0
        elif kind[j] == 2:
            x[j] = -x[j - 1]
        elif kind[j] == 3:
            x[j] = x[j - 1]
    return x.reshape(-1)[:n].astype(np.float64)
