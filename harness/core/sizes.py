"""Sizes as people write them ('2^24', '2^20+3', '1000') and as tables label them ('2^24').

One parser and one label for the CLI, the benchmarks and the reports.
"""

from __future__ import annotations

import re

_SIZE = re.compile(r"^\s*(?:(\d+)\s*(?:\^|\*\*)\s*(\d+)|(\d+))\s*(?:([+-])\s*(\d+))?\s*$")


def parse_size(text: str) -> int:
    """'1000', '2^24', '2**25', '2^20+3', '2^31-1' -> int >= 1; ValueError otherwise."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"bad size {text!r}: write an integer such as 1000, 2^24 or 2^20+3")
    n = int(m.group(1)) ** int(m.group(2)) if m.group(1) else int(m.group(3))
    if m.group(4):
        n = n + int(m.group(5)) if m.group(4) == "+" else n - int(m.group(5))
    if n < 1:
        raise ValueError(f"bad size {text!r}: sizes must be at least 1 (got {n})")
    return n


def size_label(n: int) -> str:
    """'2^k' for a power of two, else the number with thousands separators."""
    return f"2^{n.bit_length() - 1}" if n > 0 and n & (n - 1) == 0 else f"{n:,}"
