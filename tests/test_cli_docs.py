"""The README's install recipe is what CI runs; the README, docs/studies.md and pyproject say what
the CLI does."""

import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
STUDIES = (ROOT / "docs" / "studies.md").read_text()  # the studies and the study notes


def cpu_recipe() -> list[str]:
    """The command lines of the README's CPU-only recipe (the bash block after its marker)."""
    after = README.split("<!-- cpu-recipe:", 1)[1]
    block = re.search(r"```bash\n(.*?)```", after, re.S)
    assert block, "the CPU recipe's ```bash block is missing"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_ci_installs_exactly_by_the_readme_cpu_recipe():
    # CI may set environment variables for a line (VAR=value before the command: the machine's
    # wheel folder instead of an index it cannot reach); the command itself must be the README's.
    ci = [
        re.sub(r"^(?:[A-Z_]+=\S*\s+)+", "", line.strip())
        for line in (ROOT / ".ci" / "run").read_text().splitlines()
    ]
    recipe = cpu_recipe()
    assert len(recipe) >= 3 and any("--index-url" in line and "cpu" in line for line in recipe)
    # every line, verbatim, consecutive and in order, and no other pip install in CI
    start = ci.index(recipe[0])
    assert ci[start : start + len(recipe)] == recipe
    installs = [line for line in ci if "pip install" in line]
    assert installs == [line for line in recipe if "pip install" in line]


def test_readme_install_says_how_big_each_recipe_is():
    install = README.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "2.8 GB" in install and "5.7 GB" in install  # the GPU recipe (torch's CUDA build)
    assert "2.4 GB" in install  # the CPU recipe's venv


def test_readme_shows_the_required_json_of_the_studies_and_that_benchmarks_need_a_gpu():
    assert "reduce-ladder fastest-bench --json" in README
    assert "reduce-ladder ablation --json" in README
    assert "python -m harness.studies.fastest_bench [" not in README
    assert "the benchmarks need a GPU" in STUDIES


def test_readme_describes_each_study_note():
    notes = STUDIES.split("## The study notes", 1)[1].split("\n## ", 1)[0]
    for note, language in (
        ("000", "Chinese"),
        ("001", "Chinese"),
        ("002", "Chinese"),
        ("004", "Korean"),
    ):
        row = next(line for line in notes.splitlines() if line.startswith(f"| **{note}**"))
        assert language in row
    assert "../shared/seeds/" in README


def test_license_is_an_spdx_string():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == "MIT"


def python_example() -> str:
    """The README's Python example (the python block under "## From Python")."""
    after = README.split("## From Python", 1)[1]
    block = re.search(r"```python\n(.*?)```", after, re.S)
    assert block, "the README's Python example is missing"
    return block.group(1)


def test_the_python_example_compiles():
    compile(python_example(), "README.md", "exec")


@pytest.mark.gpu
def test_the_python_example_runs_and_sums_right(needs_cupy):
    """The README's example as written, on the GPU: the sums it computes are exact."""
    import torch

    scope: dict = {}
    exec(compile(python_example(), "README.md", "exec"), scope)
    x = scope["x"]
    want = (int(x.to(torch.int64).sum()) + 2**31) % 2**32 - 2**31
    torch.cuda.synchronize()
    assert scope["s"].item() == want and scope["out"].item() == want
    assert scope["r"].item() == want  # the graph's replay
