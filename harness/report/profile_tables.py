"""Tables and plots from the hardware's documents (`reduce-ladder profile --render`, the porting
guide): seed 004's sectors and seed 000's figures (typed in as the seeds quote them) beside ours
and the counts the access pattern implies, the counters per variant and their plot; a sanitize
document's verdicts in one sentence."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from harness.core.records_beyond import DEMO_FAMILY as SEED_BUG_FAMILY
from harness.core.variant import stage_key
from harness.report import documents
from harness.report.markdown import markdown_table, num

PROFILE_NAME = "profile.json"  # `reduce-ladder profile --json`, in results/<device>/
# Where `reduce-ladder profile --render` puts the rendering, relative to the profile's folder.
RENDERING_DIR = Path("report") / "profile"

SEED000_FILE = "000_63f2b61950f09972.txt"
SEED004_FILE = "004_53302091cfe0f7dc.txt"

# Seed 000, as quoted per stage: the stage of ours that implements it, "throughput, % of peak",
# threads per warp, bank conflicts and the barrier stall share (each where the seed measured it).
SEED000_STAGES: list[tuple[str, str, str, str, str, str]] = [
    ("v0", "cuda/v0-gmem-interleaved", "30, 12.61%", "", "", ""),
    ("v1", "cuda/v1-smem-interleaved", "14, 65.71%", "7.8", "", ""),
    ("v2", "cuda/v2-strided-index", "33, 45.18%", "27.46", "ld 9,175,574 / st 4,587,520", ""),
    ("v3", "cuda/v3-sequential", "33.79, 45.56%", "", "", ""),
    ("v4a", "cuda/v4-adjacent-256", "68.11, 44.59%", "", "", "34.1% (5.6 of 16.5 cycles)"),
    ("v4b", "cuda/v4-adjacent-128", "55.5, 53.85%", "", "", ""),
    ("v5", "cuda/v5-volatile", "242.79, 94.93%", "", "", ""),
    ("v6", "cuda/v6-unroll-256", "249.34, 97.49%", "", "", ""),
    ("v7", "cuda/v7-fixed-chunked", "-", "", "", ""),
    ("v8", "cuda/v8-shuffle-chunked", "-", "", "", ""),
]
SEED000_THREADS_PER_WARP = {s[0]: s[3] for s in SEED000_STAGES if s[3]}
SEED000_BANK_CONFLICTS = {s[0]: s[4] for s in SEED000_STAGES if s[4]}

# Seed 004 at 16M int, 256 threads (ncu): global load / store sectors, and global load / store
# throughput in GB/s (l1tex__t_bytes_pipe_lsu_mem_global_op_{ld,st}.sum.per_second).
SEED004_ROWS: list[tuple[str, str, int | None, int | None, float, float]] = [
    ("reduceGmem", "cuda/004-gmem", 6_553_600, 3_211_264, 755.63, 370.26),
    ("reduceSmem", "cuda/004-smem", 2_097_152, 65_536, 304.02, 9.50),
    ("reduceGmemUnroll", "cuda/004-gmem-unroll4", None, None, 989.55, 351.55),
    ("reduceSmemUnroll", "cuda/004-smem-unroll4", 2_097_152, 16_384, 699.52, 5.46),
]
SEED004_TWINS = ("triton/tile-256", "triton/quad-adjacent-256")


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
    # (stride s, threads active): the block's steps threads/2 .. 64, then the last warp's 32 .. 1
    steps = [(s, s) for s in (threads >> k for k in range(1, threads.bit_length())) if s >= 64]
    steps += [(s, 32) for s in (32, 16, 8, 4, 2, 1)]
    loads = sum(sectors(0, active) + sectors(s, active) for s, active in steps)
    return loads + 1, sum(sectors(0, active) for _, active in steps) + 1


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


def find(doc: dict, vid: str | None, n: int | None = None, dtype: str | None = None) -> dict | None:
    """The result record of `vid` (at n / dtype if given) in a profile document; None: none."""
    return next(iter(_select(doc, variant=vid, n=n, dtype=dtype) if vid else []), None)


def _select(doc: dict, **want) -> list[dict]:
    """The results whose fields are as wanted (a None wanted: any)."""
    return [r for r in doc.get("results", []) if all(v in (None, r[k]) for k, v in want.items())]


def _first(doc: dict, vid: str, n: int, dtype: str) -> dict:
    """The first kernel (first pass) of `vid`: what the seeds' ncu runs show; {} if none."""
    return next(iter((find(doc, vid, n, dtype) or {}).get("kernels", [])), {})


def _get(k: dict | None, key: str):
    """A kernel's (or a total's) metric, else its derived figure, under `key`; None if neither."""
    k = k or {}
    return k.get("metrics", {}).get(key, k.get("derived", {}).get(key))


WHOLE = ",.0f"  # counts (sectors, bank conflicts, instructions)
GBS, SECTORS = ("gld_gbs", "gst_gbs"), ("gld_sectors", "gst_sectors")
BANK_CONFLICTS = ("shared_ld_bank_conflicts", "shared_st_bank_conflicts")


