"""reduce-ladder's harness: catalogue, runs, verification, timing, CLI and reports.

Python API:
    harness.reduce_sum(x, "cuda/v3-sequential")   # 0-d result on x's device
    harness.partials(x, "triton/tile-256")        # first-pass per-block partial sums
    harness.reduce_sum(x2d, "cuda/axis-fastest", dim=1)  # as torch.sum(x2d, dim=1) (docs/axis.md)
    harness.core.catalogue.VARIANTS                    # every variant's record
    torch.ops.reduce_ladder.sum(x, "cuda/fastest")  # the same sum as a torch operator

Importing harness registers torch.ops.reduce_ladder.sum (harness.launch.torch_op).
"""

import harness.launch.torch_op  # noqa: F401  (registers torch.ops.reduce_ladder.sum)
from harness.launch.api import partials, reduce_sum

__all__ = ["partials", "reduce_sum"]
