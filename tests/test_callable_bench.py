"""The per-call benchmark's usage checks and its derived figures, without a GPU (the timed run is
benchmarks/gpu_session.sh's `callable` step)."""

import pytest

from harness.cli.main import main
from harness.core import catalogue, device
from harness.report.records import Row
from harness.studies import call_entries


def _device_time(vid: str, us: float) -> Row:
    """A run's device time of vid at float32 2^10 (a ladder suite's "total" row), microseconds."""
    return Row(device="GPU", suite="ladder", variant=vid, config="", dtype="float32", shape=1024,
               metric="total", median_ms=us / 1e3, check="ok")  # fmt: skip


def callable_bench(argv: list[str]) -> int:
    """What `python -m harness.studies.callable_bench ARGV` runs."""
    return main(["bench", "callable", *argv])


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "x.json", "--dtypes", "float8"],
        ["--json", "x.json", "--sizes", "2^"],
        ["--json", "x.json", "--variants", "api cuda/nope"],
        ["--json", "x.json", "--reps", "0"],
        ["--json", "x.json", "--rounds", "0"],
    ],
)
def test_usage_errors_exit_2_before_any_work(argv, tmp_path):
    assert callable_bench(argv) == 2


@pytest.mark.skipif(device.gpu_available(), reason="checks the no-GPU message")
def test_without_a_gpu_it_says_so(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert callable_bench(["--json", str(out), "--sizes", "2^10"]) == 2
    assert "needs an NVIDIA GPU" in capsys.readouterr().err and not out.exists()


def test_the_old_module_name_still_runs():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "harness.studies.callable_bench", "--list",
                           "--sizes", "2^10", "--dtypes", "int32", "--variants", "torch.sum"],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0 and done.stdout.split() == ["callable-int32-2^10-torch.sum"]


def _row(entry, us, dtype="int32", n=1024):
    return Row("GPU", "callable", entry, "", dtype, n, "call", None if us is None else us / 1e3)


def test_overhead_is_api_minus_its_cached_launch():
    rows = [
        _row("api cuda/fastest", 9.5),
        _row("launch cuda/fastest cupy-driver", 8.0),  # the mode the cache uses
        _row("api triton/fastest", None),  # not measured: no line
    ]
    assert call_entries.overheads(rows) == ["cuda/fastest int32 2^10: +1.50 us"]


def test_table_gives_ratios_to_torch_sum():
    from harness.report import tables

    rows = [
        _row("torch.sum", 10.0, "float32", 4096),
        _row("api cuda/fastest", 8.0, "float32", 4096),
    ]
    text = tables.suite_table(rows, "float32")
    assert "| api cuda/fastest | 8.00 (1.25x) |" in text  # two entries, one size: one per line


def test_every_variant_reduce_sum_takes_is_an_entry_three_ways():
    ids = set(call_entries.entries())
    assert "cuda/reproducible" in call_entries.api_variants()
    for v in call_entries.api_variants():
        assert {f"api {v}", f"api {v} out=", f"op {v}"} <= ids
    assert {"torch.sum", "torch.sum out=", "cupy.sum-cub", "torch.compile sum"} <= ids


def test_native_launches_are_named_in_the_entry_ids(monkeypatch):
    from harness.launch import rebind

    monkeypatch.setattr(rebind, "DEFAULT_MODE", {"cuda": "native", "triton": "native"})
    vids = ["cuda/fastest", "cuda/reproducible", "cuda/v8-shuffle-chunked", "cuda/004-gmem"]
    ids = set(call_entries.entries(vids))
    for native in (
        "cuda/fastest native",
        "cuda/reproducible native",
        "cuda/v8-shuffle-chunked native",
    ):
        assert {f"api {native}", f"api {native} out=", f"op {native}"} <= ids
    assert {"api cuda/004-gmem", "op cuda/004-gmem"} <= ids  # in place: launched from Python


def test_a_variant_named_under_native_launches_selects_its_native_entries(monkeypatch):
    # REDUCE_LADDER_NATIVE=1 `bench callable --variants V`: the cases are the ids entries() makes
    from harness.launch import rebind
    from harness.studies import suites

    monkeypatch.setattr(rebind, "DEFAULT_MODE", {"cuda": "native", "triton": "native"})
    found = suites.cases("callable", variants=["cuda/fastest", "torch.sum"], sizes=[1024])
    named = {c.variant for c in found}
    assert named == {"api cuda/fastest native", "api cuda/fastest native out=",
                     "op cuda/fastest native", "torch.sum"}  # fmt: skip
    assert named <= set(call_entries.entries(["cuda/fastest"]))