def _pair(k: dict, keys: tuple[str, str], fmt: str = WHOLE, sep: str = " / ") -> str:
    """A kernel's ld / st pair of figures (GBS, BANK_CONFLICTS)."""
    return sep.join(num(_get(k, key), fmt) for key in keys)


SEED004_HEADER = ["kernel", "seed ld sectors", "seed st sectors", "expected ld", "expected st",
                  "ours ld", "ours st", "seed ld / st GB/s", "ours ld / st GB/s"]  # fmt: skip


def seed004_table(doc: dict, n: int = 2**24, dtype: str = "int32") -> str:
    """Markdown: seed 004's sector table and throughput pair, the seed's figures beside ours; the
    Triton twins' rows have ours alone."""
    expected = seed004_expected(n)

    def row(label: str, vid: str, ld=None, st=None, ld_gbs=None, st_gbs=None) -> list[str]:
        k = _first(doc, vid, n, dtype)
        counts = (ld, st, *expected.get(vid, (None, None)), *(_get(k, key) for key in SECTORS))
        seed_gbs = "-" if ld_gbs is None else f"{ld_gbs:.2f} / {st_gbs:.2f}"
        return [label, *(num(x, WHOLE) for x in counts), seed_gbs, _pair(k, GBS, ",.2f")]

    rows = [row(f"{name} (`{vid}`)", vid, *seed) for name, vid, *seed in SEED004_ROWS]
    rows += [row(f"Triton twin `{t}`", t) for t in SEED004_TWINS if _first(doc, t, n, dtype)]
    note = (
        f"Seed columns: quoted from the seed ({SEED004_FILE}, 16M int, 256 threads, its GPU). "
        f"Expected: the access pattern's arithmetic (harness.report.profile_tables."
        f"seed004_expected). Ours: the first pass's kernel at n = {n:,} {dtype}, "
        "from profile.json; GB/s = sectors x 32 B over the kernel's duration."
    )
    return markdown_table(SEED004_HEADER, rows) + f"\n{note}\n"


def _ratio(x: float | None, base: float | None) -> str:
    return f"{x / base:.2f}" if x is not None and base else "-"


def _share(t: dict | None, reason: str = "barrier") -> float | None:
    share = (_get(t, "stall_share") or {}).get(reason)
    return None if share is None else 100 * share


SEED000_HEADER = ["stage", "seed: throughput, % peak", "seed % / v0", "ours: DRAM % of peak",
                  "ours / v0", "seed: threads per warp", "ours: threads per warp instr.",
                  "seed: bank conflicts", "ours: bank conflicts", "seed: barrier stall share",
                  "ours: barrier stall share"]  # fmt: skip


def seed000_column(doc: dict, n: int = 2**24, dtype: str = "float32") -> str:
    """Markdown: seed 000's figures per stage beside ours (first pass), ratios to stage 0."""

    def pct(quoted: str) -> float | None:  # "30, 12.61%" -> 12.61
        return float(quoted.split(", ")[1].rstrip("%")) if ", " in quoted else None

    ks = {s[1]: _first(doc, s[1], n, dtype) for s in SEED000_STAGES}
    base = [_get(ks[SEED000_STAGES[0][1]], "dram_throughput_pct"), pct(SEED000_STAGES[0][2])]
    rows = [[f"{stage} (`{vid}`)", quoted, _ratio(pct(quoted), base[1]),
             num(dram := _get(k, "dram_throughput_pct"), ",.2f"), _ratio(dram, base[0]),
             tpw, num(_get(k, "threads_per_inst"), ",.2f"), conflicts,
             "ld " + _pair(k, BANK_CONFLICTS, sep=" / st "),
             barrier, "-" if (b := _share(k)) is None else f"{b:.1f}%"]
            for stage, vid, quoted, tpw, conflicts, barrier in SEED000_STAGES
            for k in [ks[vid]]]  # fmt: skip
    note = (
        f"Seed columns: quoted from the seed ({SEED000_FILE}; its GPU and n). Ours: the first "
        f"pass's kernel at n = {n:,} {dtype} from profile.json; threads per warp instruction = "
        "smsp__thread_inst_executed_pred_on.sum / smsp__inst_executed.sum; barrier share = stall "
        "cycles at a barrier / cycles between issued instructions. Throughputs compare as ratios "
        "to stage 0 because the GPUs differ."
    )
    return markdown_table(SEED000_HEADER, rows) + f"\n{note}\n"


# The ladder's counters, one column per variant's totals: (header, metric or derived key, format).
LADDER_COUNTERS = [
    ("DRAM %", "dram_throughput_pct", ",.1f"),
    ("L1 hit %", "l1_hit_pct", ",.1f"),
    ("L2 hit %", "l2_hit_pct", ",.1f"),
    ("ld sectors/req", "gld_sectors_per_request", ",.2f"),
    ("st sectors", "gst_sectors", WHOLE),
    ("shared ld instr.", "shared_ld_inst", WHOLE),
    ("shared ld conflicts", "shared_ld_bank_conflicts", WHOLE),
    ("threads/instr.", "threads_per_inst", ",.1f"),
    ("occupancy %", "occupancy_pct", ",.1f"),
    ("regs", "registers", WHOLE),
]
LADDER_HEADER = ["variant", "µs", *(h for h, _, _ in LADDER_COUNTERS), "top stalls"]


