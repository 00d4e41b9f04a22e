"""torch.ops.reduce_ladder.sum(x, variant="cuda/fastest", dim=None): the ladder's sum as a torch
operator; with dim (an axis variant), the sum along that dim (reduce_sum(x, variant, dim=dim)).

`import harness` registers it (about 1 ms by `python -X importtime`, against 1.2 s for torch):
- eager: the call runs harness.launch.api.reduce_sum (on a plan-cache hit its hot path);
- torch.compile(fullgraph=True): Dynamo records one opaque node (no graph break), its shape and
  dtype from the fake implementation below, which raises reduce_sum's errors for a bad variant,
  dim, shape or dtype while Dynamo traces;
- CUDA-graph capture (torch.cuda.graph, mode="reduce-overhead"): captured on the capturing stream
  with a workspace the graph owns (harness.launch.workspace), so concurrent replays never share a
  counter or partials; call it once with such an input before capturing, as every capture warms
  up (a first call inside a capture raises plan_cache.PlanCacheMiss before anything is enqueued).

Registered with the low-level torch.library.Library (define, impl per dispatch key, register_fake)
rather than torch.library.custom_op, which routes every call through Python wrappers of its own.
Dispatch alone (timeit, CPU, torch 2.13): custom_op 8.4 us per call, with register_kernel("cpu")
7.8 us, Library.impl on the CPU key 1.6 us, on CompositeExplicitAutograd 3.0 us (a plain Python
call 0.06 us). So the implementation is registered on the CUDA and CPU keys (CPU: Triton's
interpreter), straight to api.reduce_sum. `noop` (reduce_ladder::noop) is the same registration
around a function that returns a 0-d tensor made once: its time is what dispatch costs alone
(experiments.call_profile and the per-call bench time it on the GPU).

The operator mutates nothing and has no autograd formula: with an input that requires grad,
torch's autograd fallback warns and backward raises.
"""

from __future__ import annotations

import torch

from harness.launch import api, axis_plan

NAMESPACE = "reduce_ladder"
OP_NAME = f"{NAMESPACE}::sum"
NOOP_NAME = f"{NAMESPACE}::noop"
DEFAULT_VARIANT = "cuda/fastest"
KEYS = ("CUDA", "CPU")  # CPU: Triton variants under TRITON_INTERPRET=1 (api refuses the rest)

_lib = torch.library.Library(NAMESPACE, "DEF")
_lib.define(f"sum(Tensor x, str variant='{DEFAULT_VARIANT}', int? dim=None) -> Tensor")
_lib.define(f"noop(Tensor x, str variant='{DEFAULT_VARIANT}') -> Tensor")


def reduce_ladder_sum(
    x: torch.Tensor, variant: str = DEFAULT_VARIANT, dim: int | None = None
) -> torch.Tensor:
    """harness.reduce_sum(x, variant), or with dim the sum along dim, as torch.sum(x, dim)."""
    if dim is None:
        return api.reduce_sum(x, variant)
    return api.reduce_sum(x, variant, dim=dim)


_noop_results: dict[torch.device, torch.Tensor] = {}


def _noop(x: torch.Tensor, variant: str = DEFAULT_VARIANT) -> torch.Tensor:
    """A 0-d tensor made once per device (every call returns it): the body costs a dict get."""
    out = _noop_results.get(x.device)
    if out is None:
        out = _noop_results[x.device] = torch.zeros((), device=x.device)
    return out


for _key in KEYS:
    _lib.impl("sum", reduce_ladder_sum, _key)
    _lib.impl("noop", _noop, _key)


@torch.library.register_fake(OP_NAME, lib=_lib)
def _fake_sum(
    x: torch.Tensor, variant: str = DEFAULT_VARIANT, dim: int | None = None
) -> torch.Tensor:
    """A 0-d tensor of the variant's sum dtype on x's device; with dim (or an axis variant),
    torch.sum(x, dim)'s shape in x's dtype."""
    if dim is None and not axis_plan.is_axis(variant):
        return x.new_empty((), dtype=api.result_dtype(variant, x.dtype))
    return x.new_empty(api.axis_result_shape(x, variant, dim))


@torch.library.register_fake(NOOP_NAME, lib=_lib)
def _fake_noop(x: torch.Tensor, variant: str = DEFAULT_VARIANT) -> torch.Tensor:
    return x.new_empty((), dtype=torch.float32)
