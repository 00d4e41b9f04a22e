"""The accuracy battery (issue 18): data families, seeded, generated on the CPU with numpy, the
same bits on every machine. The families and their condition numbers:
docs/reproducible.md#the-data-battery."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from harness.check import exact
from harness.core.mappings import LANES

ALL_DTYPES = ("float32", "float16", "bfloat16")
WIDE_RANGE = ("float32", "bfloat16")  # 2^120, 1e30 and 1e8 fit
PAST_LIMIT_STRIDE = LANES
PAST_LIMIT_PATTERN = (2.0**120, 2.0**60, 1.0, -(2.0**120), -(2.0**60))
CANCELLATION_SCALE = 1e8
CANCELLATION_SMALL_EVERY = 64


def round_to(a: np.ndarray, dtype: str) -> np.ndarray:
    """float32 values rounded to dtype (nearest even, torch's), back as float32 (exact)."""
    if dtype not in ALL_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; the battery has {', '.join(ALL_DTYPES)}")
    a = np.asarray(a, dtype=np.float32)
    return a if dtype == "float32" else to_tensor(a.copy(), dtype, "cpu").float().numpy()


def _cancellation(n: int, rng: np.random.Generator, dtype: str) -> np.ndarray:
    small = min(n, max(1, n // CANCELLATION_SMALL_EVERY))
    pairs = (n - small) // 2
    small = n - 2 * pairs
    big = rng.standard_normal(pairs, dtype=np.float32) * CANCELLATION_SCALE
    values = np.concatenate([big, -big, rng.random(small, dtype=np.float32)])
    return values[rng.permutation(n)]


def _subnormals(n: int, rng: np.random.Generator, dtype: str) -> np.ndarray:
    f = exact.float_format(dtype)
    mantissa = rng.integers(1, 2**f.fraction_bits, n).astype(np.float64)
    sign = rng.integers(0, 2, n) * 2.0 - 1.0
    return (sign * mantissa * 2.0**f.min_exponent).astype(np.float32)  # exact: m < 2^23


def _past_limit(n: int, rng: np.random.Generator, dtype: str) -> np.ndarray:
    x = np.zeros(n, dtype=np.float32)
    stride = PAST_LIMIT_STRIDE if n > 4 * PAST_LIMIT_STRIDE else max(1, n // 5)
    for k, v in enumerate(PAST_LIMIT_PATTERN):
        if k * stride < n:
            x[k * stride] = v
    return x


Generator = Callable[[int, np.random.Generator, str], np.ndarray]


@dataclass(frozen=True)
class Family:
    name: str
    description: str
    generator: Generator
    dtypes: tuple[str, ...] = ALL_DTYPES
    within_limit: bool = True  # False: past the double-double limit, reported, not promised

    def generate(self, n: int, seed: int = 0, dtype: str = "float32") -> np.ndarray:
        """n float32 values, exactly representable in dtype, the same on every machine."""
        if n < 0:
            raise ValueError(f"n must be at least 0, got {n}")
        if dtype not in self.dtypes:
            raise ValueError(f"{self.name} is made for {', '.join(self.dtypes)}, not {dtype}")
        rng = np.random.default_rng([seed, zlib.crc32(self.name.encode())])
        # Round-to-nearest-even is odd-symmetric: pairs drawn as +-v still cancel after it.
        x = self.generator(n, rng, dtype)
        assert x.dtype == np.float32 and x.shape == (n,)
        return round_to(x, dtype)


FAMILIES: tuple[Family, ...] = (
    Family("uniform", "uniform [0, 1)", lambda n, rng, _: rng.random(n, dtype=np.float32)),
    Family("normal", "standard normal",
           lambda n, rng, _: rng.standard_normal(n, dtype=np.float32)),
    Family("cancellation", "+-1e8 N(0,1) pairs cancelling exactly, 1 in 64 uniform [0,1)",
           _cancellation, WIDE_RANGE),
    Family("seed001", "2^24 then ones (seed 001)",
           lambda n, rng, _: np.where(np.arange(n) == 0, np.float32(2**24), np.float32(1)),
           WIDE_RANGE),
    Family("mixed", "1e30, 1, -1e30 repeating",
           lambda n, rng, _: np.resize(np.array([1e30, 1, -1e30], np.float32), n), WIDE_RANGE),
    Family("subnormals", "the format's subnormals, random signs", _subnormals),
    Family("constant", "0.1 everywhere", lambda n, rng, _: np.full(n, 0.1, dtype=np.float32)),
    Family("past-limit", "2^120, 2^60, 1, -2^120, -2^60 at stride 1024, zeros elsewhere",
           _past_limit, WIDE_RANGE, within_limit=False),
)  # fmt: skip
BY_NAME: dict[str, Family] = {f.name: f for f in FAMILIES}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def get(name: str) -> Family:
    try:
        return BY_NAME[name]
    except KeyError:
        raise ValueError(f"unknown data family {name!r}; valid: {', '.join(NAMES)}") from None


def kappa(x: np.ndarray) -> float:
    """The condition number sum|x| / |sum x|, exactly (float32 values)."""
    return exact.condition_number(np.asarray(x, dtype=np.float32))


def to_tensor(x: np.ndarray, dtype: str, device: str = "cuda", offset: int = 0):
    """x on the device as a torch tensor of dtype (values unchanged: they are representable).
    offset > 0: a view starting `offset` elements into a larger buffer (the same values, another
    alignment); the buffer's head is filled with NaN so a kernel reading before its view shows."""
    import torch

    t = torch.from_numpy(np.ascontiguousarray(x)).to(getattr(torch, dtype))
    if offset:
        t = torch.cat([torch.full((offset,), float("nan"), dtype=t.dtype), t])
    return t.to(device)[offset:]
