"""Pass policy: how a variant turns any n >= 1 into one value. A multi-pass variant reduces its
input to one partial per block, and the harness runs the SAME kernel again over the partials,
with the same launch policy, until one value is left (seed 001's host loop, applied to every
stage); the seeds time the first pass, the harness also the whole chain. A one-launch mapping is
one pass that returns the value itself. The mapping objects (harness.core.mappings) do the work;
these are the entry points the other layers call.
"""

from __future__ import annotations

from harness.core.mappings import Launch, Pass, cdiv, plan_passes, single_launch_cap, sm_count

__all__ = ["Pass", "cdiv", "plan_passes", "single_launch_cap", "sm_count"]
__all__ += ["chain_length", "one_pass"]


def one_pass(launch: Launch, n: int) -> Pass:
    return launch.mapping.grid(launch, n)


def chain_length(launch: Launch, n: int) -> int:
    """The most additions any element goes through (the float error bound, harness.check.verify)."""
    return launch.mapping.chain_length(launch, n)
