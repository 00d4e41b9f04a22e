"""compute-sanitizer run live on every default kernel of this GPU (memcheck, racecheck, synccheck,
initcheck), the seeds' bugs included: every fact of tests/test_stored_sanitize.py (which checks
the committed documents, without a GPU) is checked on what the tools find here, among them that
the seed 000 barrier inside a divergent if is not flagged (harness.studies.sanitize says why that
is held as a fact).

Skipped, with the reason, without a GPU or compute-sanitizer. The sanitizer runs once per module
(one process per tool, the seed bugs alone).
"""

from __future__ import annotations

import pytest

from harness.studies import profile_driver, sanitize
from tests.test_stored_sanitize import FACTS

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def doc() -> dict:
    try:
        return sanitize.sanitize(sanitize.select(include_wrong=True))
    except profile_driver.ToolUnavailable as e:
        pytest.skip(f"compute-sanitizer cannot run here: {e}")


@pytest.mark.parametrize("fact", sorted(FACTS))
def test_live_sanitize_holds_the_fact(doc, fact):
    FACTS[fact](doc)
