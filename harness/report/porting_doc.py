"""Generate docs/porting.md: every stage of every family, CUDA beside its Triton twin.

Inputs, all committed, so the output is a pure function of the repository (CI regenerates it and
compares): the catalogue, the kernel sources (cuda_kernels/*.cu, triton_kernels/*.py), the
compiler census (docs/census-sm_90.json, written by `reduce-ladder inspect --dtype all --json`),
and the measured GPU results (results/*/ladder-*.json). No number in the doc is typed in.

    python -m harness.report.porting_doc [PATH]          # default docs/porting.md
    reduce-ladder inspect --write-doc docs/porting.md
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

from harness.core import catalogue
from harness.core.catalogue import Variant

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "porting.md"
CENSUS = ROOT / "docs" / "census-sm_90.json"
REGEN = (
    "reduce-ladder inspect --dtype all --json docs/census-sm_90.json\n"
    "reduce-ladder inspect --write-doc docs/porting.md     # or: python -m "
    "harness.report.porting_doc"
)

# What each optimization becomes in Triton: (family, stage) -> (how, explanation). `how` is one of
# HOW; prose only (numbers come from the census and the results). A stage missing here is still
# documented, with its catalogue text and a pointer to this table.
HOW = (
    "done by the compiler",
    "tile shape",
    "num_warps",
    "program count",
    "host code",
    "not expressible",
)
LESSONS: dict[tuple[str, str], tuple[str, str]] = {
    ("ladder", "0"): (
        "done by the compiler",
        "Triton has no in-place tree in global memory: `tl.sum` reduces the loaded tile in "
        "registers, so the twin of the baseline already is what stages 1-3 work towards. What "
        "stays the same is the tile: one program per CUDA block, BLOCK = the block's threads.",
    ),
    ("ladder", "1"): (
        "done by the compiler",
        "Staging the tile in shared memory is the compiler's decision. A Triton kernel has no "
        "`__shared__`; the twin uses shared memory only for the few per-warp partials that "
        "cross warps (its dynamic shared memory in the census).",
    ),
    ("ladder", "2"): (
        "done by the compiler",
        "Divergence inside a warp cannot be written in Triton: a program's lanes all execute "
        "every operation on the tile. The twin is unchanged.",
    ),
    ("ladder", "3"): (
        "done by the compiler",
        "Bank conflicts are a property of the shared-memory layout, which Triton chooses (and "
        "swizzles where it matters). The twin is unchanged.",
    ),
    ("ladder", "4"): (
        "tile shape",
        "The first add during load is a tile shape: the program loads TILES = 2 tiles and adds "
        "them lane-wise before `tl.sum` (adjacent tiles) or loads tile p and tile p + grid "
        "(split halves), with half as many programs. Halving the threads instead (plan B) is "
        "BLOCK = 128 with `num_warps` = 4.",
    ),
    ("ladder", "5"): (
        "done by the compiler",
        "Unrolling the last warp without barriers is what `tl.sum` does inside a warp: "
        "shuffles, no barrier, no shared memory. The `volatile` warp-synchronous idiom (and its "
        "race) cannot be written in Triton at all.",
    ),
    ("ladder", "6"): (
        "done by the compiler",
        "BLOCK is a `tl.constexpr`, so the reduction tree is always completely unrolled for the "
        "block size; the CUDA template parameter is the constexpr. Block sizes 128..1024 are "
        "BLOCK with `num_warps` = BLOCK / 32.",
    ),
    ("ladder", "7"): (
        "program count",
        "A fixed grid with many elements per thread is a program count plus a loop inside the "
        "program: the grid is 1024 programs, each lane keeps an accumulator over its chunk "
        "(or grid-stride loop), and `tl.sum` runs once at the end.",
    ),
    ("ladder", "8"): (
        "done by the compiler",
        "Warp shuffles are how `tl.sum` lowers on NVIDIA GPUs (see the SHFL column of every "
        "Triton row). There is no shuffle intrinsic to call in Triton's language, and none is "
        "needed: the twin is the one of stage 7.",
    ),
    # Seed 004 (int32, 256 threads; twins triton/tile-256 and triton/quad-adjacent-256).
    ("004", "004-1"): (
        "done by the compiler",
        "As ladder stage 0: Triton has no in-place tree in global memory; the twin loads the "
        "tile and `tl.sum` reduces it in registers, so it never writes its input and needs no "
        "scratch copy. The tile is the same: BLOCK = 256, one program per block.",
    ),
    ("004", "004-2"): (
        "done by the compiler",
        "Moving the tree into `__shared__` memory is the compiler's decision in Triton (as ladder "
        "stage 1): the twin is unchanged, and its only shared memory is the scratch for the "
        "per-warp partials of `tl.sum`.",
    ),
    ("004", "004-3"): (
        "tile shape",
        "Four data blocks per block is a tile shape: the twin loads TILES = 4 adjacent tiles and "
        "adds them lane-wise before `tl.sum`, with a quarter as many programs; the four loads are "
        "independent of one another, as in the CUDA thread. Folding them into "
        "tile 0 in place has no Triton counterpart (nor any need for one).",
    ),
    ("004", "004-4"): (
        "tile shape",
        "The same TILES = 4 twin as the global-memory unroll: the CUDA thread's register sum of "
        "its four elements is the lane-wise add of the four `tl.load`s; where the tree then runs "
        "(shared memory here, global memory in 004-3) is the compiler's business in Triton.",
    ),
    ("004", "004-5"): (
        "done by the compiler",
        "Static versus dynamic shared memory is not a choice in Triton: every Triton kernel's "
        "scratch is dynamic shared memory, sized by the compiler (the `shared` of the compiled "
        "kernel, the dyn smem column) and passed at launch by Triton's launcher. The twin is "
        "004-2's.",
    ),
    ("004", "004-6"): (
        "done by the compiler",
        "As 004-5, for the four-tile kernel: only the declaration of the shared array changed, "
        "which Triton does not let you write; the twin is 004-4's (TILES = 4).",
    ),
    # Seed 001 (data starts in host memory; harness/host.py runs the same host loop for both
    # backends; every twin reads the same 2 x 1024 tile with BLOCK = 1024, num_warps = 32).
    ("001", "V0"): (
        "done by the compiler",
        "The interleaved in-place tree in global memory has no Triton form: the twin loads the "
        "block's 2 x 1024 elements (TILES = 2, BLOCK = 1024, `num_warps` = 32) and `tl.sum` "
        "reduces them. The host side (copy to the device, the loop of passes over the partials, "
        "the scalar back) is the same Python for both backends (harness/host.py).",
    ),
    ("001", "V1"): (
        "done by the compiler",
        "Sequential (coalesced) addressing, and the read/write race it fixes, are about which "
        "thread touches which word of the tree; Triton's tree belongs to the compiler, so V1 "
        "has V0's twin.",
    ),
    ("001", "V2"): (
        "host code",
        "Pinned host memory changes the copy, not the kernel: V2 launches V1's kernel, and its "
        "twin is the same Triton kernel fed from pinned host memory by the same host code.",
    ),
    ("001", "V3"): (
        "host code",
        "Several streams overlap copies and passes: host code again. Triton launches on the "
        "current torch stream, so the twin runs the same chunked multi-stream loop with the "
        "same kernel.",
    ),
    ("001", "V4"): (
        "done by the compiler",
        "The tree in shared memory with the first add during load is what every 001 twin "
        "already does (TILES = 2, then `tl.sum`); V4's twin is V2's (pinned, one stream).",
    ),
    # Past the ladder: a counterpart, not a tile twin (its own tiles by design).
    ("fastest", "fastest"): (
        "program count",
        "triton/fastest is cuda/fastest's counterpart, not its twin. The SM-sized persistent "
        "grid is a program count (programs per SM times SMs, capped) with a grid-stride loop "
        "inside the program. The 16-byte loads are done by the compiler, which vectorizes a load "
        "only where it can prove the pointer 16-byte aligned and the load unmasked: the wrapper "
        "passes an aligned bulk view and loads full tiles without a mask. Loads in flight per "
        "thread (CUDA's UNROLL) follow from BLOCK / (32 x `num_warps`) and `num_stages`, which "
        "an autotuner picks per device, dtype and size. The one-launch finish is expressible: "
        "store the partial, `tl.debug_barrier()`, an `acq_rel` `tl.atomic_add` ticket, and the "
        "last program sums the partials in program order with volatile loads.",
    ),
}

CHECKLIST = """\
1. **Find the tile.** Write down which elements one CUDA block reads (one tile, two tiles, a
   grid-stride loop, a contiguous chunk). That is the Triton program's `tl.arange`/`tl.load`
   pattern; BLOCK = threads per block, `num_warps` = threads / 32, grid = number of blocks.
