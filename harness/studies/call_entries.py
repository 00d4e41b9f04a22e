"""The per-call suite ("callable" of harness.studies.suites: `reduce-ladder bench callable`): what a
user calls to sum, each entry made ready for one (dtype, n), and its measure.

Every entry is called back to back in a Python loop, warmed first (plan-cache misses, Triton's
tuner, torch.compile) so that the loops time hits (harness.core.timing.loop_ms). Where one input
fits in L2 twice over, the loop rotates over views of one buffer covering twice the L2 size (at
most MAX_VIEWS; the bytes touched are the row's bytes).

The entries: for every variant reduce_sum takes, `api V`, `api V out=` (a preallocated result) and
`op V` (torch.ops.reduce_ladder.sum); beside them torch.sum (with and without out=), cupy.sum
(CUB), a torch.compile'd sum, the op's dispatch alone, and for the fastest pair the plan reused
and the cached launch alone, in the plan cache's default mode (what reduce_sum adds to:
overheads()). The other launch modes it once compared: harness.launch.rebind's docstring.
Rows: metric "call", config the entry's kind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cache, partial

from harness.core import catalogue
from harness.core import sizes as sizes_mod
from harness.launch.rebind import LAUNCH_MODES
from harness.report.records import Row
from harness.studies import session

DEFAULT_SIZES = tuple(2**k for k in range(10, 31, 2))
DEFAULT_DTYPES = ("float32", "int32", "bfloat16")
MAX_VIEWS = 256
FASTEST = ("cuda/fastest", "triton/fastest")
# the fastest pair's cached launch in the plan cache's default mode (not native: the one it adds to)
LAUNCHES = tuple((v, LAUNCH_MODES[catalogue.get(v).backend][0]) for v in FASTEST)


# An entry is its maker, (dtype, views) -> the call timed (one input per call; the makers below
# take what they need first, and import torch and CuPy inside), and the catalogue variant it
# calls, if any (its dtypes and max_n apply).
Maker = Callable[[str, list], Callable[[object], object]]


def _api(vid: str, out: bool, dtype: str, views: list):
    import torch

    from harness.launch.api import reduce_sum, result_dtype  # what `harness.reduce_sum` is

    if not out:
        return lambda x: reduce_sum(x, vid)
    o = torch.empty((), dtype=result_dtype(vid, views[0].dtype), device=views[0].device)
    return lambda x: reduce_sum(x, vid, out=o)


def _op(vid: str, name: str, dtype: str, views: list):
    """torch.ops.reduce_ladder.<name> (noop: what the op's dispatch costs alone)."""
    import torch

    from harness.launch import torch_op  # noqa: F401  (registers the ops)

    op = getattr(torch.ops.reduce_ladder, name)
    return lambda x: op(x, vid)


def _plan(vid: str, dtype: str, views: list):
    from harness.launch.plan import make_plan

    plans = {id(x): make_plan(catalogue.get(vid), x) for x in views}
    return lambda x: plans[id(x)].run()


def _launch(vid: str, mode: str, dtype: str, views: list):
    import torch

    from harness.launch import plan_cache

    v = catalogue.get(vid)
    launch = plan_cache.PlanCache(launch_modes={v.backend: mode}).get(v, dtype, views[0])
    out = torch.empty((), dtype=launch.out_dtype, device=views[0].device)
    return lambda x: launch(x, out)


def _torch(kind: str, dtype: str, views: list):
    """torch.sum, torch.sum with out= (only with a dim: x is 1-D), or a torch.compile'd sum (a
    fresh function per (dtype, n): its own Dynamo cache, so no recompile limit is reached)."""
    import torch

    if kind == "compile":
        return torch.compile(lambda t: torch.sum(t), dynamic=False)
    if kind == "out":
        o = torch.empty((), dtype=views[0].dtype, device=views[0].device)
        return lambda x: torch.sum(x, dim=0, out=o)
    return torch.sum


def _cupy_cub(dtype: str, views: list):
    import cupy

    arrays = {id(x): cupy.from_dlpack(x) for x in views}

    def go(x):
        a = arrays[id(x)]
        return cupy.sum(a, dtype=a.dtype)  # CUB (accelerators set around the loops)

    return go


def api_variants() -> list[str]:
    """Every variant reduce_sum takes (every family's, peers, wrong demonstrations and seed 001's
    host-driven variants left out), in ladder order."""
    return [v.id for v in catalogue.select() if v.backend != "peer" and v.family != "001"]


def _native(vid: str) -> bool:
    """Whether reduce_sum's cached launch of vid is the native one (harness.launch.native)."""
    from harness.launch import rebind

    v = catalogue.BY_ID.get(vid)
    return bool(v and rebind.native_launch(v, rebind.DEFAULT_MODE[v.backend]))


def variant_entries(vid: str) -> tuple[str, str, str]:
    """The ids of reduce_sum's three entries for variant vid: api, api out=, op (each naming its
    native launch under REDUCE_LADDER_NATIVE=1)."""
    e = f"{vid} native" if _native(vid) else vid
    return f"api {e}", f"api {e} out=", f"op {e}"


def entries(variants: Iterable[str] | None = None) -> dict[str, tuple[Maker, str | None]]:
    """The per-call entries by id (the module docstring lists them), each (its maker, the variant
    it calls); reduce_sum's three per variant of variants (default: api_variants())."""
    out: dict[str, tuple[Maker, str | None]] = {
        "torch.sum": (partial(_torch, "sum"), None),
        "torch.sum out=": (partial(_torch, "out"), None),
    }
    for v in api_variants() if variants is None else variants:
        api, api_out, op = variant_entries(v)
        out[api] = (partial(_api, v, False), v)
        out[api_out] = (partial(_api, v, True), v)
        out[op] = (partial(_op, v, "sum"), v)
    out["op noop (dispatch)"] = (partial(_op, "cuda/fastest", "noop"), None)
    out |= {f"plan {v}": (partial(_plan, v), v) for v in FASTEST}
    out |= {f"launch {v} {mode}": (partial(_launch, v, mode), v) for v, mode in LAUNCHES}
    out["cupy.sum-cub"] = (_cupy_cub, None)
    out["torch.compile sum"] = (partial(_torch, "compile"), None)
    return out


_views: dict = {}


def views(dtype: str, n: int):
    """(views of one buffer the loop rotates over, one view's bytes) for (dtype, n), kept while
    consecutive cases share them (see the module docstring)."""
    if (dtype, n) not in _views:
        import torch

        from harness.check import verify

        _views.clear()
        torch.cuda.empty_cache()
        l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        nbytes = n * torch.empty((), dtype=getattr(torch, dtype)).element_size()
        count = 1 if nbytes >= 2 * l2 else min(MAX_VIEWS, -(-2 * l2 // nbytes))
        buf = verify.seed_like_input(n * count, dtype, "cuda")
        _views[(dtype, n)] = [buf[i * n : (i + 1) * n] for i in range(count)], nbytes
    return _views[(dtype, n)]


@cache
def entry(entry_id: str) -> tuple[Maker, str | None]:
    """A per-call entry by id: a default one, or `api|op V[ out=]` of any variant V."""
    vid = entry_id.split(" ")[1] if " " in entry_id else ""
    return entries([vid] if vid in catalogue.BY_ID else [])[entry_id]


def supports(entry_id: str, dtype: str, n: int) -> bool:
    """The variant's dtypes and max_n, where it calls one; CuPy has no bfloat16."""
    v = catalogue.BY_ID.get(entry(entry_id)[1] or "")
    if v is not None and not (dtype in v.dtypes and n <= v.max_n):
        return False
    return not (entry_id == "cupy.sum-cub" and dtype == "bfloat16")


def call(entry_id: str, dtype: str, n: int):
    """(the entry's call, the views): what pytest-benchmark times on the first view, and what
    the loop rotates over."""
    from harness.launch import peers

    vs, _ = views(dtype, n)
    with peers.cupy_accelerators(["cub"]):
        return entry(entry_id)[0](dtype, vs), vs


def measure(entry_id: str, dtype: str, n: int, common: dict, reps: int | None, loops: int = 5):
    """One "call" row; an entry that raises gives a row with check "error" and its message."""
    from harness.core import timing
    from harness.launch import peers

    ident = {**common, "variant": entry_id, "config": entry_id.split(" ")[0], "dtype": dtype,
             "shape": n, "metric": "call"}  # fmt: skip
    try:
        fn, vs = call(entry_id, dtype, n)
        nbytes = vs[0].numel() * vs[0].element_size()
        # every view once a loop where several; else about 30 ms of an HBM-bound sum
        calls = len(vs) if len(vs) > 1 else max(10, min(MAX_VIEWS, int(0.03 / (nbytes / 3e12))))
        with peers.cupy_accelerators(["cub"]):
            t = timing.loop_ms(fn, vs, calls=calls, loops=reps or loops)
    except Exception as e:  # recorded, the run goes on (CuPy missing for a launch...)
        return session.untimed(ident, "error", e)
    info = {"calls_per_loop": calls, "views": len(vs)}
    return [Row(**ident, **t.record(), bytes=min(calls, len(vs)) * nbytes, check="ok", info=info)]


def overheads(rows: Iterable[Row]) -> list[str]:
    """reduce_sum's cost over the cached launch it runs (api - launch, default modes), per
    (dtype, n) measured."""
    us = {(r.variant, r.dtype, r.n): r.median_ms * 1e3 for r in rows if r.median_ms is not None}
    lines = []
    for v, mode in LAUNCHES:
        for (entry, dtype, n), t in us.items():
            launch = us.get((f"launch {v} {mode}", dtype, n))
            if entry == f"api {v}" and launch is not None:
                lines.append(f"{v} {dtype} {sizes_mod.size_label(n)}: +{t - launch:.2f} us")
    return lines
