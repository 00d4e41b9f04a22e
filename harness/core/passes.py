"""Pass policy: how a variant turns any n >= 1 into one value.

Every multi-pass variant reduces its input to one partial per block; the harness then runs the SAME
kernel again over the partials, with the same launch policy, until a single value is left (seed
001's host loop, applied to every stage). The first pass is what the seeds time; the harness times
it separately from the whole chain. A one-launch mapping (the single-launch family) is one pass
that returns the value itself.

What each mapping does lives in its mapping object (harness.core.mappings); these functions are
the entry points the other layers call.
"""

from __future__ import annotations

from harness.core.mappings import (
    BLOCK_REDUCE_BOUND,
    CPU_SM_COUNT,
    Launch,
    Pass,
    cdiv,
    plan_passes,
    single_launch_cap,
    sm_count,
)

__all__ = [
    "BLOCK_REDUCE_BOUND",
    "CPU_SM_COUNT",
    "Pass",
    "block_elements",
    "cdiv",
    "chain_length",
    "one_pass",
    "plan_passes",
    "single_launch_cap",
    "sm_count",
]


def one_pass(launch: Launch, n: int) -> Pass:
    """The grid of one pass over n elements (launch.mapping.grid)."""
    return launch.mapping.grid(launch, n)


def chain_length(launch: Launch, n: int) -> int:
    """Upper bound on the additions any input element goes through on its way to the result
    (launch.mapping.chain_length). Used for the float error bound in harness.check.verify."""
    return launch.mapping.chain_length(launch, n)


def block_elements(launch: Launch, p: Pass, block: int) -> list[range]:
    """The input indices block `block` of pass `p` reads, as ranges clipped to [0, p.n)
    (launch.mapping.block_elements)."""
    return launch.mapping.block_elements(launch, p, block)
