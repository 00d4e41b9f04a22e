"""The axis suite's cases and measurement (suite "axis" of harness.studies.suites): sums along one
dim, every stage beside the peers.

A case is one subject at one (shape, dim, dtype): an axis variant (the stages and the fastest
pair, CUDA and Triton), a peer (PEERS: torch.sum(x, dim), torch.compile of it, cupy.sum(x, axis),
cuda.compute's segmented reduce: a segment per row of a 2-D tensor) or "copy", a device copy of x
(the read limit). Consecutive cases of one (shape, dim, dtype) share one input of integers 0..99,
exact in every dtype here. An axis variant is checked (harness.check.axis_verify) before it is
timed. A row: config "MxN dim=D", metric "total", bytes = x's bytes read plus the output's written
(the copy: read plus written); harness.report.axis_tables pivots the rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from harness.core import catalogue, dtypes
from harness.core.timing import Timing
from harness.report.records import Row
from harness.studies import session

ShapeDim = tuple[tuple[int, ...], int]  # (shape, dim): a sum along dim

# The shape sets: "reference" (ISSUE: the issue's table and the shapes it names), "tritonbench" (the
# shapes of tritonbench's `sum` operator, tritonbench/operators/sum/operator.py: every (M, N) of its
# get_dim_vals under its 8e9-byte TENSOR_BYTES_LIMIT on float32, along dim 0 and 1, and its "large
# middle dim" 3-D set, reduced along N), "all".
_TB_DIMS = [2**n for n in range(9, 22, 2)] + [(n - 1) * (n + 1) for n in range(9, 22, 2)]
TRITONBENCH: tuple[ShapeDim, ...] = (
    *(((m, n), dim) for dim in (0, 1) for m in _TB_DIMS for n in _TB_DIMS if m * n * 4 < 8e9),
    *(((m, n, k), 1) for m in (8, 16) for n in (2**e for e in range(12, 22, 2)) for k in (8, 16)),
)
ISSUE: tuple[ShapeDim, ...] = (
    ((2**20, 64), 1), ((2**20, 64), 0), ((4096, 4096), 0), ((4096, 4096), 1), ((65536, 1024), 0),
    ((8, 2**24), 1), ((8, 2**24), 0), ((1024, 2**18), 0), ((1024, 2**18), 1), ((262144, 128), 0),
    ((2**20, 4), 1),
)  # fmt: skip
SHAPE_SETS = {"reference": ISSUE, "tritonbench": TRITONBENCH,
              "all": tuple(dict.fromkeys(TRITONBENCH + ISSUE))}  # fmt: skip

DTYPES = ("float32", "bfloat16", "int32")
CCCL = "peer/cuda.compute"
PEERS = ("peer/torch.sum", "peer/torch.compile", "peer/cupy.sum", CCCL)
COPY = "copy"
SLOW_MS = 5.0
SLOW_REPS = 3
MAX_REPS = 50


def subjects() -> list[str]:
    """Every subject a case may name: the axis variants, the peers, the copy."""
    return [v.id for v in catalogue.AXIS_VARIANTS] + [*PEERS, COPY]


def config(shape: tuple[int, ...], dim: int) -> str:
    return f"{'x'.join(map(str, shape))} dim={dim}"


def parse_config(text: str) -> tuple[tuple[int, ...], int]:
    """ "8x16777216 dim=1" -> ((8, 16777216), 1)."""
    shape, dim = text.split(" dim=")
    return tuple(int(s) for s in shape.split("x")), int(dim)


def supports(subject: str, dtype: str) -> bool:
    """An axis variant's dtypes; every peer's but CuPy's and cuda.compute's bfloat16 (CuPy has
    none; cuda.compute would add it in bfloat16, where torch.sum adds in float32)."""
    if subject in catalogue.AXIS_BY_ID:
        return dtype in catalogue.get_axis(subject).dtypes
    return not (subject in ("peer/cupy.sum", CCCL) and dtype == "bfloat16")


def refusal(subject: str, shape: tuple[int, ...], dim: int) -> str | None:
    """Why a peer does not take this (shape, dim) here (its row is "skipped"), or None."""
    if subject != CCCL:
        return None
    if len(shape) != 2 or dim != 1:
        return "cuda.compute's segmented reduce sums contiguous segments: the rows of a 2-D tensor"
    from harness.launch.peers import cccl_unavailable_reason

    return cccl_unavailable_reason()


def input_for(shape: tuple[int, ...], dtype: str):
    """The case's input, kept while consecutive cases share it."""

    def make():
        import torch

        x = torch.randint(0, 100, shape, device="cuda", dtype=torch.int32)
        return x.to(dtypes.torch_dtype(dtype))

    return session.kept(("axis", shape, dtype), make)


