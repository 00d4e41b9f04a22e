"""README.md is a newcomer's first page: short, every command in one table, no issue numbers, its
CPU example runs, and every link from it (and from the docs pages it links) resolves."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.main import build_parser, command_names

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# The pages written for users (docs/porting.md is generated, with anchors of its own).
USER_DOCS = [
    README,
    ROOT / "benchmarks" / "FASTEST.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "porting.md"),
]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def section(text: str, heading: str) -> str:
    """The body of `## heading` (up to the next `## `)."""
    assert f"\n## {heading}\n" in text, f"no section '## {heading}'"
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    lines = path.read_text().splitlines()
    return {slug(line.lstrip("#")) for line in lines if re.match(r"#{1,6} ", line)}


def test_readme_is_at_most_250_lines():
    n = len(README.read_text().splitlines())
    assert n <= 250, f"README.md has {n} lines; move detail to a docs/ page and link it"


@pytest.mark.parametrize("page", USER_DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_issue_numbers_in_user_docs(page: Path):
    text = page.read_text()
    found = re.findall(r"\bissues?\s*#?\d+|(?<![\w&/])#\d+\b", text, re.I)
    assert not found, f"{page.name}: {found} (say what, not which issue asked for it)"
    if page == README:
        assert not re.search(r"\bissues?\b", text, re.I), "README.md mentions an issue"


def test_readme_lists_every_registered_command_in_one_table():
    table = section(README.read_text(), "Every command")
    rows = [line for line in table.splitlines() if line.startswith("| `reduce-ladder")]
    listed = {re.match(r"\| `reduce-ladder ([\w-]+)", row).group(1) for row in rows}
    registered = set(command_names(build_parser()))
    assert listed == registered, (
        f"missing: {sorted(registered - listed)}, not a command: {sorted(listed - registered)}"
    )


@pytest.mark.parametrize("page", USER_DOCS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path):
    bad = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            bad.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading with that anchor")
    assert not bad, f"{page.name}: " + "; ".join(bad)


def test_readme_links_the_detail_pages():
    text = README.read_text()
    for page in ("ladder", "correctness", "int32", "reproducible", "several-gpus", "studies"):
        assert f"](docs/{page}.md)" in text, page


def cpu_example() -> str:
    """The README's CPU example: the python block of "## From Python" under "Without a GPU"."""
    after = section(README.read_text(), "From Python").split("**Without a GPU**", 1)[1]
    block = re.search(r"```python\n(.*?)```", after, re.S)
    assert block, "the README's CPU example is missing"
    return block.group(1)


def test_the_cpu_example_is_the_cpu_path():
    code = cpu_example()
    assert '"triton/' in code and 'device="cuda"' not in code and ".cuda()" not in code
    assert "TRITON_INTERPRET=1" in section(README.read_text(), "From Python")


@pytest.mark.interpreter
def test_the_cpu_example_runs_as_the_readme_says():
    """Run as the README says (TRITON_INTERPRET=1 python example.py), in a fresh process."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run(
        [sys.executable, "-c", cpu_example()],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