def test_a_folder_for_json_is_a_usage_error_before_any_work(tmp_path, capsys):
    assert callable_bench(["--json", str(tmp_path), "--sizes", "2^10"]) == 2
    assert "is a folder" in capsys.readouterr().err


def _call_rows(**us) -> list[dict]:
    """The callable suite's rows at float32, n = 2^10 (us None: an entry that raised)."""
    out = []
    for entry, t in us.items():
        row = Row("GPU", "callable", entry, entry.split(" ")[0], "float32", 1024, "call",
                  None if t is None else t / 1e3, check="ok" if t else "error")  # fmt: skip
        out.append(row.to_json())
    return out


def _callable_doc(tmp_path):
    import json

    from harness.report import records

    rows = _call_rows(**{"torch.sum": 10.0, "api cuda/fastest": 8.0, "cupy.sum-cub": None})
    doc = {"schema": records.ROWS_SCHEMA, "suite": "callable", "device": {"name": "GPU"},
           "rows": rows}  # fmt: skip
    path = tmp_path / "callable.json"
    path.write_text(json.dumps(doc))
    return path


def test_callable_page_ratio_to_torch_sum_and_join_with_device_time(tmp_path):
    from harness.report import tables

    doc = tables.load_callable(_callable_doc(tmp_path))
    md = tables.callable_markdown(doc)
    # cupy.sum-cub has no time, so no line
    assert "| torch.sum | 10.00 (1.00x) |\n| api cuda/fastest | 8.00 (1.25x) |\n" in md

    table = tables.beside_device_time(
        [_device_time("cuda/fastest", 4.0), _device_time("peer/torch.sum", 5.0)], doc
    )[-1]
    assert "| float32 | 2^10 | cuda/fastest | 4.0 | 1.25x | 8.0 | 1.25x |" in table
    assert "| float32 | 2^10 | torch.sum | 5.0 | 1.00x | 10.0 | 1.00x |" in table
    assert tables.beside_device_time([], doc) == []


def test_several_per_call_documents_read_as_one_table(tmp_path):
    """A second run (e.g. REDUCE_LADDER_NATIVE=1) adds the entries the first lacks, beside them;
    an entry both have keeps the first file's time; an entry's ratio is to torch.sum of its own
    run (the runs are separate spells of the host)."""
    import json

    from harness.report import tables

    first = _callable_doc(tmp_path)
    second = tmp_path / "native.json"
    doc = json.loads(first.read_text())
    doc["rows"] = _call_rows(**{"api cuda/fastest native": 5.0, "torch.sum": 99.0})
    second.write_text(json.dumps(doc))
    merged = tables.per_call(tables.load_callable(first, second))
    assert merged[("api cuda/fastest native", "float32", 1024)] == pytest.approx(5.0)
    assert merged[("torch.sum", "float32", 1024)] == pytest.approx(10.0)  # the first file's
    page = tables.callable_markdown(tables.load_callable(first, second))
    assert "| 5.00 (19.80x) |" in page and "| 8.00 (1.25x) |" in page  # 99 / 5, 10 / 8


def test_report_refuses_a_non_callable_document_before_writing(tmp_path):
    from harness.cli.main import main

    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "something else"}')
    out = tmp_path / "rep"
    code = main(["report", "results/nvidia-h100/ladder-float32.json", "--out", str(out),
                 "--callable", str(bad)])  # fmt: skip
    assert code == 2 and not out.exists()


def test_a_table_of_more_entries_than_sizes_puts_an_entry_on_each_line():
    from harness.report import tables

    rows = [_row("torch.sum", 10.0, "float32", 4096)] + [
        _row(f"api cuda/v{i}", 20.0, "float32", 4096) for i in range(3)
    ]
    text = tables.suite_table(rows, "float32")
    assert text.splitlines()[0] == "| entry | 2^12 |"
    assert "| api cuda/v2 | 20.00 (0.50x) |" in text


