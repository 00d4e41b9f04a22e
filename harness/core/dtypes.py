"""The element types the project knows: one table, read by every layer, with the IEEE bit fields
the exact sums read (harness.check.exact). float16 / bfloat16 are raw 16-bit storage types in CUDA
(`rl_half`, `rl_bfloat16`, cuda_kernels/fastest.cu), and the single-launch (fastest) family returns
their sums in float32 (sum_dtype), not rounded back. torch and numpy are imported lazily so that
reading the table (the CLI's usage checks) costs no torch import.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

# What every output buffer holds before a checked run: a partial a kernel forgot to write shows up
# as NaN (floats) or as this sentinel (ints, 0xDEADBEEF as an int32) and fails the comparison.
INT_POISON = -0x21524111


@dataclass(frozen=True)
class DType:
    name: str  # the catalogue's spelling, e.g. "float32"
    cxx: str  # the C++ type in CUDA name expressions
    itemsize: int  # bytes per element
    sum_dtype: str  # what the single-launch family returns a sum in (its accumulator)
    exponent_bits: int = 0  # a float's IEEE bit fields (0 for int32)
    fraction_bits: int = 0

    @property
    def torch(self) -> torch.dtype:
        import torch

        return getattr(torch, self.name)

    @property
    def sum_torch(self) -> torch.dtype:
        return DTYPES[self.sum_dtype].torch

    @property
    def bits_dtype(self) -> type:  # the unsigned integer numpy type of the same width
        import numpy as np

        return np.dtype(f"u{self.itemsize}").type

    @property
    def precision(self) -> int:  # the implicit bit counted
        return self.fraction_bits + 1

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def min_exponent(self) -> int:
        """The exponent of the smallest subnormal: every float of the format is m * 2^this."""
        return 1 - self.bias - self.fraction_bits

    @property
    def max_finite(self) -> Fraction:
        top_exponent = 2**self.exponent_bits - 2 - self.bias  # the field below all ones
        return Fraction(2**self.precision - 1) * Fraction(2) ** (top_exponent - self.fraction_bits)

    @property
    def unit_roundoff(self) -> float:
        """2^-precision of the type the sum is added in (sum_dtype: float32 for 16-bit floats)."""
        return 2.0 ** -DTYPES[self.sum_dtype].precision


DTYPES: dict[str, DType] = {
    d.name: d
    for d in (
        DType("float32", "float", 4, "float32", 8, 23),
        DType("int32", "int", 4, "int32"),
        DType("float16", "rl_half", 2, "float32", 5, 10),
        DType("bfloat16", "rl_bfloat16", 2, "float32", 8, 7),
        DType("float64", "double", 8, "float64", 11, 52),
    )
}
NAMES: tuple[str, ...] = tuple(DTYPES)


def get(name: str) -> DType:
    """The DType called `name`; a ValueError naming the known ones otherwise."""
    try:
        return DTYPES[name]
    except KeyError:
        raise ValueError(f"unknown dtype {name!r}; valid: {', '.join(DTYPES)}") from None


def torch_dtype(name: str) -> torch.dtype:
    return get(name).torch


def name_of(dt: torch.dtype) -> str:
    """The catalogue name of a torch dtype; a ValueError naming the supported ones otherwise."""
    for d in DTYPES.values():
        if d.torch == dt:
            return d.name
    raise ValueError(f"unsupported dtype {dt}; supported: {', '.join(DTYPES)}")


def poison_(t: torch.Tensor) -> torch.Tensor:
    """Fill t with the poison value of its dtype (NaN or INT_POISON), in place."""
    return t.fill_(float("nan") if t.dtype.is_floating_point else INT_POISON)
