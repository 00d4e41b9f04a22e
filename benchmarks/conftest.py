"""The pytest-benchmark suite: one benchmark per variant x dtype x n, every variant (peers
included) from the catalogue. Not part of the default test run (pyproject's testpaths is tests/).

    python3 -m pytest benchmarks/ --benchmark-enable --benchmark-json=bench.json \\
        --benchmark-timer=harness.core.timing.sync_perf_counter

Options (or environment variables, for scripts):
    --bench-sizes    REDUCE_BENCH_SIZES    log2 exponents or sizes: "10-28", "10,12,2^20", "1000"
                                           (default: even log2 n from 10 to 28, plus 25)
    --bench-dtypes   REDUCE_BENCH_DTYPES   default: every dtype some non-wrong variant supports
    --bench-variants REDUCE_BENCH_VARIANTS default: every non-wrong variant and the peers
    --bench-rounds   REDUCE_BENCH_ROUNDS   timed rounds per benchmark (default 20, 2 warm-up)

Benchmarks are grouped by "dtype n=2^k", so pytest-benchmark's table compares the variants at one
size (--benchmark-group-by=group, the default). Without a GPU every benchmark is skipped with the
reason.
"""

from __future__ import annotations

import os

import pytest

from harness.core import catalogue, device, dtypes
from harness.core.sizes import parse_size, size_label
from harness.report.records import BENCH_SCHEMA

DEFAULT_LOG2 = (10, 12, 14, 16, 18, 20, 22, 24, 25, 26, 28)


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("reduce-ladder benchmarks")
    g.addoption("--bench-sizes", default=None, help="log2 n list/ranges or sizes (10-28, 2^20)")
    g.addoption("--bench-dtypes", default=None, help="comma-separated dtypes")
    g.addoption("--bench-variants", default=None, help="comma-separated variant ids")
    g.addoption("--bench-rounds", default=None, type=int, help="timed rounds per benchmark")


def _opt(config: pytest.Config, name: str) -> str | None:
    v = config.getoption(f"--bench-{name}")
    return v if v is not None else os.environ.get(f"REDUCE_BENCH_{name.upper()}")


def parse_bench_sizes(text: str | None) -> list[int]:
    """'10-28' (every log2 in the range), '10,12,25' (log2 exponents: numbers below 64),
    '2^20', '1000', '2^20+3' (sizes)."""

    if not text:
        return [2**k for k in DEFAULT_LOG2]
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "-" in part and "^" not in part and "*" not in part:
            lo, hi = (int(s) for s in part.split("-"))
            out += [2**k for k in range(lo, hi + 1)]
        elif part.isdigit() and int(part) < 64:
            out.append(2 ** int(part))
        else:
            out.append(parse_size(part))
    return sorted(set(out))


def bench_config(config: pytest.Config) -> dict:
    sizes = parse_bench_sizes(_opt(config, "sizes"))
    ids = [s.strip() for s in (_opt(config, "variants") or "").split(",") if s.strip()]
    for i in ids:
        catalogue.get(i)  # a clear error for an unknown id
    # Default: every non-wrong variant and peer on device data, except seed 001's, whose subject
    # is the trip from host memory (measured end to end by `reduce-ladder host`).
    variants = (
        catalogue.select(ids) if ids else [v for v in catalogue.select() if v.family != "001"]
    )
    # Default dtypes: the ladder's (float32, int32); the fastest variants' other dtypes on request.
    all_dtypes = [d for d in ("float32", "int32") if any(d in v.dtypes for v in variants)]
    wanted = [s.strip() for s in (_opt(config, "dtypes") or "").split(",") if s.strip()]
    for d in wanted:
        if d not in dtypes.NAMES:
            raise pytest.UsageError(f"unknown dtype {d!r}; valid: {', '.join(dtypes.NAMES)}")
    rounds = int(_opt(config, "rounds") or 20)
    return {
        "sizes": sizes,
        "dtypes": wanted or all_dtypes,
        "variants": [v.id for v in catalogue.ladder_order(variants)],
        "rounds": rounds,
    }


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    cfg = bench_config(metafunc.config)
    cases, ids = [], []
    # dtype, then n, then variant: one input per (dtype, n) is shared by consecutive benchmarks.
    for dtype in cfg["dtypes"]:
        for n in cfg["sizes"]:
            for vid in cfg["variants"]:
                v = catalogue.get(vid)
                if dtype in v.dtypes and n <= v.max_n:
                    cases.append((vid, dtype, n))
                    ids.append(f"{dtype}-{size_label(n)}-{vid}")
    metafunc.parametrize("case", cases, ids=ids)


def pytest_benchmark_update_machine_info(config: pytest.Config, machine_info: dict) -> None:
    machine_info["gpu"] = device.device_info()
    machine_info["reduce_ladder"] = {"schema": BENCH_SCHEMA, **bench_config(config)}


@pytest.fixture(scope="session")
def bench_cfg(request: pytest.FixtureRequest) -> dict:
    return bench_config(request.config)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """Without a GPU every benchmark skips and no timings are written: say so in one line."""
    ok, why = device.torch_gpu()
    if not ok:
        terminalreporter.write_line(
            f"reduce-ladder: the benchmarks need an NVIDIA GPU; none here ({why}), so every "
            "benchmark was skipped and no timings were written"
        )
