"""Tables and plots from the hardware's documents: a profile document (`reduce-ladder profile
--render`, the porting guide):
seed 004's global-memory sector table beside the counts its access pattern implies
(seed004_expected), seed 000's per-stage figures beside ours (ratios to stage 0, the GPUs differ),
the ladder's counters (each CUDA stage, its Triton twin below it) and their plot. The seeds'
numbers are typed in below as quoted, with their files: the seeds' measurements, never ours.
And a sanitize document's verdicts (harness.studies.sanitize; its log parser is
harness.studies.sanitizer_log) in one sentence, as the run report links them.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.demo_records import FAMILY as SEED_BUG_FAMILY
from harness.report import documents
from harness.report.markdown import Column, column_table

PROFILE_NAME = "profile.json"  # `reduce-ladder profile --json`, in results/<device>/
# Where `reduce-ladder profile --render` puts the rendering, relative to the profile's folder.
RENDERING_DIR = Path("report") / "profile"

SEED000_FILE = "000_63f2b61950f09972.txt"
SEED004_FILE = "004_53302091cfe0f7dc.txt"

# Seed 000, as quoted per stage: "throughput, % of peak" (the seed's two figures), and the stage of
# our ladder that implements it.
SEED000_STAGES: list[tuple[str, str, str, float | None]] = [
    ("v0", "cuda/v0-gmem-interleaved", "30, 12.61%", 12.61),
    ("v1", "cuda/v1-smem-interleaved", "14, 65.71%", 65.71),
    ("v2", "cuda/v2-strided-index", "33, 45.18%", 45.18),
    ("v3", "cuda/v3-sequential", "33.79, 45.56%", 45.56),
    ("v4a", "cuda/v4-adjacent-256", "68.11, 44.59%", 44.59),
    ("v4b", "cuda/v4-adjacent-128", "55.5, 53.85%", 53.85),
    ("v5", "cuda/v5-volatile", "242.79, 94.93%", 94.93),
    ("v6", "cuda/v6-unroll-256", "249.34, 97.49%", 97.49),
    ("v7", "cuda/v7-fixed-chunked", "-", None),
    ("v8", "cuda/v8-shuffle-chunked", "-", None),
]
# Seed 000's other figures, each at the stage it was measured for.
SEED000_THREADS_PER_WARP = {"v1": "7.8", "v2": "27.46"}
SEED000_BANK_CONFLICTS = {"v2": "ld 9,175,574 / st 4,587,520"}
SEED000_BARRIER_SHARE = {"v4a": "34.1% (5.6 of 16.5 cycles)"}

# Seed 004 at 16M int, 256 threads (ncu): global load / store sectors, and global load / store
# throughput in GB/s (l1tex__t_bytes_pipe_lsu_mem_global_op_{ld,st}.sum.per_second).
SEED004_ROWS: list[tuple[str, str, int | None, int | None, float, float]] = [
    ("reduceGmem", "cuda/004-gmem", 6_553_600, 3_211_264, 755.63, 370.26),
    ("reduceSmem", "cuda/004-smem", 2_097_152, 65_536, 304.02, 9.50),
    ("reduceGmemUnroll", "cuda/004-gmem-unroll4", None, None, 989.55, 351.55),
    ("reduceSmemUnroll", "cuda/004-smem-unroll4", 2_097_152, 16_384, 699.52, 5.46),
]
SEED004_TWINS = ("triton/tile-256", "triton/quad-adjacent-256")
NAN = float("nan")


def sectors(first: int, count: int, itemsize: int = 4) -> int:
    """32-byte sectors covering elements [first, first + count) of an aligned array."""
    return ((first + count) * itemsize - 1) // 32 - (first * itemsize) // 32 + 1


def gmem_tree_sectors(threads: int = 256) -> tuple[int, int]:
    """(load, store) sectors ONE block of seed 004's in-place global tree touches on a full tile.

    Steps s = threads/2 .. 64: s threads read in[tid] and in[tid + s] and write in[tid]. The
    volatile last warp, s = 32 .. 1: 32 lanes read in[tid] and in[tid + s] (5 sectors when s is not
    a multiple of 8 elements: the warp's 32 ints straddle one more sector) and write in[tid].
    Then thread 0 reads in[0] and writes one partial. At 256 threads: 100 and 49.
    """
    loads = stores = 0
    s = threads // 2
    while s >= 64:
        loads += sectors(0, s) + sectors(s, s)
        stores += sectors(0, s)
        s //= 2
    for s in (32, 16, 8, 4, 2, 1):
        loads += sectors(0, 32) + sectors(s, 32)
        stores += sectors(0, 32)
    return loads + 1, stores + 1


def seed004_expected(n: int = 2**24, threads: int = 256, itemsize: int = 4) -> dict[str, tuple]:
    """First-pass global (load, store) sectors each 004 kernel must show on n full tiles."""
    per_sector = 32 // itemsize
    one, four = n // threads, n // (4 * threads)  # blocks: one tile / four tiles per block
    tree_ld, tree_st = gmem_tree_sectors(threads)
    tile = sectors(0, threads, itemsize)  # one coalesced tile: 32 sectors at 256 ints
    return {
        # every element read once, coalesced; one partial stored per block
        "cuda/004-smem": (n // per_sector, one),
        "cuda/004-smem-dyn": (n // per_sector, one),
        "cuda/004-smem-unroll4": (n // per_sector, four),
        "cuda/004-smem-unroll4-dyn": (n // per_sector, four),
        "cuda/004-gmem": (one * tree_ld, one * tree_st),
        # tiles 1..3 read, tile 0 read and written (g_in[idx] += sum), then the tree over tile 0
        "cuda/004-gmem-unroll4": (four * (4 * tile + tree_ld), four * (tile + tree_st)),
    }


def find(doc: dict, vid: str, n: int | None = None, dtype: str | None = None) -> dict | None:
    """The result record of `vid` (at n / dtype if given) in a profile document."""
    for r in doc.get("results", []):
        if r["variant"] == vid and n in (None, r["n"]) and dtype in (None, r["dtype"]):
            return r
    return None


def _first(doc: dict, vid: str, n: int | None = None, dtype: str | None = None) -> dict:
    """The first kernel (first pass) of `vid`: what the seeds' ncu runs show; {} if none."""
    r = find(doc, vid, n, dtype)
    return r["kernels"][0] if r and r["kernels"] else {}


def _total(doc: dict, vid: str, n: int | None = None, dtype: str | None = None) -> dict | None:
    r = find(doc, vid, n, dtype)
    return r["total"] if r else None


def _fmt(x, digits: int = 0) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and digits:
        return f"{x:,.{digits}f}"
    return f"{round(x):,}"


def _table(columns: list[Column], items: list, note: str = "") -> str:
    """A Markdown table of `items` through `columns`, then the note."""
    return column_table(columns, items, align=False) + (f"\n{note}\n" if note else "")


def _m(k: dict | None) -> dict:
    return (k or {}).get("metrics", {})


def _d(k: dict | None) -> dict:
    return (k or {}).get("derived", {})


def _gbs(k: dict) -> str:
    return f"{_fmt(_d(k).get('gld_gbs'), 2)} / {_fmt(_d(k).get('gst_gbs'), 2)}"


# seed 004's table: one row per seed kernel (name, id, seed figures, expected, our first kernel)
# and per Triton twin (id, kernel; no seed or expected figures).
SEED004_COLUMNS = [
    Column("kernel", lambda r: f"{r[0]} (`{r[1]}`)" if r[0] else f"Triton twin `{r[1]}`"),
    Column("seed ld sectors", lambda r: _fmt(r[2]) if r[0] else ""),
    Column("seed st sectors", lambda r: _fmt(r[3]) if r[0] else ""),
    Column("expected ld", lambda r: _fmt(r[6][0]) if r[0] else ""),
    Column("expected st", lambda r: _fmt(r[6][1]) if r[0] else ""),
    Column("ours ld", lambda r: _fmt(_m(r[7]).get("gld_sectors"))),
    Column("ours st", lambda r: _fmt(_m(r[7]).get("gst_sectors"))),
    Column("seed ld / st GB/s", lambda r: f"{r[4]:.2f} / {r[5]:.2f}" if r[0] else ""),
    Column("ours ld / st GB/s", lambda r: _gbs(r[7])),
]


def seed004_table(doc: dict, n: int = 2**24, dtype: str = "int32") -> str:
    """Markdown: seed 004's sector table and throughput pair, the seed's figures beside ours."""
    expected = seed004_expected(n)
    items = [(*row, expected[row[1]], _first(doc, row[1], n, dtype)) for row in SEED004_ROWS]
    twins = [(vid, _first(doc, vid, n, dtype)) for vid in SEED004_TWINS]
    items += [("", vid, None, None, 0, 0, (), k) for vid, k in twins if k]
    note = (
        f"Seed columns: quoted from the seed ({SEED004_FILE}, 16M int, 256 threads, its GPU). "
        f"Expected: the access pattern's arithmetic (harness.report.profile_tables."
        f"seed004_expected). Ours: the first pass's kernel at n = {n:,} {dtype}, "
        "from profile.json; GB/s = sectors x 32 B over the kernel's duration."
    )
    return _table(SEED004_COLUMNS, items, note)


def _ratio(x: float | None, base: float | None) -> str:
    return f"{x / base:.2f}" if x is not None and base else "-"


def _share(t: dict | None, reason: str = "barrier") -> float | None:
    share = _d(t).get("stall_share", {}).get(reason)
    return None if share is None else 100 * share


# seed 000's column: one row per (stage, id, quoted, % of peak, our first kernel, our v0's DRAM %)
SEED000_COLUMNS = [
    Column("stage", lambda r: f"{r[0]} (`{r[1]}`)"),
    Column("seed: throughput, % peak", lambda r: r[2]),
    Column("seed % / v0", lambda r: _ratio(r[3], SEED000_STAGES[0][3]) if r[3] else "-"),
    Column("ours: DRAM % of peak", lambda r: _fmt(_m(r[4]).get("dram_throughput_pct"), 2)),
    Column("ours / v0", lambda r: _ratio(_m(r[4]).get("dram_throughput_pct"), r[5])),
    Column("seed: threads per warp", lambda r: SEED000_THREADS_PER_WARP.get(r[0], "")),
    Column("ours: threads per warp instr.", lambda r: _fmt(_d(r[4]).get("threads_per_inst"), 2)),
    Column("seed: bank conflicts", lambda r: SEED000_BANK_CONFLICTS.get(r[0], "")),
    Column(
        "ours: bank conflicts",
        lambda r: (
            f"ld {_fmt(_m(r[4]).get('shared_ld_bank_conflicts'))} / st "
            f"{_fmt(_m(r[4]).get('shared_st_bank_conflicts'))}"
        ),
    ),
    Column("seed: barrier stall share", lambda r: SEED000_BARRIER_SHARE.get(r[0], "")),
    Column(
        "ours: barrier stall share",
        lambda r: "-" if _share(r[4]) is None else f"{_share(r[4]):.1f}%",
    ),
]


def seed000_column(doc: dict, n: int = 2**24, dtype: str = "float32") -> str:
    """Markdown: seed 000's figures per stage beside ours (first pass), ratios to stage 0."""
    base = _m(_first(doc, SEED000_STAGES[0][1], n, dtype)).get("dram_throughput_pct")
    items = [(*s, _first(doc, s[1], n, dtype), base) for s in SEED000_STAGES]
    note = (
        f"Seed columns: quoted from the seed ({SEED000_FILE}; its GPU and n). Ours: the first "
        f"pass's kernel at n = {n:,} {dtype} from profile.json; threads per warp instruction = "
        "smsp__thread_inst_executed_pred_on.sum / smsp__inst_executed.sum; barrier share = stall "
        "cycles at a barrier / cycles between issued instructions. Throughputs compare as ratios "
        "to stage 0 because the GPUs differ."
    )
    return _table(SEED000_COLUMNS, items, note)


def _top(d: dict, count: int = 2) -> str:
    top = d.get("top_stalls") or []
    return ", ".join(f"{r} {100 * s:.0f}%" for r, s in top[:count]) or "-"


def _counter(header: str, key: str, digits: int = 0, part=_m) -> Column:
    """A column of one counter (part: _m the metrics, _d the derived figures) of a row's totals."""
    return Column(header, lambda r: _fmt(part(r[1]).get(key), digits))


def _us(r: tuple) -> str:
    ns = _m(r[1]).get("duration_ns")
    return _fmt(ns / 1e3, 1) if ns else "-"


# The ladder's counters: one row per (variant id, its totals), metric by metric.
LADDER_COLUMNS = [
    Column("variant", lambda r: r[0]),
    Column("µs", _us),
    _counter("DRAM %", "dram_throughput_pct", 1),
    _counter("L1 hit %", "l1_hit_pct", 1),
    _counter("L2 hit %", "l2_hit_pct", 1),
    _counter("ld sectors/req", "gld_sectors_per_request", 2, _d),
    _counter("st sectors", "gst_sectors"),
    _counter("shared ld instr.", "shared_ld_inst"),
    _counter("shared ld conflicts", "shared_ld_bank_conflicts"),
    _counter("threads/instr.", "threads_per_inst", 1, _d),
    _counter("occupancy %", "occupancy_pct", 1),
    _counter("regs", "registers"),
    Column("top stalls", lambda r: _top(_d(r[1]))),
]


def _select(doc: dict, **want) -> list[dict]:
    return [r for r in doc.get("results", []) if all(r[k] == v for k, v in want.items())]


def ladder_stages(doc: dict, n: int, dtype: str) -> list[dict]:
    """The CUDA results at (n, dtype) in ladder order (stage, then document order)."""

    def key(r: dict) -> tuple:
        head = r["stage"].split("-")[0]
        return (int(head) if head.isdigit() else 10**6, r["stage"])

    return sorted(_select(doc, n=n, dtype=dtype, backend="cuda"), key=key)


def ladder_counters_table(doc: dict, n: int = 2**24, dtype: str = "float32") -> str:
    """Markdown: every CUDA stage's counters (all passes summed), its Triton twin below it."""
    items = []
    for r in ladder_stages(doc, n, dtype):
        twin = _total(doc, r["twin"], n, dtype) if r.get("twin") else None
        items += [(f"`{r['variant']}`", r["total"])]
        items += [(f"↳ `{r['twin']}`", twin)] if twin else []
    peers = _select(doc, backend="peer", n=n, dtype=dtype)
    return _table(LADDER_COLUMNS, items + [(f"`{r['variant']}`", r["total"]) for r in peers])


PLOT_PANELS = (
    ("DRAM throughput, % of peak", lambda t: _m(t).get("dram_throughput_pct"), "linear"),
    ("shared-load bank conflicts", lambda t: _m(t).get("shared_ld_bank_conflicts"), "symlog"),
    ("global load sectors / request", lambda t: _d(t).get("gld_sectors_per_request"), "linear"),
    ("barrier stall share, %", _share, "linear"),
)


def plot_ladder(doc: dict, path: Path, n: int = 2**24, dtype: str = "float32") -> list[str]:
    """Counters along the ladder, CUDA stages and their twins; returns the stage ids drawn."""
    from harness.report.plots import figure, save

    stages = ladder_stages(doc, n, dtype)
    ids = [r["variant"] for r in stages]
    fig, axes = figure(len(PLOT_PANELS), 1, figsize=(11, 2.6 * len(PLOT_PANELS)), sharex=True)
    twins = [_total(doc, r["twin"], n, dtype) if r.get("twin") else None for r in stages]
    for ax, (title, get, scale) in zip(axes, PLOT_PANELS, strict=True):
        for line, style, label in (
            ([r["total"] for r in stages], "o-", "CUDA"),
            (twins, "s--", "Triton twin"),
        ):
            ys = [get(t) if t else None for t in line]
            ax.plot(range(len(ids)), [NAN if y is None else y for y in ys], style, label=label)
        ax.set_title(title, fontsize=9)
        ax.set_yscale(scale)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[-1].set_xticks(range(len(ids)))
    axes[-1].set_xticklabels([i.split("/")[-1] for i in ids], rotation=60, ha="right", fontsize=7)
    name = doc.get("device", {}).get("name", "?")
    title = f"{name}: counters along the ladder, n = {n:,} {dtype} (Nsight Compute)"
    fig.suptitle(title, fontsize=10)
    save(fig, path)
    return ids


def render(doc: dict, out_dir: Path) -> Path:
    """out_dir/profile.md (seed 004's table, seed 000's column, the ladder's counters per dtype and
    n) and the counters' plots beside it; the page's path."""
    documents.output_path(out_dir, folder=True)
    results = doc.get("results", [])
    dtypes = sorted({r["dtype"] for r in results})
    parts = [f"# Measured by the hardware ({doc.get('device', {}).get('name', '?')})\n"]
    if any(r["family"] == "004" for r in results):
        parts += ["## Seed 004: global-memory sectors\n", seed004_table(doc)]
    if "float32" in dtypes:
        parts += ["## Seed 000: per stage\n", seed000_column(doc)]
    for dtype, n in sorted({(r["dtype"], r["n"]) for r in results}):
        parts += [f"## Counters per stage, {dtype}, n = {n:,}\n"]
        parts += [ladder_counters_table(doc, n, dtype)]
        if ladder_stages(doc, n, dtype):
            plot_ladder(doc, out_dir / f"counters-{dtype}-{n}.png", n, dtype)
            parts += [f"![counters along the ladder](counters-{dtype}-{n}.png)\n"]
    (out_dir / "profile.md").write_text("\n".join(parts))
    return out_dir / "profile.md"


def _where(r: dict) -> str:
    """n, or an axis run's shape and dim."""
    if "shape" in r:
        return f"{'x'.join(map(str, r['shape']))} dim {r['dim']}"
    return f"{r['n']:,}"


def terminal_summary(doc: dict) -> str:
    """Every result's counters (what `reduce-ladder profile` prints last)."""
    items = [(f"`{r['variant']}` {r['dtype']} {_where(r)}", r["total"]) for r in doc["results"]]
    return _table(LADDER_COLUMNS, items)


# ---------------------------------------------------------------------------------------------
# A sanitize document's verdicts (the run report; the porting guide words more)


def merge_sanitize(docs: list[dict]) -> dict:
    """Sanitize documents of one device read as one (`reduce-ladder sanitize --json` over
    variants added later writes its own file, e.g. sanitize-reproducible.json, beside
    sanitize.json): the first document's header, every document's variants, runs and kernels."""
    merged = dict(docs[0])
    for key in ("variants", "runs", "kernels"):
        merged[key] = [item for d in docs for item in d.get(key, [])]
    return merged


TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")


def tools_of(v: dict) -> list[str]:
    return [t for t in TOOLS if t in v.get("tools", {})]


def records_of(v: dict, tool: str) -> int:
    return v["tools"].get(tool, {}).get("records", 0)


def flagged_by(v: dict) -> list[str]:
    return [t for t in tools_of(v) if records_of(v, t)]


def sanitize_summary(doc: dict) -> str:
    """One sentence: the clean count, the volatile forms racecheck flags, the seed bugs' tools."""
    variants = doc.get("variants", [])
    default = [v for v in variants if not v.get("wrong")]
    clean, checked = sum(1 for v in default if not flagged_by(v)), len(default)
    volatile = [v for v in default if v.get("volatile")]
    raced = [v for v in volatile if records_of(v, "racecheck")]
    bugs = [v for v in variants if v.get("family") == SEED_BUG_FAMILY]
    flagged = [f"`{v['variant']}` by {', '.join(flagged_by(v)) or 'no tool'}" for v in bugs]
    return (
        f"{clean} of {checked} default variants clean under {', '.join(TOOLS)}; racecheck "
        f"hazards in {len(raced)} of the {len(volatile)} `volatile` warp-synchronous forms"
        + (f"; the seeds' bugs flagged: {'; '.join(flagged)}" if flagged else "")
        + "."
    )
