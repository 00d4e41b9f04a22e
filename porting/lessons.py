"""The porting guide's prose, read from porting/lessons.md: what each CUDA optimization becomes
in Triton per (family, stage), the fixed paragraphs and the checklist. Words only: every number
in docs/porting.md comes from the census and the committed results (porting.doc)."""

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
CHECKLIST_HEADING = "The porting checklist"


def _sections(text: str) -> dict[str, str]:
    """{heading: body} of each `## heading` section."""
    parts = re.split(r"^## (.+)\n", text, flags=re.M)[1:]
    return {head: body.strip() for head, body in zip(parts[::2], parts[1::2], strict=True)}


def _paragraphs(body: str) -> str:
    """The section's paragraphs, each on one line, a blank line between them."""
    return "\n\n".join(" ".join(p.split("\n")) for p in body.split("\n\n"))


_SECTIONS = _sections((Path(__file__).with_name("lessons.md")).read_text())
CHECKLIST = _SECTIONS.pop(CHECKLIST_HEADING) + "\n"
# The fixed paragraphs of the guide and its appendix, by name ({names}: str.format's).
TEXTS = {h[5:]: _paragraphs(_SECTIONS.pop(h)) for h in list(_SECTIONS) if h.startswith("text ")}
# (family, stage) -> (how, why)
LESSONS: dict[tuple[str, str], tuple[str, str]] = {
    tuple(head.split(":")[0].split()): (head.split(": ", 1)[1], _paragraphs(body))
    for head, body in _SECTIONS.items()
}