def call(subject: str, x, dim: int) -> Callable[[], object]:
    """The subject's call on x, warmed (torch.compile compiled here)."""
    import torch

    if subject in catalogue.AXIS_BY_ID:
        from harness.launch.api import reduce_sum

        return lambda: reduce_sum(x, subject, dim=dim)
    if subject == "peer/torch.sum":
        return lambda: torch.sum(x, dim=dim)
    if subject == "peer/torch.compile":
        torch._dynamo.reset()  # one compiled sum per case: no recompile limit across the shapes
        f = torch.compile(lambda t: torch.sum(t, dim=dim), dynamic=False, fullgraph=True)
        f(x)
        return lambda: f(x)
    if subject == CCCL:
        from harness.launch.peers import segmented_rows

        return segmented_rows(x)
    if subject == "peer/cupy.sum":
        import cupy

        cx = cupy.asarray(x)
        return lambda: cupy.sum(cx, axis=dim)
    if subject == COPY:
        y = torch.empty_like(x)
        return lambda: y.copy_(x)
    raise ValueError(f"unknown subject {subject!r}")


def _time(fn: Callable[[], object], reps: int | None = None) -> Timing:
    """time_ms (`reps` repetitions when given), with few repetitions for a subject slower than
    SLOW_MS per call."""
    from harness.core import timing

    if reps is not None:
        return timing.time_ms(fn, reps=reps)
    if timing.time_ms(fn, reps=1, warmup=1).median_ms > SLOW_MS:  # one probe call
        return timing.time_ms(fn, reps=SLOW_REPS, warmup=0)
    return timing.time_ms(fn, max_reps=MAX_REPS)


def measure(subject: str, dtype: str, cfg: str, common: dict, reps: int | None = None) -> list[Row]:
    """One row: the subject checked (an axis variant) then timed; a refused shape is "skipped",
    a wrong sum "wrong" (an exception: the runner's row, check "error")."""
    shape, dim = parse_config(cfg)
    ident = {**common, "variant": subject, "config": cfg, "dtype": dtype, "shape": shape}
    ident["metric"] = "total"
    if why := refusal(subject, shape, dim):
        return session.untimed(ident, "skipped", why)
    x = input_for(shape, dtype)
    nbytes = x.numel() * x.element_size()
    nbytes += nbytes if subject == COPY else nbytes // max(1, shape[dim])
    if subject in catalogue.AXIS_BY_ID:
        from harness.check import axis_verify
        from harness.launch import axis_plan

        v = catalogue.get_axis(subject)
        try:  # the stage does not take this shape: skipped (any other error: the runner's)
            axis_plan.check(v, shape, dim, x.element_size())
        except (ValueError, TypeError) as e:
            return session.untimed(ident, "skipped", str(e))
        got = axis_verify.check_axis(v, x, dim)
        if not got.ok:
            return session.untimed(ident, "wrong", got.message)
    t = _time(call(subject, x, dim), reps)
    check = "ok" if subject in catalogue.AXIS_BY_ID else ""
    return [Row(**ident, **t.record(), bytes=nbytes, check=check)]


def numel(cfg: str) -> int:
    return math.prod(parse_config(cfg)[0])
