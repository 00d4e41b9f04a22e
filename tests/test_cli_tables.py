"""The terminal tables of `reduce-ladder list` and `inspect` on a 100-column terminal: every
line fits (counted in characters: rich draws with box-drawing characters), no catalogue id is
split across lines, long text sits in a legend under the table; --wide shows every column;
--format json is what it was (the records themselves)."""

from __future__ import annotations

import json
import re

import pytest

from harness.cli.main import main
from harness.compile import nvrtc
from harness.core import catalogue
from harness.report.markdown import KeyedText, short_dtype
from porting import census, sass

ID = re.compile(r"(?:cuda|triton|peer)/\S+")


def _printed(capsys, argv: list[str]) -> list[str]:
    assert main(argv) == 0
    return capsys.readouterr().out.splitlines()


def _rows(lines: list[str]) -> dict[str, list[str]]:
    """Table rows by the id in their first cell: each line whose first token is an id."""
    rows = {}
    for line in lines:
        cells = line.split()
        if cells and ID.fullmatch(cells[0]):
            rows[cells[0]] = cells
    return rows


def _columns(lines: list[str], header: str) -> dict[str, list[str]]:
    """Rows of a table whose columns are all left-aligned, cut where the header's words start
    (a cell may hold a space: "7 CUDA")."""
    head = next(line for line in lines if line.split() == header.split())
    starts = [m.start() for m in re.finditer(r"\S+", head)]
    bounds = list(zip(starts, [*starts[1:], None], strict=True))
    return {
        cells[0]: cells
        for cells in ([line[a:b].strip() for a, b in bounds] for line in lines)
        if ID.fullmatch(cells[0])
    }


def _fits(lines: list[str], width: int = 100) -> None:
    too_long = [line for line in lines if len(line) > width]
    assert not too_long, too_long


@pytest.fixture
def columns_100(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")


# -- list -----------------------------------------------------------------------------------------


def test_list_fits_100_columns_with_every_id_whole(columns_100, capsys):
    lines = _printed(capsys, ["list"])
    _fits(lines)
    # an id folded across lines would leave a prefix in the first cell and its rest below
    assert list(_rows(lines)) == [v.id for v in catalogue.ladder_order(catalogue.VARIANTS)]
    assert len(lines) < 100  # the 52-variant catalogue: a row each and the legend


def test_list_compact_cells_and_legend(columns_100, capsys):
    lines = _printed(capsys, ["list"])
    rows = _columns(lines, "id stage dtypes twin map wrong")
    legend = {
        m.group(1): m.group(2) for m in map(re.compile(r"\s+([A-Z]): (.+)").fullmatch, lines) if m
    }
    for v in catalogue.VARIANTS:
        _, stage, dtype_cell, twin, key, wrong = rows[v.id]
        assert stage == v.stage
        assert dtype_cell == ",".join(short_dtype(d) for d in v.dtypes)
        assert legend[key] == v.tile_mapping  # the mapping's words, under the table
        assert wrong == ("WRONG" if v.wrong else "")
        if v.twin:
            assert f"triton/{twin}" == v.twin
        elif v.twin_of:
            assert twin == f"{len(v.twin_of)} CUDA"
        elif v.counterpart:
            assert f"({v.counterpart.split('/')[1]})" == twin
        else:
            assert twin == "-"
    assert "seeds" not in lines[2] and "000:v0" not in "\n".join(lines)  # seeds: --wide only


def test_list_wide_shows_every_column(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "240")  # wide enough that nothing folds
    lines = _printed(capsys, ["list", "--wide"])
    text = "\n".join(lines)
    for header in ("seeds", "tile mapping", "wrong"):
        assert header in text
    rows = {
        line.split()[0]: line for line in lines if line.split() and ID.fullmatch(line.split()[0])
    }
    for v in catalogue.VARIANTS:
        line = rows[v.id]
        assert v.tile_mapping in line and ",".join(v.dtypes) in line
        assert all(s in line for s in v.seeds)
        assert ("WRONG demo" in line) == v.wrong


def test_list_dtype_filter_and_json_unchanged(columns_100, capsys):
    assert list(_rows(_printed(capsys, ["list", "--dtype", "float64"]))) == [
        "cuda/fastest",
        "triton/fastest",
        "cuda/reproducible",
        "triton/reproducible",
    ]
    out = _printed(capsys, ["list", "--format", "json"])
    records = json.loads("\n".join(out))
    assert records == [v.record() for v in catalogue.select(None, include_wrong=True)]
    assert _printed(capsys, ["list", "--format", "json", "--wide"]) == out  # --wide: tables only


def test_keyed_text_gives_one_key_per_text_in_order():
    keys = KeyedText()
    assert [keys.key(t) for t in ("a", "b", "a", "c")] == ["A", "B", "A", "C"]
    assert keys.legend() == ["A: a", "B: b", "C: c"]
    many = KeyedText()
    assert len({many.key(str(i)) for i in range(30)}) == 30  # past Z the keys stay distinct


# -- inspect (compiles with NVRTC and Triton on the CPU: two variants only) ----------------------


def _tools_ok() -> str | None:
    if not nvrtc.available():
        return "libnvrtc not installed (pip install -e '.[cuda13]')"
    try:
        sass.find_tool("cuobjdump")
    except sass.ToolMissing as e:
        return str(e)
    return None


needs_tools = pytest.mark.skipif(_tools_ok() is not None, reason=str(_tools_ok()))
PAIR = ["cuda/v0-gmem-interleaved", "triton/tile-256"]  # the longest ids of a stage-0 pair


@needs_tools
def test_inspect_compact_fits_and_agrees_with_json(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "100")
    lines = _printed(capsys, ["inspect", "--variants", *PAIR])
    _fits(lines)
    rows = _rows(lines)
    assert sorted(rows) == sorted(PAIR)
    doc = json.loads(
        "\n".join(_printed(capsys, ["inspect", "--variants", *PAIR, "--format", "json"]))
    )
    for r in map(census.Census.from_record, doc["census"]):
        _, stage, dtype, regs, smem, local, spill, bar, shfl, insns = rows[r.variant]
        assert (stage, dtype) == (r.stage, short_dtype(r.dtype))
        assert [int(x) for x in (regs, smem, local, spill, bar, shfl, insns)] == [
            r.registers,
            r.static_smem + r.dynamic_smem,
            r.stack_bytes + r.local_bytes,
            r.spill_bytes,
            r.counts.barriers,
            r.counts.shuffles,
            r.counts.instructions,
        ]
    assert "LDG" not in "\n".join(lines) and "--wide" in "\n".join(lines)

    monkeypatch.setenv("COLUMNS", "240")
    wide = "\n".join(_printed(capsys, ["inspect", "--variants", *PAIR, "--wide"]))
    for header in ("dyn", "REDUX", "LDS", "STS", "LDG 32/64/128", "ATOM", "div/rem", "loops"):
        assert header in wide
    assert "float32" in wide  # the dtype in full