def test_a_table_of_more_sizes_than_entries_keeps_a_size_on_each_line():
    from harness.report import tables

    rows = [_row(e, t, "float32", 2**k) for k in (10, 12, 14)
            for e, t in (("torch.sum", 10.0), ("api cuda/fastest", 5.0))]  # fmt: skip
    text = tables.suite_table(rows, "float32")
    assert text.splitlines()[0] == "| n | torch.sum | api cuda/fastest |"
    assert "| 2^14 | 10.00 (1.00x) | 5.00 (2.00x) |" in text


def test_callable_targets_say_met_or_missed_with_the_worst_case(tmp_path):
    """The per-call targets on made-up times: the fastest pair against torch.sum (>= 1.00x), the
    reproducible pair (>= 0.90x), and another variant against its device time plus the CUDA
    fastest's overhead (per call minus device time) and 2 us."""
    import json

    from harness.report import tables

    path = _callable_doc(tmp_path)  # torch.sum 10 us, api cuda/fastest 8 us
    doc = json.loads(path.read_text())
    doc["rows"] += _call_rows(**{"op cuda/fastest": 12.5, "api cuda/reproducible": 11.0,
                                 "api cuda/v3-sequential": 15.0})  # fmt: skip
    path.write_text(json.dumps(doc))
    calls = tables.load_callable(path)

    # cuda/fastest's overhead: 8 - 5 = 3 us; v3: 15 - 9 - 3 = +3 us over, past the 2 us slack
    got = tables.callable_targets(
        calls, [_device_time("cuda/fastest", 5.0), _device_time("cuda/v3-sequential", 9.0)]
    )
    assert got[0] == ("- the fastest pair >= 1.00x torch.sum: missed on 1 of 2 (entry: misses, "
                      "worst): op cuda/fastest 1, worst 0.80x (float32 2^10)")  # fmt: skip
    assert got[1] == "- the reproducible pair >= 0.90x torch.sum: met on all 1"  # 10 / 11 = 0.91
    assert got[2] == ("- every other variant's call within 2 us of its device time plus its "
                      "backend's fastest call overhead: missed on 1 of 1; the most over: "
                      "api cuda/v3-sequential float32 2^10, +3.0 us")  # fmt: skip
    # 1 us faster is within the slack: met
    met = tables.callable_targets(
        calls, [_device_time("cuda/fastest", 5.0), _device_time("cuda/v3-sequential", 10.5)]
    )
    assert (
        met[2].startswith("- every other variant's call within 2 us") and "met on all 1" in met[2]
    )
    assert "## Targets" in tables.callable_markdown(calls, [_device_time("cuda/fastest", 5.0)])
    # natively launched: against the native fastest's overhead, in a verdict of its own
    doc["rows"] += _call_rows(
        **{"api cuda/fastest native": 6.0, "api cuda/v3-sequential native": 12.5}
    )
    path.write_text(json.dumps(doc))
    got = tables.callable_targets(
        tables.load_callable(path),
        [_device_time("cuda/fastest", 5.0), _device_time("cuda/v3-sequential", 9.0)],
    )  # native overhead 6 - 5 = 1 us: 12.5 - 9 - 1 = +2.5 us
    assert got[-1] == ("- every other variant's call (native launcher) within 2 us of its device "
                       "time plus its backend's fastest call overhead: missed on 1 of 1; the most "
                       "over: api cuda/v3-sequential native float32 2^10, +2.5 us")  # fmt: skip


def test_rounds_measure_one_input_s_cases_in_turn_and_merge_their_medians(monkeypatch):
    """suites.run(rounds=3): the cases of one (dtype, n) measured in turn, three times over, then
    the next input's; each case's row the median of its rounds' medians, p10..p90 their spread; a
    round that failed is the row."""
    from dataclasses import replace

    from harness.studies import suites

    order, times = [], {"a": [3.0, 1.0, 2.0], "b": [5.0, 4.0, 6.0], "c": [1.0, 1.0, 1.0]}

    def measure(case, reps, timed):
        order.append((case.variant, case.n))
        ms = times[case.variant].pop(0) if case.n == 1024 else 1.0
        bad = case.variant == "c" and len(times["c"]) == 1  # c's second round fails
        return [Row("GPU", "fake", case.variant, "", "float32", case.n, "call", None if bad else ms,
                    min_ms=ms, reps=5, check="error" if bad else "ok")]  # fmt: skip

    fake = replace(suites.get("callable"), name="fake", measure=measure)
    monkeypatch.setitem(suites.SUITES, "fake", fake)
    found = [suites.Case("fake", v, "float32", n) for n in (1024, 4096) for v in "abc"]
    rows = suites.run(found, rounds=3)
    assert order == [(v, n) for n in (1024, 4096) for _ in range(3) for v in "abc"]
    a, b, c = rows[:3]
    assert (a.median_ms, a.min_ms, a.reps, a.info["rounds"]) == (2.0, 1.0, 3, 3)
    assert a.p10_ms < 2.0 < a.p90_ms and (b.median_ms, b.min_ms) == (5.0, 4.0)
    assert c.check == "error" and c.median_ms is None
    assert len(rows) == 6 and suites.run(found[3:4], rounds=1)[0].info == {}
    # a record suite's failed round is one "check" row where the others have two: it is the row
    ok = [
        Row("GPU", "fake", "v", "", "float32", 1, m, 1.0, check="ok")
        for m in ("first_pass", "total")
    ]
    bad = [Row("GPU", "fake", "v", "", "float32", 1, "check", None, check="error")]
    assert suites.merge([ok, bad, ok]) == bad


