"""Inductor's sum beside ours, for docs/porting-inductor.md (page.py): what torch.compile
generated (parsed from the captured results/<device>/inductor/inductor-*.py: the constants it
fixed, the load masks, the launches) beside triton/fastest and the chunked twin, what each costs
(every device's inductor.json and ladder-float32.json), and the dynamic-shape pitfall.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from harness.core import catalogue, dtypes
from harness.core.catalogue import COMPILE_DYNAMIC_ID, COMPILE_ID, DYNAMIC_FIRST_N
from harness.core.sizes import size_label
from harness.report.documents import load_document
from harness.report.markdown import markdown_lines
from harness.report.records import Result
from porting.census import triton_meta
from porting.kernel_sources import kernel_text

OURS = ("triton/fastest", "triton/chunked-1024")
LADDER_DTYPE = "float32"  # the dtype the inductor study captured
_SECTION = re.compile(r"^# ==== compiled at the call with n = (\S+) .*$", re.M)
_KERNEL = re.compile(r"^def (triton_\w+)\(.*?^''', device_str", re.M | re.S)


@dataclass(frozen=True)
class InductorKernel:
    """One Triton kernel of a captured compile, as its source fixes it."""

    name: str
    xnumel: str  # rows (the split), a constant or "argument"
    r0_numel: str  # elements per row: a constant or the wrapper's expression
    r0_block: str  # a constant (persistent reduction) or "autotuned"
    looped: bool  # a loop over the row in R0_BLOCK steps
    masks: tuple[str, ...]  # the mask argument of each load of the input
    grid_barrier: bool  # the cooperative kernel's barrier


@dataclass(frozen=True)
class InductorCompile:
    at: str  # the n label of the call that compiled it
    kernels: tuple[InductorKernel, ...]
    launches: tuple[str, ...]  # the wrapper's .run(...) lines
    code: str  # the whole section, for lines quoted from it


def _load_masks(body: str) -> tuple[str, ...]:
    """The second argument of each tl.load (its mask), as written."""
    out = []
    for line in (ln.strip() for ln in body.splitlines() if "tl.load(" in ln):
        calls = [n for n in ast.walk(ast.parse(line)) if isinstance(n, ast.Call)]
        load = next(c for c in calls if ast.unparse(c.func) == "tl.load")
        out.append(ast.get_source_segment(line, load.args[1]) if len(load.args) > 1 else "")
    return tuple(out)


def _const(pattern: str, text: str) -> str | None:
    m = re.search(pattern, text, re.M)
    return m.group(1).strip() if m else None


def parse_compiles(code: str) -> list[InductorCompile]:
    """Each compile in a captured file (the study heads each with its call's n)."""
    heads = list(_SECTION.finditer(code))
    out = []
    for k, h in enumerate(heads):
        section = code[h.end() : heads[k + 1].start() if k + 1 < len(heads) else len(code)]
        kernels = []
        for m in _KERNEL.finditer(section):
            body, name = m.group(0), m.group(1)
            kernels.append(
                InductorKernel(
                    name=name,
                    xnumel=_const(r"^\s*xnumel = (\d+)\s*$", body) or "argument",
                    r0_numel=_const(r"^\s*r0_numel = (\d+)\s*$", body)
                    or _const(rf"^\s*{name}_r0_numel = (.+)$", section)
                    or "argument",
                    r0_block=_const(r"^\s*R0_BLOCK: tl.constexpr = (\d+)", body) or "autotuned",
                    looped="for r0_offset in tl.range" in body,
                    masks=_load_masks(body),
                    grid_barrier="x_grid_barrier" in body,
                )
            )
        launches = tuple(ln.strip() for ln in section.splitlines() if re.search(r"\w\.run\(", ln))
        out.append(InductorCompile(h.group(1), tuple(kernels), launches, section))
    return out


def _compiles(folder: Path, mode: str) -> list[InductorCompile]:
    """The compiles of a device folder's captured code in one mode ([] where none)."""
    path = folder / "inductor" / f"inductor-{mode}.py"
    return parse_compiles(path.read_text()) if path.is_file() else []


def _split(c: InductorCompile) -> str:
    first = c.kernels[0]
    if first.grid_barrier:
        return f"1 row of {first.r0_numel}, split RSPLIT ways (autotuned) in one grid"
    if first.xnumel == "1":
        return f"one program, {first.r0_numel} elements"
    return f"{first.xnumel} rows × {first.r0_numel} elements"


def _last_step(c: InductorCompile) -> str:
    if c.kernels[0].grid_barrier:
        return "same kernel: partials to a workspace, grid barrier (semaphore), program 0 stores"
    if len(c.kernels) > 1:
        return f"second kernel `{c.kernels[1].name}` over the {c.kernels[0].xnumel} partials"
    return "none (one program)"


def _masks(masks: tuple[str, ...]) -> str:
    return "; ".join("none" if m == "None" else f"`{m}`" for m in masks) or "-"


def inductor_rows(mode: str, compiles: list[InductorCompile]) -> list[list[str]]:
    return [
        [
            f"Inductor {mode}, compiled at {c.at}",
            _split(c),
            f"R0_BLOCK {c.kernels[0].r0_block}" + (", loop over the row" * c.kernels[0].looped),
            _masks(c.kernels[0].masks),
            _last_step(c),
            str(len(c.launches)),
        ]
        for c in compiles
        if c.kernels
    ]


def our_rows(ladder: dict[str, dict]) -> list[list[str]]:
    """triton/fastest and the chunked twin, from their source and meta-parameters and, for the
    programs and passes, from each device's ladder file (what the run launched)."""
    rows = []
    for vid in OURS:
        v = catalogue.get(vid)
        text = kernel_text(v)[0]
        loads = [ln for ln in text.splitlines() if "tl.load(" in ln]
        masked = sum(1 for ln in loads if "mask=" in ln)
        meta = triton_meta(v)
        launched = "; ".join(
            f"{dev}: {r.info['blocks_first_pass']} programs, {r.info.get('passes')} pass(es) at "
            f"{size_label(r.n)}"
            for dev, recs in ladder.items()
            for r in recs.get(vid, [])[-1:]
            if r.info.get("blocks_first_pass")
        )
        ticket = "tl.atomic_add" in text
        rows.append(
            [
                f"`{vid}`",
                launched or "-",
                f"BLOCK {meta.get('BLOCK')}"
                + (" (autotuned per device, dtype, size)" if ticket else ""),
                f"{masked} of {len(loads)} loads masked",
                "last-program ticket (`tl.atomic_add`), same launch"
                if ticket
                else "the same kernel again on the partials (more passes)",
                "1" if ticket else "one per pass",
            ]
        )
    return rows


def _ladder(folder: Path) -> dict[str, list[Result]]:
    """A device folder's ladder run, by variant ({} where it has none)."""
    path = folder / f"ladder-{LADDER_DTYPE}.json"
    out: dict[str, list[Result]] = {}
    for r in load_document(path, "rows").results if path.is_file() else []:
        out.setdefault(r.variant, []).append(r)
    return out


def _ms(recs: list[Result], n: int) -> float | None:
    return next((r.ms for r in recs if r.n == n and r.ok and r.timed), None)


def cost_table(folders: list[Path]) -> list[str]:
    """Per device: the ladder's times of ours and the compiled peers at each n it ran, and the
    inductor study's per-mode times."""
    ids = (*OURS, COMPILE_ID, COMPILE_DYNAMIC_ID)
    rows = []
    for folder in folders:
        lad = _ladder(folder)
        for n in sorted({r.n for recs in lad.values() for r in recs}):
            cells = [_ms(lad.get(vid, []), n) for vid in ids]
            rows.append(
                [folder.name, f"ladder, {size_label(n)}"]
                + [f"{m * 1e3:,.1f}" if m else "-" for m in cells]
            )
    header = ("device", "source, n", *[f"`{v}` µs" for v in ids])
    return markdown_lines(header, rows)


def _study(folder: Path) -> dict | None:
    path = folder / "inductor" / "inductor.json"
    return load_document(path, "rows").raw if path.is_file() else None


def _calls(doc: dict) -> dict[tuple[str, int], dict]:
    """The inductor study's calls by (mode, n), in the study's order."""
    return {(e["mode"], c["n"]): c for e in doc["modes"] for c in e.get("calls", [])}


def study_table(folders: list[Path]) -> list[str]:
    """The inductor study's device time per mode and n, one column per device."""
    docs = {f.name: d for f in folders if (d := _study(f))}
    times = {dev: _calls(doc) for dev, doc in docs.items()}
    rows = []
    for mode, n in dict.fromkeys(key for calls in times.values() for key in calls):
        cells = [calls.get((mode, n)) for calls in times.values()]
        cells = [
            f"{c['median_us']:,.1f}" + " (reused)" * (not c["compiled"]) if c else "-"
            for c in cells
        ]
        rows.append([mode, size_label(n), *cells])
    return markdown_lines(("mode", "n", *[f"{d} µs" for d in docs]), rows)


def _quote(code: str, *patterns: str) -> list[str]:
    """The first line of code matching each pattern, stripped, in the order given."""
    return [m.group(0).strip() for pat in patterns if (m := re.search(pat, code, re.M))]


def _rows_per_program(expr: str, n: int) -> int | None:
    """Evaluate the wrapper's `(a + sN) // b` at n (the only form Inductor wrote here)."""
    m = re.fullmatch(r"\((\d+) \+ \w+\) // (\d+)", expr.strip())
    return (int(m.group(1)) + n) // int(m.group(2)) if m else None


def pitfall(folders: list[Path]) -> list[str]:
    """The dynamic pitfall from the captured code: the split fixed when compiling, reused."""
    docs = {f: d for f in folders if (d := _study(f))}
    if not docs:
        return []
    folder = list(docs)[-1]
    sym = [
        c for c in _compiles(folder, "dynamic") if any(not k.r0_numel.isdigit() for k in c.kernels)
    ]
    if not sym:
        return []
    c, k0 = sym[0], sym[0].kernels[0]
    big = max(docs[folder]["sizes"])
    per_row = _rows_per_program(k0.r0_numel, big)
    out = [
        "**The dynamic pitfall, from the code.** The symbolic-size compile (at "
        f"{c.at}) fixes the split in the kernel and sizes the row from n in the wrapper "
        f"({folder.name}/inductor/inductor-dynamic.py):",
        "",
        "```python",
        *_quote(c.code, r"^\s*xnumel = \d+\s*$", r"^\s*triton_\w+_r0_numel = .*$"),
        *_quote(c.code, r"^\s*buf0 = empty_strided_cuda.*$", r"^\s*tmp\d+ = tmp\d+ < tmp\d+\s*$"),
        *_quote(c.code, r"^\s*tmp\d+ = tl\.load\(in_ptr0.*$"),
        "```",
        "",
    ]
    same_n = [sc for sc in _compiles(folder, "static") if sc.at == c.at and sc.kernels]
    if same_n:
        chosen = same_n[0].kernels[0].xnumel
        kept = "the same split" if chosen == k0.xnumel else "another split"
        out += [
            f"The static compile at the same n ({c.at}) chose {chosen} rows: the symbolic kernel "
            f"kept {kept}, taken from the size it was compiled at.",
            "",
        ]
    if per_row is not None:
        out += [
            f"Reused at n = {size_label(big)}: still {k0.xnumel} rows, each "
            f"{per_row:,} elements long, walked by one program each in R0_BLOCK steps.",
            "",
        ]
    lines = []
    for f, doc in docs.items():
        at = _calls(doc)
        dyn, stat = at.get(("dynamic", big)), at.get(("static", big))
        if dyn and stat:
            how = "compiled here" if dyn["compiled"] else "reused kernel"
            slower = dyn["median_us"] / stat["median_us"]
            lines.append(
                f"- {f.name}, inductor study at {size_label(big)}: dynamic "
                f"{dyn['median_us']:,.1f} µs ({how}) against static {stat['median_us']:,.1f} µs: "
                f"{slower:.1f} x."
            )
        lad = _ladder(f)
        for n in sorted({r.n for r in lad.get(COMPILE_DYNAMIC_ID, [])}):
            d, s_ = _ms(lad.get(COMPILE_DYNAMIC_ID, []), n), _ms(lad.get(COMPILE_ID, []), n)
            if d and s_:
                gbps = n * dtypes.get(LADDER_DTYPE).itemsize / d / 1e6
                lines.append(
                    f"- {f.name}, ladder run at {size_label(n)} (`{COMPILE_DYNAMIC_ID}`, first "
                    f"compiled at {size_label(DYNAMIC_FIRST_N)}): {d:,.1f} ms = {gbps:,.1f} GB/s, "
                    f"{d / s_:,.0f} x the static compile's {s_ * 1e3:,.1f} µs."
                )
    lines.append(
        f"- The ladder's `{COMPILE_DYNAMIC_ID}` is `dynamic=True` from its first call at "
        f"{size_label(DYNAMIC_FIRST_N)}, so its kernels were generated with that size as the "
        "hint; its code is not among the captures above (the study's dynamic mode is automatic "
        "dynamic, static at its first size)."
    )
    return out + lines + [""]


def section(folders: list[Path]) -> list[str]:
    """The comparison and the dynamic pitfall, from every device folder with a capture."""
    captured = [f for f in folders if (f / "inductor" / "inductor-static.py").is_file()]
    if not captured:
        return []
    first = captured[-1]
    rows = [
        r
        for mode in ("static", "dynamic", "coop")
        for r in inductor_rows(mode, _compiles(first, mode))
    ]
    rows += our_rows({f.name: _ladder(f) for f in folders})
    header = ("kernel", "how the work is split", "block sizes", "masks on the loads", "last step")
    out = [
        "### Inductor's kernels beside `triton/fastest` and the chunked twin",
        "",
        f"Read from the captured code ({first.name}/inductor/inductor-*.py: the constants "
        "Inductor fixed in each kernel, the mask of each load, the wrapper's launches) and from "
        "our sources and meta-parameters; the programs we launched from each device's "
        f"ladder-{LADDER_DTYPE}.json.",
        "",
        *markdown_lines((*header, "launches"), rows),
        "",
        "**What it costs, measured** (device time per call, "
        f"{LADDER_DTYPE}; the ladder run's `{COMPILE_DYNAMIC_ID}` compiled first at "
        f"{size_label(DYNAMIC_FIRST_N)}):",
        "",
        *cost_table(folders),
        "",
        "The inductor study, per device (one process, the sizes in this order):",
        "",
        *study_table(folders),
        "",
        *pitfall(folders),
    ]
    return out
