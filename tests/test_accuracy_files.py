"""The committed reproducible.json files (results/<device>/reproducible.json, written by
`reduce-ladder accuracy --reproducible-json`): every pair of devices gives the same bits for
every (variant, input) both have, and within one file the same values at another alignment give
the same bits. With fewer than two files the comparison skips, saying so."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest

from harness.report.records import REPRODUCIBLE_SCHEMA

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "results").glob("*/reproducible.json"))


def _results(path: Path) -> dict[str, dict[str, dict]]:
    doc = json.loads(path.read_text())
    assert doc["schema"] == REPRODUCIBLE_SCHEMA, path
    return doc["results"]


def _bits(entries: dict[str, dict]) -> dict[str, str]:
    return {key: e["bits"] for key, e in entries.items() if "bits" in e}


PAIRS = list(itertools.combinations(FILES, 2))


@pytest.mark.skipif(len(FILES) < 2, reason=f"{len(FILES)} reproducible.json committed; need two")
@pytest.mark.parametrize(
    ("a", "b"), PAIRS, ids=[f"{a.parent.name}-vs-{b.parent.name}" for a, b in PAIRS]
)
def test_two_devices_give_the_same_bits(a, b):
    ra, rb = _results(a), _results(b)
    compared = 0
    for variant in sorted(set(ra) & set(rb)):
        ba, bb = _bits(ra[variant]), _bits(rb[variant])
        differ = [k for k in sorted(set(ba) & set(bb)) if ba[k] != bb[k]]
        assert not differ, f"{variant}: {len(differ)} inputs differ, e.g. {differ[:3]}"
        compared += len(set(ba) & set(bb))
    assert compared, f"{a} and {b} share no (variant, input)"


@pytest.mark.skipif(not FILES, reason="no reproducible.json committed yet")
@pytest.mark.parametrize("path", FILES, ids=[p.parent.name for p in FILES])
def test_every_alignment_gives_the_same_bits_and_nothing_failed(path):
    for variant, entries in _results(path).items():
        assert not [k for k, e in entries.items() if "error" in e], variant
        by_input: dict[str, set[str]] = {}
        for key, bits in _bits(entries).items():
            by_input.setdefault(re.sub(r"/offset=\d+/", "/", key), set()).add(bits)
        differ = [k for k, seen in by_input.items() if len(seen) > 1]
        assert not differ, f"{variant}: alignment changes the bits of {differ[:3]}"