def test_a_page_of_rounds_says_how_far_apart_they_were():
    from harness.report import tables

    def row(entry, med, p10, p90, rounds=3):
        info = {"rounds": rounds} if rounds else {}
        return Row("GPU", "callable", entry, "api", "float32", 1024, "call", med / 1e3,
                   p10_ms=p10 / 1e3, p90_ms=p90 / 1e3, info=info)  # fmt: skip

    rows = [row("torch.sum", 10, 9, 11), row("api a/b", 10, 10, 10), row("api c/d", 10, 5, 25)]
    got = tables._spread(rows)
    assert got[1] == ("3 cells are the median of 3 rounds measured in turn; their rounds' p10..p90 "
                      "spread: 20% of the median in the middle cell, at most 200% (api c/d "
                      "float32 2^10).")  # fmt: skip
    assert tables._spread([row("torch.sum", 10, 9, 11, rounds=None)]) == []
    assert "at most 0%" in tables._spread([row("a", 10, 10, 10), row("b", 10, 10, 10)])[1]  # ties


def test_another_variant_is_held_to_the_fastest_overhead_of_its_own_run(tmp_path):
    """Two per-call files, the second a slower run of the host: its v3 call is compared with its
    own run's cuda/fastest (14 - 5 = 9 us of overhead), not the first file's (8 - 5 = 3 us)."""
    import json

    from harness.report import records, tables

    first = _callable_doc(tmp_path)  # api cuda/fastest 8 us
    second = tmp_path / "slow.json"
    rows = _call_rows(**{"api cuda/fastest": 14.0, "api cuda/v3-sequential": 20.0})
    second.write_text(json.dumps({"schema": records.ROWS_SCHEMA, "suite": "callable",
                                  "device": {"name": "GPU"}, "rows": rows}))  # fmt: skip

    got = tables.callable_targets(
        tables.load_callable(first, second),
        [_device_time("cuda/fastest", 5.0), _device_time("cuda/v3-sequential", 10.0)],
    )  # 20 - 10 - 9 = +1 us: met (against the first run's overhead it would be +7 us, missed)
    assert got[-1].endswith(
        "met on all 1; the most over: api cuda/v3-sequential float32 2^10, +1.0 us"
    )


def test_a_call_whose_run_lacks_the_fastest_entry_is_counted_not_held_to_another_run(tmp_path):
    import json

    from harness.report import records, tables

    first = _callable_doc(tmp_path)  # api cuda/fastest 8 us
    native = tmp_path / "native.json"  # a run with the native fastest only beside v3's Python call
    rows = _call_rows(**{"api cuda/fastest native": 6.0, "api cuda/v3-sequential": 20.0})
    native.write_text(json.dumps({"schema": records.ROWS_SCHEMA, "suite": "callable",
                                  "device": {"name": "GPU"}, "rows": rows}))  # fmt: skip
    recs = [_device_time(v, 5.0) for v in ("cuda/fastest", "cuda/v3-sequential")]
    got = tables.callable_targets(tables.load_callable(first, native), recs)
    assert not any(line.startswith("- every other") for line in got)
    assert got[-1].startswith("- not held to that target: 1 calls whose run has no call")


