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
from functools import cache

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


# An entry is (how it calls, the catalogue variant it calls, if any: its dtypes and max_n apply);
# make() turns it into the call timed on one (dtype, n).
Entry = tuple[str, str | None]


def make(how: str, vid: str | None, dtype: str, views: list) -> Callable[[object], object]:
    """An entry's call, one view of views per call; what it needs is made here first (outputs,
    plans, a compiled function; CuPy imported where it is called)."""
    import torch

    from harness.launch import plan_cache, torch_op  # noqa: F401  (torch_op registers the ops)
    from harness.launch.api import reduce_sum, result_dtype  # what `harness.reduce_sum` is
    from harness.launch.plan import make_plan

    if how == "api":
        return lambda x: reduce_sum(x, vid)
    if how == "api out=":
        o = torch.empty((), dtype=result_dtype(vid, views[0].dtype), device=views[0].device)
        return lambda x: reduce_sum(x, vid, out=o)
    if how == "op":  # torch.ops.reduce_ladder.sum
        op = torch.ops.reduce_ladder.sum
        return lambda x: op(x, vid)
    if how == "noop":  # what the op's dispatch costs alone
        noop, fastest = torch.ops.reduce_ladder.noop, FASTEST[0]
        return lambda x: noop(x, fastest)
    if how == "plan":
        plans = {id(x): make_plan(catalogue.get(vid), x) for x in views}
        return lambda x: plans[id(x)].run()
    if how == "launch":  # the cached launch alone, in its mode of LAUNCHES
        v = catalogue.get(vid)
        modes = {v.backend: dict(LAUNCHES)[vid]}
        launch = plan_cache.PlanCache(launch_modes=modes).get(v, dtype, views[0])
        out = torch.empty((), dtype=launch.out_dtype, device=views[0].device)
        return lambda x: launch(x, out) or out  # (the launch returns None)
    if how == "torch.sum":
        return torch.sum
    if how == "torch.sum out=":  # only with a dim: x is 1-D
        o = torch.empty((), dtype=views[0].dtype, device=views[0].device)
        return lambda x: torch.sum(x, dim=0, out=o)
    if how == "torch.compile":  # fresh per (dtype, n): its own Dynamo cache, no recompile limit
        return torch.compile(lambda t: torch.sum(t), dynamic=False)
    if how == "cupy":
        import cupy

        arrays = {id(x): cupy.from_dlpack(x) for x in views}

        def cub(x):
            a = arrays[id(x)]
            return cupy.sum(a, dtype=a.dtype)  # CUB (accelerators set around the loops)

        return cub
    raise ValueError(f"unknown entry kind {how!r}")


def api_variants() -> list[str]:
    """Every variant reduce_sum takes (every family's, peers, wrong demonstrations and seed 001's
    host-driven variants left out), in ladder order."""
    return [v.id for v in catalogue.select() if v.backend != "peer" and v.family != "001"]


def variant_entries(vid: str) -> tuple[str, str, str]:
    """The ids of reduce_sum's three entries for variant vid: api, api out=, op (each naming its
    native launch where that is reduce_sum's cached launch: REDUCE_LADDER_NATIVE=1)."""
    from harness.launch import rebind

    v = catalogue.BY_ID.get(vid)
    e = f"{vid} native" if v and rebind.native_launch(v, rebind.DEFAULT_MODE[v.backend]) else vid
    return f"api {e}", f"api {e} out=", f"op {e}"


def entries(variants: Iterable[str] | None = None) -> dict[str, Entry]:
    """The per-call entries by id (the module docstring lists them); reduce_sum's three per
    variant of variants (default: api_variants())."""
    out: dict[str, Entry] = {
        "torch.sum": ("torch.sum", None),
        "torch.sum out=": ("torch.sum out=", None),
    }
    for v in api_variants() if variants is None else variants:
        api, api_out, op = variant_entries(v)
        out |= {api: ("api", v), api_out: ("api out=", v), op: ("op", v)}
    out["op noop (dispatch)"] = ("noop", None)
    out |= {f"plan {v}": ("plan", v) for v in FASTEST}
    out |= {f"launch {v} {mode}": ("launch", v) for v, mode in LAUNCHES}
    out["cupy.sum-cub"] = ("cupy", None)
    out["torch.compile sum"] = ("torch.compile", None)
    return out


def views(dtype: str, n: int):
    """(views of one buffer the loop rotates over, one view's bytes) for (dtype, n), kept while
    consecutive cases share them (see the module docstring)."""

    def make():
        import torch

        from harness.check import verify

        l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
        nbytes = n * torch.empty((), dtype=getattr(torch, dtype)).element_size()
        count = 1 if nbytes >= 2 * l2 else min(MAX_VIEWS, -(-2 * l2 // nbytes))
        buf = verify.exact_input(n * count, dtype, "cuda")  # every entry's sum exact (checked)
        return [buf[i * n : (i + 1) * n] for i in range(count)], nbytes

    return session.kept(("callable", dtype, n), make)


@cache
def entry(entry_id: str) -> Entry:
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
        return make(*entry(entry_id), dtype, vs), vs


def measure(entry_id: str, dtype: str, n: int, common: dict, reps: int | None, loops: int = 5):
    """One "call" row (an entry that raises: the runner's row, check "error")."""
    from harness.core import timing
    from harness.launch import peers

    ident = {**common, "variant": entry_id, "config": entry_id.split(" ")[0], "dtype": dtype,
             "shape": n, "metric": "call"}  # fmt: skip
    fn, vs = call(entry_id, dtype, n)
    check = checked(entry_id, fn, vs)
    nbytes = vs[0].numel() * vs[0].element_size()
    # every view once a loop where several; else about 30 ms of an HBM-bound sum
    calls = len(vs) if len(vs) > 1 else max(10, min(MAX_VIEWS, int(0.03 / (nbytes / 3e12))))
    with peers.cupy_accelerators(["cub"]):
        t = timing.loop_ms(fn, vs, calls=calls, loops=reps or loops)
    info = {"calls_per_loop": calls, "views": len(vs)}
    return [Row(**ident, **t.record(), bytes=min(calls, len(vs)) * nbytes, check=check, info=info)]


def checked(entry_id: str, fn: Callable[[object], object], vs: list) -> str:
    """The entry's sums of the first and the last view (a launch that kept an old pointer shows)
    against the exact sums (verify.exact_input's data: any order is exact), rounded once to the
    result's dtype (torch.sum of bfloat16 returns bfloat16), modulo 2^32 for integers (int32
    wraps; torch.sum returns int64): "ok" or "wrong"; "" for the op's dispatch alone (no sum)."""
    import torch

    if entry(entry_id)[0] == "noop":
        return ""
    for x in (vs[0], vs[-1]):
        r, total = fn(x), int(x.to(torch.int64).sum())
        got = r.item()
        if isinstance(got, int):
            right = (got - total) % 2**32 == 0
        else:  # a CuPy result: float32 (CuPy has no bfloat16)
            to = r.dtype if isinstance(r, torch.Tensor) else torch.float32
            right = got == torch.tensor(float(total), dtype=torch.float64).to(to).item()
        if not right:
            return "wrong"
    return "ok"


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
