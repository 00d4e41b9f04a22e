"""The axis suite's cases and measurement (registered as suite "axis" in harness.studies.suites):
sums along one dim, every stage beside the peers.

A case is one subject at one (shape, dim, dtype): an axis variant (the stages and the fastest
pair, CUDA and Triton), a peer -- torch.sum(x, dim), torch.compile of it (static shapes,
compiled before timing), cupy.sum(x, axis) (no bfloat16 in CuPy: left out there) -- or "copy",
a device copy of x (the read limit: a copy reads and writes x's bytes, so x is read once in half
the copy's time). Consecutive cases of one (shape, dim, dtype) share one input: integer-valued
0..99, exact in every dtype here. An axis variant is first checked
(harness.check.axis_verify: exact while the sums stay exact, else within the bound of its
longest addition chain; poisoned outputs; x unchanged); then every subject is timed by
harness.core.timing.time_ms (CUDA events, the gate, the read-based L2 flush, median). A subject
slower than SLOW_MS per call (a thread per row on a few long rows takes seconds) is timed over
SLOW_REPS repetitions, said by the row's reps.

Shapes (SHAPE_SETS, harness.core.axis_shapes): "reference" (the default: the measured table's
and the named shapes, axis_shapes.ISSUE), "tritonbench" (its 2-D and 3-D sum shapes), "all".
A row: suite "axis", variant the subject, config "MxN dim=D", shape the tensor's shape, metric
"total", bytes = x's bytes read plus the output's written (the copy: read plus written).
harness.report.axis_tables pivots the rows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from harness.core import axis_shapes, catalogue, dtypes
from harness.core.timing import Timing
from harness.report.records import Row

SUITE = "axis"
DTYPES = ("float32", "bfloat16", "int32")
PEERS = ("peer/torch.sum", "peer/torch.compile", "peer/cupy.sum")
COPY = "copy"
SHAPE_SETS = {
    "reference": axis_shapes.ISSUE,
    "tritonbench": axis_shapes.TRITONBENCH_2D + axis_shapes.TRITONBENCH_3D,
    "all": axis_shapes.BENCH_SHAPES,
}
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


def shapes(name: str) -> tuple[tuple[tuple[int, ...], int], ...]:
    if name not in SHAPE_SETS:
        raise ValueError(f"unknown shape set {name!r}; sets: {', '.join(SHAPE_SETS)}")
    return SHAPE_SETS[name]


def supports(subject: str, dtype: str) -> bool:
    if subject in PEERS or subject == COPY:
        return not (subject == "peer/cupy.sum" and dtype == "bfloat16")
    return dtype in catalogue.get_axis(subject).dtypes


_inputs: dict = {}


def input_for(shape: tuple[int, ...], dtype: str):
    """The case's input, kept while consecutive cases share it."""
    key = (shape, dtype)
    if key not in _inputs:
        import torch

        _inputs.clear()
        torch.cuda.empty_cache()
        x = torch.randint(0, 100, shape, device="cuda", dtype=torch.int32)
        _inputs[key] = x.to(dtypes.torch_dtype(dtype))
    return _inputs[key]


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
    a wrong sum "wrong", an exception "error" (with its message), never raised."""
    shape, dim = parse_config(cfg)
    ident = {**common, "variant": subject, "config": cfg, "dtype": dtype, "shape": shape}
    ident["metric"] = "total"
    try:
        x = input_for(shape, dtype)
        nbytes = x.numel() * x.element_size()
        nbytes += nbytes if subject == COPY else nbytes // max(1, shape[dim])
        if subject in catalogue.AXIS_BY_ID:
            from harness.check import axis_verify

            try:
                got = axis_verify.check_axis(catalogue.get_axis(subject), x, dim)
            except (ValueError, TypeError) as e:  # the stage does not take this shape
                return [Row(**ident, median_ms=None, check="skipped", info={"message": str(e)})]
            if not got.ok:
                return [Row(**ident, median_ms=None, check="wrong", info={"message": got.message})]
        fn = call(subject, x, dim)
        t = _time(fn, reps)
    except Exception as e:  # recorded; the run goes on
        import torch

        torch.cuda.synchronize()
        msg = f"{type(e).__name__}: {e}"[:300]
        return [Row(**ident, median_ms=None, check="error", info={"message": msg})]
    check = "ok" if subject in catalogue.AXIS_BY_ID else ""
    return [Row(**ident, **dataclasses.asdict(t), bytes=nbytes, check=check)]


def numel(cfg: str) -> int:
    return math.prod(parse_config(cfg)[0])
