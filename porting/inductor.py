"""docs/porting-inductor.md: what torch.compile writes for the 1-D sum, from what
experiments/inductor_code captured on the GPU (results/<device>/inductor/: inductor.json and
inductor-{static,dynamic,coop}.py), then porting.inductor_diff's comparison; "" with no capture.
"""

from __future__ import annotations

from pathlib import Path

from harness.core.sizes import size_label
from harness.report.documents import load_document
from harness.report.markdown import markdown_lines
from porting import inductor_diff as porting_inductor_diff

INDUCTOR_JSON = "inductor.json"
MODE_TITLES = {
    "static": "static shapes (`dynamic=False`, one compile per size)",
    "dynamic": "default `torch.compile` (automatic dynamic: recompiled once with a symbolic size)",
    "coop": "cooperative reduction (`triton.cooperative_reductions = True`)",
}


def _constants(call: dict) -> str:
    """'xnumel 1024, r0_numel 262144; ...' per captured compile, '-' where none compiled."""
    parts = (sorted(f.get("constants", {}).items()) for f in call.get("code_facts", []))
    texts = (", ".join(f"{k} {'/'.join(map(str, v))}" for k, v in c) for c in parts)
    return "; ".join(t for t in texts if t) or "-"


def _configs(call: dict) -> str:
    skip = ("kernel", "num_warps", "num_stages")
    return (
        "; ".join(
            f"`{cfg['kernel']}` "
            + ", ".join(f"{k}={v}" for k, v in cfg.items() if k not in skip)
            + f" ({cfg['num_warps']} warps)"
            for cfg in call.get("kept_configs", [])
        )
        or "-"
    )


def _body(code: str) -> str:
    """The captured code without the capture's own header (versions and the tool that wrote it:
    the section's first lines say both), from the first compile's marker on."""
    start = code.find("# ====")
    return code[max(start, 0) :].rstrip()


def _mode_table(entry: dict) -> list[str]:
    if entry.get("unavailable"):
        return [f"Not run: {entry['unavailable']}", ""]
    rows = (
        [
            size_label(c["n"]),
            "yes" if c["compiled"] else "no",
            f"{c['median_us']:,.1f}",
            f"{c['gb_per_s']:,.0f}",
            "ok" if c["ok"] else f"WRONG: {c['message']}",
            _constants(c),
            _configs(c),
        ]
        for c in entry["calls"]
    )
    header = ("n", "compiled here", "µs / call", "GB/s", "check", "constants in the code", "kept")
    return [*markdown_lines(header, rows), ""]


def inductor_section(folder: str | Path) -> str:
    """Markdown for the committed capture in `folder`, or "" where it has none."""
    folder = Path(folder)
    path = folder / INDUCTOR_JSON
    if not path.is_file():
        return ""
    doc = load_document(path, "inductor-code").raw
    ver = doc["versions"]
    out = [
        '<a id="inductor"></a>',
        "",
        "## What torch.compile writes for the same sum",
        "",
        f"Captured at run time by `python -m experiments.inductor_code` on {ver['device']} "
        f"(torch {ver['torch']}, Triton {ver['triton']}, CUDA {ver['cuda']}): one compiled "
        f"`lambda t: t.sum()` per mode, {doc['dtype']}, called at "
        + ", ".join(size_label(n) for n in doc["sizes"])
        + " in that order in one process; device time per call from CUDA events.",
        "",
    ]
    for entry in doc["modes"]:
        mode = entry["mode"]
        out += [f"### {MODE_TITLES.get(mode, mode)}", ""]
        out += _mode_table(entry)
        code = folder / f"inductor-{mode}.py"
        if code.is_file() and not entry.get("unavailable"):
            out += [
                "<details><summary>generated code (" + code.name + ")</summary>",
                "",
                "```python",
                _body(code.read_text()),
                "```",
                "",
                "</details>",
                "",
            ]
    # Beside ours, on every device folder with a capture or a ladder run (results/<device>/).
    results = folder.parent.parent
    devices = sorted(
        {p.parent for p in results.glob("*/ladder-*.json")}
        | {p.parent.parent for p in results.glob(f"*/inductor/{INDUCTOR_JSON}")}
    )
    out += porting_inductor_diff.section(devices)
    return "\n".join(out).rstrip() + "\n"


def page(section: str, guide: str, generated: list[str]) -> str:
    """docs/porting-inductor.md: the section above as a page of its own, linked from the guide."""
    head = [
        "# Porting guide, appendix: what torch.compile writes for the same sum",
        "",
        *generated,
        f"Back to [the porting guide]({guide}).",
        "",
    ]
    return "\n".join(head) + "\n" + section
