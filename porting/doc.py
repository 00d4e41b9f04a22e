"""Generate docs/porting.md: every stage of every family, CUDA beside its Triton twin.

Inputs, all committed, so the output is a pure function of the repository (CI regenerates it and
compares): the catalogue, the kernel sources (cuda_kernels/*.cu, triton_kernels/*.py), the
compiler census (docs/census-sm_90.json, written by `reduce-ladder inspect --dtype all --json`),
the measured GPU results (results/*/ladder-*.json), and the newest hardware counters and
sanitizer verdicts (results/*/profile.json, sanitize.json: porting_hardware, porting_sanitizer).
No number in the doc is typed in.

    python -m porting.doc [PATH]          # default docs/porting.md
    reduce-ladder inspect --write-doc docs/porting.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness.core import catalogue
from harness.core.catalogue import Variant
from harness.report import records
from harness.report.documents import Document, ReportError, load_document
from harness.report.markdown import RIGHT, markdown_lines
from porting import hardware as porting_hardware
from porting import inductor as porting_inductor
from porting import sanitizer as porting_sanitizer
from porting.kernel_sources import (
    cuda_kernel_text,
    kernel_name,
    side_by_side,
    triton_kernel_text,
)
from porting.lessons import CHECKLIST, LESSONS

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "porting.md"
CENSUS = ROOT / "docs" / "census-sm_90.json"
REGEN = (
    "reduce-ladder inspect --dtype all --json docs/census-sm_90.json\n"
    "reduce-ladder inspect --write-doc docs/porting.md     # or: python -m "
    "porting.doc"
)

# ---------------------------------------------------------------------------------------------
# Inputs: census and results


def load_census(path: Path) -> tuple[dict, dict[tuple[str, str], dict]]:
    if not path.is_file():
        return {}, {}
    doc = json.loads(path.read_text())
    return doc, {(r["variant"], r["dtype"]): r for r in doc.get("census", [])}


def load_results(root: Path = ROOT) -> list[tuple[str, Document]]:
    """[(path relative to the repo, document)] of the committed timed ladder runs (any version
    of the run document; an unreadable file is left out, as a missing one would be)."""
    out = []
    for p in sorted((root / "results").glob("*/ladder-*.json")):
        try:
            doc = load_document(p)
        except ReportError:
            continue
        is_run = doc.schema in (records.RUN_SCHEMA, records.RUN_SCHEMA_V1)
        if is_run and doc.meta.get("mode") == "timed":
            out.append((p.relative_to(root).as_posix(), doc))
    return out


def doc_dtype(v: Variant) -> str:
    return "float32" if "float32" in v.dtypes else v.dtypes[0]


# ---------------------------------------------------------------------------------------------
# Rendering


CENSUS_HEADER = (
    *("variant", "dtype", "launch", "regs", "smem", "dyn smem", "local", "BAR", "SHFL", "REDUX"),
    *("LDS", "STS", "LDG 32/64/128", "ATOM", "div/rem", "loops", "insns"),
)


def _census_table(variants: list[Variant], census: dict, every_dtype: bool = False) -> list[str]:
    """One row per variant (its doc_dtype), or per variant and dtype it lists (every_dtype)."""
    rows = []
    pairs = [(v, d) for v in variants for d in (v.dtypes if every_dtype else [doc_dtype(v)])]
    for v, d in pairs:
        r = census.get((v.id, d))
        if r is None:
            rows.append([f"`{v.id}`", d, "not in the census: regenerate it (see the top)"])
            continue
        c = r["counts"]
        local = r["stack_bytes"] + r["local_bytes"]
        spill = f" (spill {r['spill_bytes']})" if r["spill_bytes"] else ""
        ldg = c["ldg"]
        cells = [f"`{v.id}`", d, r["launch"], r["registers"], r["static_smem"]]
        cells += [r["dynamic_smem"], f"{local}{spill}", c["barriers"], c["shuffles"]]
        cells += [c["warp_reductions"], c["lds"], c["sts"], f"{ldg['32']}/{ldg['64']}/{ldg['128']}"]
        cells += [c["atomics"], r["int_divrem"], c["back_edges"], c["instructions"]]
        rows.append([str(x) for x in cells])
    return markdown_lines(CENSUS_HEADER, rows, align="lll" + RIGHT * 14)


def _results_table(variants: list[Variant], results: list[tuple[str, Document]]) -> list[str]:
    cols = []  # (path, device name, n, dtype)
    rows: dict[tuple, records.ResultRecord] = {}
    ids = {v.id for v in variants}
    for path, doc in results:
        for r in doc.records:
            if r.variant not in ids or not r.ok or not r.timed:
                continue
            key = (path, doc.device, r.n, r.dtype)
            if key not in cols:
                cols.append(key)
            rows[(*key, r.variant)] = r
    if not cols:
        return ["No committed GPU results for these variants yet."]
    body = []
    for v in variants:
        cells = []
        for key in cols:
            r = rows.get((*key, v.id))
            cells.append(f"{r.ms * 1e3:.1f} µs, {r.gbps_total:.0f} GB/s" if r else "-")
        if any(c != "-" for c in cells):
            body.append([f"`{v.id}`", *cells])
    header = ["variant", *[f"{dev}, n = {n:,} ({dt})" for _, dev, n, dt in cols]]
    out = markdown_lines(header, body, align="l" + RIGHT * len(cols))
    out.append("")
    out.append(
        "Median time of the whole reduction (all passes) and effective bandwidth (bytes read + "
        "written / time), from "
        + ", ".join(f"`{p}`" for p in dict.fromkeys(k[0] for k in cols))
        + "."
    )
    return out


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
    profile = porting_hardware.newest(root, porting_hardware.PROFILE_NAME)
    pdoc = profile[1] if profile else None
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
        "come from `reduce-ladder inspect`, the timings and hardware counters from the committed "
        "results. After the "
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
    out += porting_hardware.intro(profile)
    for fam in families():
        cuda_all = [v for v in catalogue.VARIANTS if v.backend == "cuda" and v.family == fam]
        stages = list(dict.fromkeys(v.stage for v in catalogue.ladder_order(cuda_all)))
        seeds = sorted({s.split(":")[0] for v in cuda_all for s in v.seeds})
        out += [f"## Family `{fam}` (seeds {', '.join(seeds) or '-'})", ""]
        summary = []
        for st in stages:
            cs = [v for v in cuda_all if v.stage == st]
            tw = list(dict.fromkeys(triton_partner(v) for v in cs if triton_partner(v)))
            mark = "" if _partner_word(cs) == "twin" else " (counterpart)"
            how = LESSONS.get((fam, st), ("see below", ""))[0]
            summary.append(
                [
                    f"[{st}](#{fam}-stage-{st})",
                    ", ".join(f"`{v.id.split('/', 1)[1]}`" for v in cs),
                    ", ".join(f"`{t.split('/', 1)[1]}`{mark}" for t in tw),
                    how,
                ]
            )
        out += markdown_lines(("stage", "CUDA variants", "Triton twin(s)", "in Triton"), summary)
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
                out += side_by_side(
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
            out += porting_hardware.stage_section(pdoc, fam, st, cs, twins)
    out += _peers_section(results, pdoc)
    out += porting_hardware.seed_tables_section(profile, root / "docs", root)
    out += porting_sanitizer.section(porting_sanitizer.committed(root))
    inductor = porting_hardware.newest(root, f"inductor/{porting_inductor.INDUCTOR_JSON}")
    if inductor:
        out += [porting_inductor.inductor_section(root / Path(inductor[0]).parent)]
    out += ["## Porting checklist", "", CHECKLIST]
    return "\n".join(out).rstrip() + "\n"


def _peers_section(results: list[tuple[str, Document]], pdoc: dict | None) -> list[str]:
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
    ]
    out += markdown_lines(
        ("peer", "what it is", "dtypes"),
        ([f"`{v.id}`", f"{v.title}: {v.change}", ", ".join(v.dtypes)] for v in ps),
    )
    out += ["", "**Measured.**", ""]
    out += _results_table(ps, results)
    out.append("")
    return out + porting_hardware.stage_section(pdoc, "peer", "peer", ps, [])


def _meta(v: Variant) -> dict:
    from porting.census import triton_meta

    return triton_meta(v)


def write(path: str | Path = DOC, census_path: str | Path | None = None) -> list[Path]:
    path = Path(path)
    text = render(Path(census_path).resolve() if census_path else CENSUS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return [path]


if __name__ == "__main__":
    for written in write(sys.argv[1] if len(sys.argv) > 1 else DOC):
        print(f"wrote {written}")
