"""torch.ops.reduce_ladder.sum(x, variant="cuda/fastest"): the ladder's sum as a torch operator.

Importing this module registers the operator (`import harness.launch.torch_op`); `import harness`
does not, so that plain use of the harness pays nothing for torch.library. Registered with
torch.library.custom_op, so that:
- eager: the call runs harness.launch.api.reduce_sum (the plan cache: one launch per call on a
  hit, on torch's current stream) and returns a new 0-d tensor;
- torch.compile(fullgraph=True): Dynamo records the call as one opaque node (no graph break), its
  output shape and dtype from the fake implementation below (a 0-d tensor of the sum dtype:
  harness.core.dtypes' sum_dtype for the single-launch family, the input's for the ladder);
- CUDA-graph capture: a cache hit synchronizes nothing and allocates only the 0-d result (from
  the graph's pool), so it captures; call it once on the capture stream before capturing, as
  every capture warms up (a miss inside a capture raises plan_cache.PlanCacheMiss).
The operator mutates nothing and has no autograd formula (a sum's gradient is not the point here:
backward through it raises).
"""

from __future__ import annotations

import torch

from harness.launch import api

OP_NAME = "reduce_ladder::sum"
DEFAULT_VARIANT = "cuda/fastest"


@torch.library.custom_op(OP_NAME, mutates_args=())
def reduce_ladder_sum(x: torch.Tensor, variant: str = DEFAULT_VARIANT) -> torch.Tensor:
    """The sum of all elements of x by `variant` (harness.reduce_sum), a new 0-d tensor."""
    return api.reduce_sum(x, variant)


@reduce_ladder_sum.register_fake
def _fake_sum(x: torch.Tensor, variant: str = DEFAULT_VARIANT) -> torch.Tensor:
    """Shape and dtype only: a 0-d tensor of the variant's sum dtype on x's device."""
    return x.new_empty((), dtype=api.result_dtype(variant, x.dtype))


def op() -> torch._ops.OpOverloadPacket:
    """torch.ops.reduce_ladder.sum (registered by importing this module)."""
    return torch.ops.reduce_ladder.sum
