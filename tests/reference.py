"""The exact first-pass partials a variant's tile mapping defines, without a kernel: what the
twins' and the int32 tests compare every block's partial with (docs/int32.md)."""

from __future__ import annotations

import torch

from harness.core.catalogue import Variant


def reference_partials(variant: Variant, x: torch.Tensor) -> torch.Tensor:
    """The exact first-pass partials (int64) the variant's tile mapping defines, without a
    kernel: each element's block (launch.mapping.block_of), then a scatter-add (the seeds' CPU
    check, vectorized). A single-launch mapping has no fixed per-block partials: ValueError."""
    launch = variant.launch
    n = x.numel()
    p = launch.mapping.grid(launch, n)
    try:
        block = launch.mapping.block_of(
            launch, p, torch.arange(n, device=x.device, dtype=torch.int64)
        )
    except ValueError as e:
        raise ValueError(f"{variant.id}: no per-block reference ({e})") from None
    out = torch.zeros(p.blocks, dtype=torch.int64, device=x.device)
    return out.scatter_add_(0, block, x.to(torch.int64))
