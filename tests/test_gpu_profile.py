"""Each stage's lesson held to the hardware's counters (Nsight Compute), measured live on this GPU.

Skipped, with the reason, without a GPU, without ncu, or when the counters cannot be read. ncu
replays every kernel once per metric pass, so a handful of variants is profiled once per module
(one ncu process per dtype / size) and every fact of tests/test_stored_profile.py (which checks
the committed documents, without a GPU) is checked on that fresh document.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from harness.core import catalogue
from harness.report import documents
from harness.studies import profile as profile_study
from harness.studies import profile_driver
from tests.test_stored_profile import FACTS, FASTEST, FLOAT32, INT32_004, N_BIG, N

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def doc() -> dict:
    raw = Path(tempfile.mkdtemp(prefix="profile-raw-"))
    runs = [(FLOAT32, N, "float32"), (INT32_004, N, "int32"), (FASTEST, N_BIG, "float32")]
    try:
        docs = [
            profile_study.profile([catalogue.get(i) for i in ids], [n], dtype, raw)
            for ids, n, dtype in runs
        ]
    except profile_driver.ToolUnavailable as e:
        pytest.skip(f"Nsight Compute cannot profile here: {e}")
    return documents.merge_documents(docs)


@pytest.mark.parametrize("fact", sorted(FACTS))
def test_live_profile_holds_the_fact(doc, fact):
    FACTS[fact](doc)
