"""The axis family's benchmark suite: sums along one dim, every stage beside the peers.

Per (shape, dim, dtype) of the case list (harness.core.axis_shapes.BENCH_SHAPES by default):
every axis variant that takes the shape (the stages and the fastest pair, CUDA and Triton), the
peers torch.sum(x, dim), torch.compile of it (static shapes, compiled once per case before
timing) and cupy.sum(x, axis) (no bfloat16 in CuPy: left out there), and a device copy of x
(the read limit: a copy reads and writes x's bytes, so x is read once in half the copy's time).
Each axis variant is first checked (harness.check.axis_verify: exact on the integer-valued data
used here while the sums stay exact, else within the bound of its longest addition chain;
poisoned outputs; x unchanged), then every subject is timed by harness.core.timing.time_ms
(CUDA events, the gate, the read-based L2 flush, median). A stage that takes more than
SLOW_MS per call (a thread per row on a few long rows takes seconds) is timed over SLOW_REPS
repetitions, said by the row's reps.

Output: long-format rows (harness.report.rows.Row), suite "axis", shape the tensor's shape,
config "dim=D", metric "total", bytes = x's bytes read plus the output's written; the copy's row
is variant "copy" with bytes read plus written. harness.report.axis_tables pivots them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence

from harness.core import device, dtypes
from harness.core.timing import Timing
from harness.report.rows import Row

SUITE = "axis"
DTYPES = ("float32", "bfloat16", "int32")
PEERS = ("peer/torch.sum", "peer/torch.compile", "peer/cupy.sum")
COPY = "copy"
SLOW_MS = 5.0
SLOW_REPS = 3
MAX_REPS = 50


@dataclasses.dataclass(frozen=True)
class Case:
    shape: tuple[int, ...]
    dim: int
    dtype: str

    @property
    def config(self) -> str:
        return f"dim={self.dim}"


def cases(
    shapes: Sequence[tuple[tuple[int, ...], int]] | None = None,
    dtype_names: Iterable[str] = DTYPES,
) -> list[Case]:
    """Every (shape, dim) x dtype, shapes first (one input per case)."""
    if shapes is None:
        from harness.core.axis_shapes import BENCH_SHAPES

        shapes = BENCH_SHAPES
    names = list(dtype_names)
    for d in names:
        if d not in dtypes.NAMES:
            raise ValueError(f"unknown dtype {d!r}; valid: {', '.join(dtypes.NAMES)}")
    return [Case(tuple(s), d, t) for s, d in shapes for t in names]


def _input(case: Case):
    """Integer-valued data 0..99 (exact in every dtype here), never all zeros."""
    import torch

    x = torch.randint(0, 100, case.shape, device="cuda", dtype=torch.int32)
    return x.to(dtypes.torch_dtype(case.dtype))


def _time(fn: Callable[[], object]) -> Timing:
    """time_ms, with few repetitions for a subject slower than SLOW_MS per call."""
    from harness.core import timing

    if timing.time_ms(fn, reps=1, warmup=0).median_ms > SLOW_MS:  # one probe call
        return timing.time_ms(fn, reps=SLOW_REPS, warmup=1)
    return timing.time_ms(fn, max_reps=MAX_REPS)


def _peer(name: str, x, dim: int) -> Callable[[], object] | None:
    """The peer's call on x (warmed), or None where it does not apply to x's dtype."""
    import torch

    if name == "peer/torch.sum":
        return lambda: torch.sum(x, dim=dim)
    if name == "peer/torch.compile":
        f = torch.compile(lambda t: torch.sum(t, dim=dim), dynamic=False, fullgraph=True)
        f(x)
        return lambda: f(x)
    if name == "peer/cupy.sum":
        if x.dtype == torch.bfloat16 or not device.cupy_gpu()[0]:
            return None
        import cupy

        cx = cupy.asarray(x)
        return lambda: cupy.sum(cx, axis=dim)
    raise ValueError(f"unknown peer {name!r}")


def measure(case: Case, variants: Sequence[str] | None = None, log=print) -> list[Row]:
    """Rows for one case: each axis variant checked then timed, the peers and the copy timed."""
    import torch

    from harness.check import axis_verify
    from harness.core import catalogue
    from harness.launch.api import reduce_sum

    info = device.device_info()
    common = {"device": info.get("name", ""), "suite": SUITE, "config": case.config}
    common |= {"dtype": case.dtype, "shape": case.shape, "metric": "total"}
    common["versions"] = tuple(
        sorted((k, str(info[k])) for k in ("torch", "triton", "cupy", "cuda_runtime") if k in info)
    )
    x = _input(case)
    out_bytes = x.numel() // x.shape[case.dim] * x.element_size()
    read = x.numel() * x.element_size()
    rows: list[Row] = []

    def row(variant: str, t: Timing | None, check: str, nbytes: int) -> None:
        if t is None:
            rows.append(Row(**common, variant=variant, median_ms=float("nan"), check=check))
            return
        stats = dataclasses.asdict(t)
        rows.append(Row(**common, variant=variant, **stats, bytes=nbytes, check=check))

    ids = variants or [v.id for v in catalogue.AXIS_VARIANTS]
    for vid in ids:
        v = catalogue.get_axis(vid)
        try:
            got = axis_verify.check_axis(v, x, case.dim)
        except (ValueError, TypeError) as e:  # the stage does not take this shape / dtype
            row(vid, None, "skipped", 0)
            log(f"  {vid}: skipped ({e})")
            continue
        if not got.ok:
            row(vid, None, "wrong", 0)
            log(f"  {vid}: WRONG ({got.message})")
            continue
        t = _time(lambda vid=vid: reduce_sum(x, vid, dim=case.dim))
        row(vid, t, "ok", read + out_bytes)
    for name in PEERS:
        fn = _peer(name, x, case.dim)
        if fn is not None:
            row(name, _time(fn), "", read + out_bytes)
    y = torch.empty_like(x)
    row(COPY, _time(lambda: y.copy_(x)), "", 2 * read)
    return rows


def run(selected: Iterable[Case], variants: Sequence[str] | None = None, log=print) -> list[Row]:
    """Every case's rows, in order; needs a GPU (the caller checks)."""
    out: list[Row] = []
    for case in selected:
        log(f"{case.dtype} {case.shape} {case.config}")
        out += measure(case, variants, log)
    return out