def test_per_call_over_device_time_is_a_median_per_family_and_entry(tmp_path):
    """callable.md's section: per call minus the variant's device time, per family and backend
    (down) and entry (across), the median over the cells up to 2^18 and how many."""
    import json

    from harness.report import tables

    path = _callable_doc(tmp_path)  # torch.sum 10 us, api cuda/fastest 8 us (float32 2^10)
    doc = json.loads(path.read_text())
    doc["rows"] += _call_rows(**{"api cuda/v3-sequential": 15.0, "op cuda/v3-sequential": 20.0})
    path.write_text(json.dumps(doc))

    calls = tables.load_callable(path)
    got = tables.overhead_section(
        calls, [_device_time("cuda/fastest", 5.0), _device_time("cuda/v3-sequential", 9.0)]
    )
    table = got[-1].splitlines()
    assert table[0] == "| family | api | op |"
    assert table[2:] == [
        "| fastest (cuda) | 3.0 (1) | - |",
        "| ladder (cuda) | 6.0 (1) | 11.0 (1) |",
    ]
    assert tables.overhead_section(calls, []) == []  # no device time: no section


def test_an_entry_is_checked_on_its_first_and_last_view_not_stamped_ok():
    """Every per-call row's check is the entry's own sums: right on exact data ("ok"); one off,
    or the first view's sum for every view (a launch that kept its first pointer), is "wrong";
    the op's dispatch alone sums nothing (""). int32 modulo 2^32 (torch.sum returns int64)."""
    import torch

    from harness.check import verify
    from harness.studies import call_entries

    buf = verify.exact_input(3000, "float32", "cpu")
    vs = [buf[:1000], buf[1000:2000], buf[2000:]]
    vs[-1].copy_(vs[0])
    vs[-1][0] *= -1  # the last view's sum differs from the first's (by 2 to 16), by construction
    assert call_entries.checked("torch.sum", torch.sum, vs) == "ok"
    assert call_entries.checked("torch.sum", lambda x: torch.sum(x) + 1, vs) == "wrong"
    stale = torch.sum(vs[0])
    assert call_entries.checked("torch.sum", lambda x: stale, vs) == "wrong"
    assert call_entries.checked("op noop (dispatch)", lambda x: stale, vs) == ""
    ints = torch.full((3,), 2**31 - 1, dtype=torch.int32)  # a sum past 2^31: int32 wraps
    wrapped = lambda x: torch.sum(x, dtype=torch.int32)  # noqa: E731
    assert wrapped(ints).item() != torch.sum(ints).item()  # the wrapped and the int64 sum
    for fn in (wrapped, torch.sum):
        assert call_entries.checked("torch.sum", fn, [ints]) == "ok"
    assert call_entries.checked("torch.sum", lambda x: torch.sum(x) + 2, [ints]) == "wrong"
    halves = verify.exact_input(1000, "bfloat16", "cpu")  # torch.sum's bfloat16: rounded once
    assert call_entries.checked("torch.sum", torch.sum, [halves]) == "ok"


def test_an_in_place_variants_call_is_held_to_its_kernels_plus_the_copy_of_x(tmp_path):
    """cuda/004-gmem reduces in place: every call first copies x into its scratch (the caller's
    data is never written), which its timed kernels leave out. Its call (40 us) against its
    kernels (10 us) and cuda/fastest's overhead (8 - 5 = 3 us) is +27 us over; with the run's
    copy (25 us) beside it, +2 us: met. The same call of a variant that does not copy stays
    over."""
    import json

    from harness.report import records, tables

    path = tmp_path / "inplace.json"
    rows = _call_rows(**{"api cuda/fastest": 8.0, "api cuda/004-gmem": 40.0,
                         "api cuda/004-smem": 40.0})  # fmt: skip
    path.write_text(json.dumps({"schema": records.ROWS_SCHEMA, "suite": "callable",
                                "device": {"name": "GPU"}, "rows": rows}))  # fmt: skip
    device = [_device_time(v, t) for v, t in (("cuda/fastest", 5.0), ("cuda/004-gmem", 10.0),
                                               ("cuda/004-smem", 10.0))]  # fmt: skip
    without = tables.callable_targets(tables.load_callable(path), device)
    assert without[-1].endswith("missed on 2 of 2; the most over: api cuda/004-gmem float32 "
                                "2^10, +27.0 us")  # fmt: skip
    copy = _device_time(catalogue.COPY_ID, 25.0)
    got = tables.callable_targets(tables.load_callable(path), [*device, copy])
    assert got[-1].endswith("missed on 1 of 2; the most over: api cuda/004-smem float32 2^10, "
                            "+27.0 us")  # fmt: skip
