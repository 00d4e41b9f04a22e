"""torch.ops.reduce_ladder.sum(x, variant="cuda/fastest", dim=None): reduce_sum as a torch operator
(registered by `import harness`): under torch.compile(fullgraph=True) one opaque node, shaped by
the fake below (which raises reduce_sum's errors while Dynamo traces); it mutates nothing and has
no autograd formula: an x that requires grad, with grad mode on, is an error (torch's fallback
would hand back a result that requires grad and give x no gradient, with only a warning), and a
Python autograd kernel would cost every call 3.5 us (torch.library.register_autograd on an op
like `noop`, timeit, torch 2.13). Registered with torch.library.Library on the CUDA and CPU keys
(CPU: Triton's interpreter), not with custom_op, which wraps every call in Python: dispatch alone
costs 8.4 us with custom_op, 1.6 us with Library.impl on the CPU key (timeit, torch 2.13).
`noop`, the same registration around a function returning a tensor made once, is what dispatch
costs alone.
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
    if x.requires_grad and torch.is_grad_enabled():
        raise RuntimeError(
            f"{OP_NAME} has no gradient and x requires grad: call it on x.detach() (or under "
            "torch.no_grad()), or use torch.sum where the gradient is needed"
        )
    return api.reduce_sum(x, variant, dim=dim)


_noop_results: dict[torch.device, torch.Tensor] = {}


def _noop(x: torch.Tensor, variant: str = DEFAULT_VARIANT) -> torch.Tensor:
    """A 0-d tensor made once per device: the body costs a dict get."""
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
    if dim is None and not axis_plan.is_axis(variant):
        return x.new_empty((), dtype=api.result_dtype(variant, x.dtype))
    return x.new_empty(api.axis_result_shape(x, variant, dim))


@torch.library.register_fake(NOOP_NAME, lib=_lib)
def _fake_noop(x: torch.Tensor, variant: str = DEFAULT_VARIANT) -> torch.Tensor:
    return x.new_empty((), dtype=torch.float32)
