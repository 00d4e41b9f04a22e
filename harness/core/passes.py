"""Pass policy: how a variant turns any n >= 1 into one value (docs/correctness.md): the same
kernel again over the partials until one is left, or one launch that returns the value. The entry
points the other layers call; the mapping objects do the work."""

from __future__ import annotations

from harness.core.mappings import Launch, Pass, cdiv, plan_passes, single_launch_cap, sm_count

__all__ = ["Pass", "cdiv", "one_pass", "plan_passes", "single_launch_cap", "sm_count"]


def one_pass(launch: Launch, n: int) -> Pass:
    return launch.mapping.grid(launch, n)
