"""The pytest-benchmark front end of the named suites (harness.studies.suites): one benchmark per
case of every suite, `-k SUITE` selecting a suite; how to run it, its options and what its
statistics hold: docs/development.md ("Adding a benchmark")."""

from __future__ import annotations

import os

import pytest

from harness.core import device
from harness.core.sizes import parse_size
from harness.report.records import BENCH_SCHEMA
from harness.studies import suites


def pytest_addoption(parser: pytest.Parser) -> None:
    """The options; argparse converts them (and the environment's defaults) and says what is
    wrong with a bad one."""
    g, env = parser.getgroup("reduce-ladder benchmarks"), os.environ.get
    g.addoption("--bench-sizes", type=parse_bench_sizes, default=env("REDUCE_BENCH_SIZES"),
                help="log2 n list/ranges or sizes (10-28, 2^20)")  # fmt: skip
    g.addoption("--bench-rounds", type=count, default=env("REDUCE_BENCH_ROUNDS") or "20",
                help="timed rounds per benchmark (default 20)")  # fmt: skip


def parse_bench_sizes(text: str | None) -> list[int] | None:
    """'10-28' (every log2 in the range), '10,12,25' (log2 exponents: numbers below 64),
    '2^20', '1000', '2^20+3' (sizes); None (each suite's defaults) when not given."""
    out: list[int] = []
    for part in (p.strip() for p in (text or "").split(",")):
        if "-" in part and "^" not in part and "*" not in part:
            lo, hi = (int(s) for s in part.split("-"))
            out += [2**k for k in range(lo, hi + 1)]
        elif part.isdigit() and int(part) < 64:
            out.append(2 ** int(part))
        elif part:
            out.append(parse_size(part))
    return sorted(set(out)) or None


def count(text: str) -> int:
    """--bench-rounds: a count of rounds (0: the default 20)."""
    if not text.strip().isdigit():
        raise ValueError(text)
    return int(text) or 20


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    sizes = metafunc.config.getoption("--bench-sizes")
    found = [c for name in suites.SUITES for c in suites.cases(name, sizes=sizes)]
    metafunc.parametrize("case", found, ids=[c.id for c in found])


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    """`-k SUITE` with a suite's bare name selects that suite's cases only: a variant id may hold
    a suite's name too (cuda/fastest in every suite; -k's own substring match keeps those)."""
    name = config.getoption("keyword")
    if name not in suites.SUITES:
        return
    keep = [i for i in items if getattr(i, "callspec", None) is None
            or i.callspec.params["case"].suite == name]  # fmt: skip
    if dropped := [i for i in items if i not in keep]:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict) -> None:
    machine_info["gpu"] = device.device_info()
    options = {k: config.getoption(f"--bench-{k}") for k in ("sizes", "rounds")}
    machine_info["reduce_ladder"] = {"schema": BENCH_SCHEMA, **options}


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Without a GPU every benchmark skips and no timings are written: say so in one line."""
    ok, why = device.torch_gpu()
    if not ok:
        terminalreporter.write_line(
            f"reduce-ladder: the benchmarks need an NVIDIA GPU; none here ({why}), so every "
            "benchmark was skipped and no timings were written"
        )
