"""The porting guide's per-stage prose, read from porting/lessons.md: what each CUDA optimization
becomes in Triton per (family, stage), and the counter notes' words (TEXTS, str.format fields)."""

import re
from pathlib import Path

# What an optimization becomes in Triton: each lesson's `how` is one of these.
HOW = (
    "done by the compiler",
    "tile shape",
    "num_warps",
    "program count",
    "host code",
    "not expressible",
)
_PARTS = re.split(r"^## (.+)\n", Path(__file__).with_name("lessons.md").read_text(), flags=re.M)
# {heading: its paragraphs, each on one line, a blank line between them}
_SECTIONS = {
    head: "\n\n".join(" ".join(p.split("\n")) for p in body.strip().split("\n\n"))
    for head, body in zip(_PARTS[1::2], _PARTS[2::2], strict=True)
}
TEXTS = {h[5:]: body for h, body in _SECTIONS.items() if h.startswith("text ")}
# (family, stage) -> (how, why)
LESSONS: dict[tuple[str, str], tuple[str, str]] = {
    tuple(head.split(":")[0].split()): (head.split(": ", 1)[1], body)
    for head, body in _SECTIONS.items()
    if not head.startswith("text ")
}