def counters_table(labelled: Iterable[tuple[str, dict]]) -> str:
    """Markdown: one row of counters per (label, result), the result's totals over its passes."""

    def row(label: str, t: dict) -> list[str]:
        ns = _get(t, "duration_ns")
        top = ", ".join(f"{r} {100 * s:.0f}%" for r, s in (_get(t, "top_stalls") or [])[:2])
        figures = [num(_get(t, key), fmt) for _, key, fmt in LADDER_COUNTERS]
        return [label, num(ns / 1e3 if ns else None, ",.1f"), *figures, top or "-"]

    return markdown_table(LADDER_HEADER, [row(label, r["total"]) for label, r in labelled])


def _ladder(doc: dict, n: int, dtype: str) -> list[tuple[dict, dict | None]]:
    """The CUDA results at (n, dtype) in ladder order (stage, then document order), each with its
    Triton twin's result (None: not profiled)."""
    cuda = sorted(
        _select(doc, n=n, dtype=dtype, backend="cuda"), key=lambda r: stage_key(r["stage"])
    )
    return [(r, find(doc, r.get("twin"), n, dtype)) for r in cuda]


def ladder_counters_table(doc: dict, n: int = 2**24, dtype: str = "float32") -> str:
    """Markdown: every CUDA stage's counters, its Triton twin below it, then the peers'."""
    rows = [(f"{'↳ ' * k}`{r['variant']}`", r)
            for pair in _ladder(doc, n, dtype) for k, r in enumerate(pair) if r]  # fmt: skip
    peers = _select(doc, backend="peer", n=n, dtype=dtype)
    return counters_table(rows + [(f"`{r['variant']}`", r) for r in peers])


def terminal_summary(doc: dict) -> str:
    """Every result's counters (what `reduce-ladder profile` prints last); an axis run's shape
    and dim in place of n."""

    def where(r: dict) -> str:
        return f"{'x'.join(map(str, r['shape']))} dim {r['dim']}" if "shape" in r else f"{r['n']:,}"

    return counters_table((f"`{r['variant']}` {r['dtype']} {where(r)}", r) for r in doc["results"])


PLOT_PANELS = (
    ("DRAM throughput, % of peak", lambda t: _get(t, "dram_throughput_pct")),
    ("shared-load bank conflicts", lambda t: _get(t, "shared_ld_bank_conflicts")),
    ("global load sectors / request", lambda t: _get(t, "gld_sectors_per_request")),
    ("barrier stall share, %", _share),
)


def plot_ladder(doc: dict, path: Path, n: int = 2**24, dtype: str = "float32") -> list[str]:
    """Counters along the ladder, CUDA stages and their twins; returns the stage ids drawn."""
    from harness.report.plots import chart

    ladder = _ladder(doc, n, dtype)
    ids = [r["variant"] for r, _ in ladder]
    long = [{"panel": title, "stage": pair[0]["variant"].split("/")[-1], "line": line, "value": v}
            for title, get in PLOT_PANELS for k, line in enumerate(("CUDA", "Triton twin"))
            for pair in ladder if pair[k] and (v := get(pair[k]["total"])) is not None]  # fmt: skip
    name = doc.get("device", {}).get("name", "?")
    title = f"{name}: counters along the ladder, n = {n:,} {dtype} (Nsight Compute)"
    chart(long, path, x="stage", y="value", hue="line", panel="panel", cols=1, rotate=60,
          xorder=[i.split("/")[-1] for i in ids], size=(11, 2.6),
          yscale={PLOT_PANELS[1][0]: "symlog"},
          title=title)  # fmt: skip
    return ids


def render(doc: dict, out_dir: Path) -> Path:
    """out_dir/profile.md (seed 004's table, seed 000's column, the ladder's counters per dtype and
    n) and the counters' plots beside it; the page's path."""
    documents.output_path(out_dir, folder=True)
    results = doc.get("results", [])
    parts = [f"# Measured by the hardware ({doc.get('device', {}).get('name', '?')})\n"]
    if any(r["family"] == "004" for r in results):
        parts += ["## Seed 004: global-memory sectors\n", seed004_table(doc)]
    if any(r["dtype"] == "float32" for r in results):
        parts += ["## Seed 000: per stage\n", seed000_column(doc)]
    for dtype, n in sorted({(r["dtype"], r["n"]) for r in results}):
        parts += [f"## Counters per stage, {dtype}, n = {n:,}\n"]
        parts += [ladder_counters_table(doc, n, dtype)]
        if _ladder(doc, n, dtype):
            plot_ladder(doc, out_dir / f"counters-{dtype}-{n}.png", n, dtype)
            parts += [f"![counters along the ladder](counters-{dtype}-{n}.png)\n"]
    (out_dir / "profile.md").write_text("\n".join(parts))
    return out_dir / "profile.md"


# A sanitize document's verdicts (the run report; the porting guide words more).
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
