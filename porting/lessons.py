"""The porting guide's words: the Jinja2 environment of its templates (porting/guide.md and
appendix.md) and porting/lessons.md, read here: what each CUDA optimization becomes in Triton per
(family, stage), and the notes the hardware counters are worded into (TEXTS, rendered by note)."""

import re
from pathlib import Path

import jinja2

# What an optimization becomes in Triton: each lesson's `how` is one of these.
HOW = ("done by the compiler", "tile shape", "num_warps", "program count", "host code")
HOW += ("not expressible",)
_PARTS = re.split(r"^## (.+)\n", Path(__file__).with_name("lessons.md").read_text(), flags=re.M)


def unwrap(text: str) -> str:
    """Wrapped paragraphs, each on one line (as the generated lines are), a blank line between."""
    paragraphs = text.strip("\n").split("\n\n")
    return "\n\n".join(" ".join(ln.strip() for ln in p.split("\n")) for p in paragraphs)


# {heading: its paragraphs, unwrapped}
_SECTIONS = {h: unwrap(body) for h, body in zip(_PARTS[1::2], _PARTS[2::2], strict=True)}
TEXTS = {h[5:]: body for h, body in _SECTIONS.items() if h.startswith("text ")}
# (family, stage) -> (how, why)
LESSONS: dict[tuple[str, str], tuple[str, str]] = {
    tuple(head.split(":")[0].split()): (head.split(": ", 1)[1], body)
    for head, body in _SECTIONS.items()
    if not head.startswith("text ")
}
ENV = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent),
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    undefined=jinja2.StrictUndefined,
)
ENV.filters["unwrap"] = lambda text: unwrap(text) + "\n"
ENV.filters["num"] = lambda x, digits=0: "-" if x is None else f"{x:,.{digits}f}"


def render(name: str, **fields) -> str:
    """TEXTS[name] with its fields (a Jinja2 template)."""
    return ENV.from_string(TEXTS[name]).render(fields)
