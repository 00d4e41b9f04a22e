"""The plan of family "reproducible": a workspace of chunk partials (hi, lo: M(n) float64 each,
harness.core.mappings) and a ticket counter; any grid G >= 1 gives the same bits. The CUDA
kernel loads a thread's P = 1024 / threads consecutive elements as one vector, which needs
min(16, P x itemsize)-byte alignment: a misaligned view runs the VEC = false instantiation (the
same lanes in the same order, scalar loads).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from harness.compile import cuda_loader
from harness.core import dtypes, mappings
from harness.core.catalogue import Variant
from harness.core.records_beyond import CUDA_PREFETCH, CUDA_UNROLL
from harness.launch.errors import no_room
from harness.launch.single_launch import COUNTER_DTYPE, FastestPlan, cuda_args, on_stream


@dataclass
class ReproduciblePlan(FastestPlan):
    """A FastestPlan with this family's workspace ([phi, plo, counter]) and byte count."""

    @property
    def launch_count(self) -> int:
        return 1 if self.variant.backend == "cuda" else 2

    def bytes_moved(self, first_pass_only: bool = False) -> int:
        """x read, the partials written and read back (2 x 2 x 8 bytes a chunk), the sum written."""
        m = mappings.chunk_count(self.n)
        return self.n * self.x.element_size() + 32 * m + self.outs[0].element_size()


def default_grid(variant: Variant, n: int) -> int:
    """At most per_sm x SMs blocks, balanced: as few as still take the M chunks in the same number
    of rounds, so every block sums the same number of chunks."""
    chunks, cap = mappings.chunk_count(n), variant.launch.per_sm * mappings.sm_count()
    if chunks <= cap:
        return max(1, chunks)
    rounds = -(-chunks // cap)
    return -(-chunks // rounds)


def vector_alignment(dtype: str, threads: int) -> int:
    """Bytes the CUDA kernel's vector loads need x aligned to (module docstring)."""
    return min(16, (mappings.LANES // threads) * dtypes.get(dtype).itemsize)


def cuda_expression(
    dtype: str, threads: int, unroll: int | str, vec: bool, prefetch: bool | str = CUDA_PREFETCH
) -> str:
    """reduce_reproducible's instantiation (unroll / prefetch: a value or the .cu's constant)."""
    cxx = dtypes.get(dtype).cxx
    pf = prefetch if isinstance(prefetch, str) else ("true" if prefetch else "false")
    return f"reduce_reproducible<{cxx}, {threads}, {unroll}, {'true' if vec else 'false'}, {pf}>"


def cuda_kernel(
    variant: Variant,
    dtype: str,
    x_ptr: int,
    threads: int | None = None,
    unroll: int | str = CUDA_UNROLL,
    prefetch: bool | str = CUDA_PREFETCH,
):
    """The CuPy kernel for an input at x_ptr: the vector instantiation if aligned for it."""
    threads = threads or variant.launch.threads
    vec = x_ptr % vector_alignment(dtype, threads) == 0
    expr = cuda_expression(dtype, threads, unroll, vec, prefetch)
    if expr == variant.name_expression(dtype):
        return cuda_loader.kernel(variant, dtype)
    return cuda_loader.kernel_by_expression(variant.source, expr)


def make_plan(
    variant: Variant, dtype: str, x: torch.Tensor, grid: int | None = None
) -> ReproduciblePlan:
    """`variant` over the flat x (checked by plan.make_plan) with `grid` blocks (default_grid)."""
    if grid is not None and grid < 1:
        raise ValueError(f"a grid needs at least one block, got {grid}")
    x = x.reshape(-1)
    n = x.numel()
    blocks = grid if grid is not None else default_grid(variant, n)
    ws = workspace(variant, mappings.chunk_count(n), x.device)
    with no_room(f"{variant.id}: no room for its result"):
        out = torch.empty(1, dtype=dtypes.get(dtype).sum_torch, device=x.device)
    if variant.backend == "cuda":
        kern, threads = cuda_kernel(variant, dtype, x.data_ptr()), variant.launch.threads
        go = on_stream(kern, max(1, blocks), threads, cuda_args(x, out, *ws))
    else:
        from triton_kernels import reproducible

        go = reproducible.launch(x, out, *ws[:2], blocks)
    return ReproduciblePlan(variant, dtype, x, [out], [go], blocks, workspace=ws)


def workspace(variant: Variant, m: int, device: torch.device, counter: bool = True) -> list:
    """The chunk partials phi and plo (m float64 each), then the CUDA kernel's zeroed ticket
    counter (counter=False: without it, the Triton pair's); DeviceMemoryError where they cannot be
    allocated."""
    with no_room(f"{variant.id} could not allocate its {m}-chunk workspace"):
        ws = [torch.empty(m, dtype=torch.float64, device=device) for _ in range(2)]
        if counter:
            ws.append(torch.zeros(1, dtype=COUNTER_DTYPE, device=device))
        return ws