2. **Drop what the compiler owns.** `__shared__` arrays, `__syncthreads()`, the tree loop,
   divergence tricks, bank-conflict-free indexing, last-warp unrolling and warp shuffles all
   become one `tl.sum` (check the census: SHFL and a single BAR in every Triton twin).
3. **Keep what changes the work.** Adds during load (`TILES`), the number of programs, and a
   per-lane accumulator loop for many elements per thread are expressed in the kernel and grid.
4. **Match types and order before comparing.** Accumulate in the same type; give each lane the
   same elements in the same order as the CUDA thread, then per-block partials can be compared
   exactly on integer-valued data.
5. **Check the compiled code, not the source.** Registers, spills (local memory), shared memory,
   global-load width, barriers and shuffles come out of `reduce-ladder inspect`; run it for your
   target `--arch` after every change.
6. **Measure against peers.** Time the kernel beside `torch.sum` / CUB and the copy bandwidth
   on the same GPU; a reduction is memory-bound, so GB/s against the copy is the figure of merit.
"""


# ---------------------------------------------------------------------------------------------
# Sources

_DEF = re.compile(r"__(?:global|device)__\s+(?:__forceinline__\s+)?[\w:<>,\s*]*?\b(\w+)\s*\(")
_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\([^)]*\)")


def cuda_functions(path: Path) -> dict[str, str]:
    """name -> text (leading comment block, template line, body) of every __global__ and
    __device__ function defined in a CUDA source file."""
    lines = path.read_text().splitlines()
    out: dict[str, str] = {}
    i = 0
    while i < len(lines):
        m = None
        if lines[i].lstrip().startswith("__"):
            # `__global__ void __launch_bounds__(B, k)` may put the name on the next line
            head = _LAUNCH_BOUNDS.sub("", lines[i])
            m = _DEF.search(head)
            if not m and i + 1 < len(lines) and "(" not in head:
                m = _DEF.search(head + " " + lines[i + 1])
        if not m:
            i += 1
            continue
        start = i
        if start > 0 and lines[start - 1].lstrip().startswith("template"):
            start -= 1
        while start > 0 and lines[start - 1].lstrip().startswith("//"):
            start -= 1
        depth, end, seen = 0, i, False
        for j in range(i, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            seen = seen or "{" in lines[j]
            if seen and depth == 0:
                end = j
                break
        out[m.group(1)] = "\n".join(lines[start : end + 1])
        i = end + 1
    return out


def _all_cuda_functions(source: str) -> tuple[dict[str, str], dict[str, str]]:
    """(functions of the source file, functions of the headers it includes) by name."""
    path = ROOT / "cuda_kernels" / source
    headers: dict[str, str] = {}
    for inc in re.findall(r'#include\s+"([^"]+)"', path.read_text()):
        headers.update(cuda_functions(ROOT / "cuda_kernels" / inc))
    return cuda_functions(path), headers


def kernel_name(v: Variant) -> str:
    return (v.kernel or "").split("<")[0].strip()


def cuda_kernel_text(v: Variant) -> tuple[str, list[tuple[str, str]]]:
    """The kernel's own text and [(name, text)] of the helpers it calls, transitively."""
    own, headers = _all_cuda_functions(v.source)
    every = {**headers, **own}
    name = kernel_name(v)
    if name not in own:
        raise ValueError(f"{v.id}: no function {name} in cuda_kernels/{v.source}")
    helpers: list[tuple[str, str]] = []
    todo, seen = [own[name]], {name}
    while todo:
        body = todo.pop(0)
        for other, text in every.items():
            if other not in seen and re.search(rf"\b{re.escape(other)}\b\s*[<(]", body):
                seen.add(other)
                helpers.append((other, text))
                todo.append(text)
    return own[name], helpers


def triton_kernel_text(v: Variant) -> str:
    """The @triton.jit function's text (decorator to last line), read from the file with ast so
    that no Triton import (nor its interpreter mode) is involved."""
    path = ROOT / "triton_kernels" / (v.source or "tiles.py")
    text = path.read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef) and node.name == v.kernel:
            first = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "\n".join(text.splitlines()[first - 1 : node.end_lineno])
    raise ValueError(f"{v.id}: no function {v.kernel} in {path.relative_to(ROOT)}")


# ---------------------------------------------------------------------------------------------
# Inputs: census and results


def load_census(path: Path) -> tuple[dict, dict[tuple[str, str], dict]]:
    if not path.is_file():
        return {}, {}
    doc = json.loads(path.read_text())
    return doc, {(r["variant"], r["dtype"]): r for r in doc.get("census", [])}


def load_results(root: Path = ROOT) -> list[tuple[str, dict]]:
    """[(path relative to the repo, document)] of the committed timed ladder runs."""
    out = []
    for p in sorted((root / "results").glob("*/ladder-*.json")):
        try:
            doc = json.loads(p.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("schema") == "reduce-ladder/run/1" and doc.get("mode") == "timed":
            out.append((p.relative_to(root).as_posix(), doc))
    return out


def doc_dtype(v: Variant) -> str:
    return "float32" if "float32" in v.dtypes else v.dtypes[0]


# ---------------------------------------------------------------------------------------------
# Rendering


def _census_table(variants: list[Variant], census: dict, every_dtype: bool = False) -> list[str]:
    """One row per variant (its doc_dtype), or per variant and dtype it lists (every_dtype)."""
    head = (
        "| variant | dtype | launch | regs | smem | dyn smem | local | BAR | SHFL | REDUX | "
        "LDS | STS | LDG 32/64/128 | ATOM | div/rem | loops | insns |"
    )
    out = [head, "|---|---|---|" + "---:|" * 14]
    pairs = [(v, d) for v in variants for d in (v.dtypes if every_dtype else [doc_dtype(v)])]
    for v, d in pairs:
        r = census.get((v.id, d))
        if r is None:
            out.append(f"| `{v.id}` | {d} | not in the census: regenerate it (see the top) |")
            continue
        c = r["counts"]
        local = r["stack_bytes"] + r["local_bytes"]
        spill = f" (spill {r['spill_bytes']})" if r["spill_bytes"] else ""
        ldg = c["ldg"]
        out.append(
            f"| `{v.id}` | {d} | {r['launch']} | {r['registers']} | {r['static_smem']} | "
            f"{r['dynamic_smem']} | {local}{spill} | {c['barriers']} | {c['shuffles']} | "
            f"{c['warp_reductions']} | {c['lds']} | {c['sts']} | "
            f"{ldg['32']}/{ldg['64']}/{ldg['128']} | {c['atomics']} | {r['int_divrem']} | "
            f"{c['back_edges']} | {c['instructions']} |"
        )
    return out


def _results_table(variants: list[Variant], results: list[tuple[str, dict]]) -> list[str]:
    cols = []  # (path, device name, n, dtype)
    rows: dict[tuple[str, str, int, str], dict] = {}
    ids = {v.id for v in variants}
    for path, doc in results:
        dev = doc.get("device", {}).get("name", "?")
        for r in doc.get("results", []):
            if r.get("variant") not in ids or r.get("status") != "ok" or "total" not in r:
                continue
            key = (path, dev, r["n"], r.get("dtype", ""))
            if key not in cols:
                cols.append(key)
            rows[(*key, r["variant"])] = r
    if not cols:
        return ["No committed GPU results for these variants yet."]
    head = "| variant | " + " | ".join(f"{dev}, n = {n:,} ({dt})" for _, dev, n, dt in cols) + " |"
    out = [head, "|---|" + "---:|" * len(cols)]
    for v in variants:
        cells = []
        for key in cols:
            r = rows.get((*key, v.id))
            cells.append(
                f"{r['total']['median_ms'] * 1e3:.1f} µs, {r['gbps_total']:.0f} GB/s" if r else "-"
            )
        if any(c != "-" for c in cells):
            out.append(f"| `{v.id}` | " + " | ".join(cells) + " |")
    out.append("")
    out.append(
        "Median time of the whole reduction (all passes) and effective bandwidth (bytes read + "
        "written / time), from "
        + ", ".join(f"`{p}`" for p in dict.fromkeys(k[0] for k in cols))
        + "."
    )
    return out


def _side_by_side(cuda_title: str, cuda: str, word: str, tri_title: str, tri: str) -> list[str]:
    return [
        "<table>",
        f"<tr><th>CUDA: {cuda_title}</th><th>Triton {word}: {tri_title}</th></tr>",
        '<tr><td valign="top">',
        "",
        "```cuda",
        cuda,
        "```",
        "",
        '</td><td valign="top">',
        "",
        "```python",
        tri,
        "```",
        "",
        "</td></tr>",
        "</table>",
        "",
    ]


def _stage_facts(cuda: list[Variant], twins: list[Variant], census: dict) -> list[str]:
    """A sentence of census facts per stage, worded from the numbers (no typed-in figures)."""
    rows_c = [census.get((v.id, doc_dtype(v))) for v in cuda]
    rows_t = [census.get((v.id, doc_dtype(v))) for v in twins]
    if any(r is None for r in rows_c + rows_t) or not rows_c:
        return []

    def span(rows, f):
        vals = sorted({f(r) for r in rows})
        return str(vals[0]) if len(vals) == 1 else f"{vals[0]}-{vals[-1]}"

    facts = [
        f"CUDA: {span(rows_c, lambda r: r['counts']['barriers'])} barriers, "
        f"{span(rows_c, lambda r: r['counts']['shuffles'])} shuffles, "
        f"{span(rows_c, lambda r: r['counts']['lds'])} shared loads, "
        f"{span(rows_c, lambda r: r['static_smem'])} bytes of static shared memory, "
        f"{span(rows_c, lambda r: r['registers'])} registers"
    ]
    if rows_t:
        facts.append(
            f"Triton: {span(rows_t, lambda r: r['counts']['barriers'])} barriers, "
            f"{span(rows_t, lambda r: r['counts']['shuffles'])} shuffles, "
            f"{span(rows_t, lambda r: r['counts']['lds'])} shared loads, "
            f"{span(rows_t, lambda r: r['dynamic_smem'])} bytes of (dynamic) shared memory, "
            f"{span(rows_t, lambda r: r['registers'])} registers"
        )
    return ["In the census (static SASS counts): " + "; ".join(facts) + ".", ""]


def triton_partner(v: Variant) -> str | None:
    """The Triton variant shown beside a CUDA one: its tile twin, else its counterpart (family
    "fastest": built for the same goal with its own tiles, not a twin)."""
    return v.twin or v.counterpart


def _partner_word(cs: list[Variant]) -> str:
    return "twin" if all(v.twin for v in cs) else "counterpart"


def peers() -> list[Variant]:
    """Catalogue records that are library calls (no kernel here to compile or port)."""
    return [v for v in catalogue.VARIANTS if v.backend not in ("cuda", "triton") or not v.launch]


def families() -> list[str]:
    return list(dict.fromkeys(v.family for v in catalogue.VARIANTS if v.backend == "cuda"))


def render(census_path: Path = CENSUS, root: Path = ROOT) -> str:
    cdoc, census = load_census(census_path)
    results = load_results(root)
    tools = cdoc.get("tools", {})
    out = [
        "# Porting reference: CUDA beside Triton, stage by stage",
        "",
        "<!-- Generated by harness/porting_doc.py: do not edit by hand. Regenerate with:",
        REGEN,
        "-->",
        "",
        "Each stage of the classic CUDA reduction ladder, its Triton twin (the program that reads "
        "the same tile(s) as the CUDA block), what the optimization becomes in Triton, what the "
        "compilers made of both, and what they measured on a GPU. The kernel sources below are "
        "copied from `cuda_kernels/` and `triton_kernels/` by the generator, the census numbers "
        "come from `reduce-ladder inspect`, the timings from the committed results. After the "
        "ladder (seeds 000/002) come seed 004's int32 rungs, seed 001's host-driven passes, and "
        "the `fastest` pair, whose Triton kernel is a counterpart (the same goal, its own "
        "tiles), not a twin; the peers (library calls) close the document.",
        "",
    ]
    if cdoc:
        out += [
            f"Census: `{census_path.relative_to(root).as_posix()}`, architecture "
            f"{cdoc.get('arch')}, NVRTC {tools.get('nvrtc')}, Triton {tools.get('triton')}, "
            f"cuobjdump {tools.get('cuobjdump')}. Counts are static: instructions in the binary, "
            "not instructions executed (a loop body counts once; the Triton column counts the "
            "compiled kernel with the BLOCK / TILES / num_warps the harness launches).",
            "",
            "Columns: regs = registers per thread; smem = static shared memory (bytes); dyn smem "
            "= dynamic shared memory (Triton's scratch); local = stack frame + local memory "
            "(spills would show here); BAR = barriers; SHFL = warp shuffles; REDUX = warp "
            "reductions in one instruction; LDS / STS = shared-memory loads / stores; LDG = global "
            "loads by width in bits; ATOM = atomics; div/rem = integer divide / modulo "
            "instructions in the PTX; loops = backward branches in the SASS; insns = SASS "
            "instructions.",
            "",
        ]
    else:
        out += [
            "No census committed yet: run the commands at the top of this file's source.",
            "",
        ]
    if not results:
        out += ["No GPU results are committed yet (results/*/ladder-*.json).", ""]
    for fam in families():
        cuda_all = [v for v in catalogue.VARIANTS if v.backend == "cuda" and v.family == fam]
        stages = list(dict.fromkeys(v.stage for v in catalogue.ladder_order(cuda_all)))
        seeds = sorted({s.split(":")[0] for v in cuda_all for s in v.seeds})
        out += [f"## Family `{fam}` (seeds {', '.join(seeds) or '-'})", ""]
        out += ["| stage | CUDA variants | Triton twin(s) | in Triton |", "|---|---|---|---|"]
        for st in stages:
            cs = [v for v in cuda_all if v.stage == st]
            tw = list(dict.fromkeys(triton_partner(v) for v in cs if triton_partner(v)))
            mark = "" if _partner_word(cs) == "twin" else " (counterpart)"
            how = LESSONS.get((fam, st), ("see below", ""))[0]
            out.append(
                f"| [{st}](#{fam}-stage-{st}) | "
                + ", ".join(f"`{v.id.split('/', 1)[1]}`" for v in cs)
                + " | "
                + ", ".join(f"`{t.split('/', 1)[1]}`{mark}" for t in tw)
                + f" | {how} |"
            )
        out.append("")
        for st in stages:
            cs = [v for v in cuda_all if v.stage == st]
            word = _partner_word(cs)
            twins = [
                catalogue.get(t)
                for t in dict.fromkeys(triton_partner(v) for v in cs if triton_partner(v))
            ]
            out += [f'<a id="{fam}-stage-{st}"></a>', "", f"### Stage {st}: {cs[0].title}", ""]
            out.append("**The idea.**")
            out.append("")
            for v in cs:
                label = " **(WRONG demonstration, never in a default run)**" if v.wrong else ""
                seeds = ", ".join(v.seeds) or "no seed code"
                out.append(f"- `{v.id}` ({seeds}): {v.title}; {v.change}.{label}")
                if v.notes:
                    out.append(f"  {v.notes}")
            out.append("")
            how, why = LESSONS.get(
                (fam, st),
                (
                    "not described yet",
                    "No entry for this stage in `harness/porting_doc.py` LESSONS yet; the twin "
                    "below shows what the Triton program reads.",
                ),
            )
            out += [f"**In Triton: {how}.** {why}", ""]
            for t in twins:
                how_launched = (
                    "launched with "
                    if not t.launch.mapping.one_launch
                    else "compiled for the census with its default configuration "
                    "(`fastest.DEFAULT`, the autotuner's first candidate) on a grid of more than "
                    "one program: "
                )
                out.append(
                    f"- {word} `{t.id}`: {t.title} ({t.tile_mapping}); {t.change}; {how_launched}"
                    + ", ".join(f"{k} = {val}" for k, val in _meta(t).items())
                    + "."
                )
            out.append("")
            out += _stage_facts(cs, twins, census)
            shown: set[str] = set()
            for v in cs:
                key = f"{v.source}:{kernel_name(v)}"
                if key in shown:
                    continue
                shown.add(key)
                kernel, helpers = cuda_kernel_text(v)
                same = [u for u in cs if f"{u.source}:{kernel_name(u)}" == key]
                users = [u.id.split("/", 1)[1] for u in same if not u.wrong] or [
                    v.id.split("/", 1)[1]
                ]
                tws = {}
                for u in same:
                    if triton_partner(u):
                        t = catalogue.get(triton_partner(u))
                        tws.setdefault(f"{t.source}:{t.kernel}", t)
                out += _side_by_side(
                    f"<code>{kernel_name(v)}</code> ({', '.join(users)}; "
                    f"<code>cuda_kernels/{v.source}</code>)",
                    kernel,
                    word,
                    ", ".join(
                        f"<code>{t.kernel}</code> (<code>triton_kernels/{t.source}</code>)"
                        for t in tws.values()
                    )
                    or "none",
                    "\n\n\n".join(triton_kernel_text(t) for t in tws.values()),
                )
                if helpers:
                    out += [
                        "<details><summary>CUDA helpers it calls: "
                        + ", ".join(f"<code>{h}</code>" for h, _ in helpers)
                        + "</summary>",
                        "",
                        "```cuda",
                        "\n\n".join(text for _, text in helpers),
                        "```",
                        "",
                        "</details>",
                        "",
                    ]
            out += ["**Census.**", ""]
            # the fastest pair is built for five dtypes: show each (loads differ by width)
            out += _census_table([*cs, *twins], census, every_dtype=fam == "fastest")
            out += ["", "**Measured.**", ""]
            out += _results_table([*cs, *twins], results)
            out.append("")
    out += _peers_section(results)
    out += ["## Porting checklist", "", CHECKLIST]
    return "\n".join(out).rstrip() + "\n"


def _peers_section(results: list[tuple[str, dict]]) -> list[str]:
    ps = peers()
    if not ps:
        return []
    out = [
        '<a id="peers"></a>',
        "",
        "## Peers: library calls (not compiled here)",
        "",
        "What a user would call instead, timed beside the ladder (harness/peers.py). They are "
        "library calls, not kernels in this repository, so `reduce-ladder inspect` lists them as "
        "not compiled and there is nothing to port.",
        "",
        "| peer | what it is | dtypes |",
        "|---|---|---|",
    ]
    out += [f"| `{v.id}` | {v.title}: {v.change} | {', '.join(v.dtypes)} |" for v in ps]
    out += ["", "**Measured.**", ""]
    out += _results_table(ps, results)
    out.append("")
    return out


def _meta(v: Variant) -> dict:
    from harness.compile.census import triton_meta

    return triton_meta(v)


def write(path: str | Path = DOC, census_path: str | Path | None = None) -> Path:
    path = Path(path)
    text = render(Path(census_path).resolve() if census_path else CENSUS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


if __name__ == "__main__":
    print(f"wrote {write(sys.argv[1] if len(sys.argv) > 1 else DOC)}")
