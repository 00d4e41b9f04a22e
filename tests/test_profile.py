"""CPU tests of the profile / sanitize machinery (issue 17): the metric table, the parsers on small
hand-made inputs in the tools' documented formats, attribution, the seed tables on a SYNTHETIC
profile document, and the commands' one-line exit 2 without the tools.

The inputs below are made by hand after the formats Nsight Compute and compute-sanitizer print;
recorded outputs from the GPU run are to be added as fixtures beside them (tests/data/).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from harness.cli import main as reduce_ladder
from harness.core import catalogue, device, records_beyond
from harness.studies import profile as profile_study
from harness.studies import profile_driver, sanitize

# --------------------------------------------------------------------------------------------
# the metric table

_NAME = re.compile(r"^(gpu|dram|l1tex|lts|smsp|sm|launch)__[a-z0-9_]+(\.[a-z_]+)*$")


def test_metric_table_is_well_formed():
    keys = [m.key for m in profile_study.ALL_METRICS]
    names = [m.name for m in profile_study.ALL_METRICS]
    assert len(set(keys)) == len(keys) and len(set(names)) == len(names)
    for m in profile_study.ALL_METRICS:
        assert _NAME.match(m.name), m.name
        assert m.aggregate in ("sum", "time", "inst", "max"), m.key  # the metric table's aggregates
        assert len(m.what) > 20 and m.what.endswith("."), m.key
    # every counter a lesson of the issue is held to is in the table
    lessons = {
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "smsp__thread_inst_executed_pred_on.sum",
        "smsp__inst_executed.sum",
        "smsp__inst_executed_op_shared_ld.sum",
        "dram__throughput.avg.pct_of_peak_sustained_elapsed",
        "smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio",
        "smsp__average_warp_latency_per_inst_issued.ratio",
    }
    assert lessons <= set(names)
    assert len(profile_study.STALL_METRICS) == len(profile_study.STALL_REASONS)


# --------------------------------------------------------------------------------------------
# ncu CSV

V3 = "void reduce_v3_sequential<float, 256>(const float *, float *, unsigned int)"
RAW = f"""==PROF== Connected to process 4242 (python)
driver: cuda/v3-sequential float32 n=16777216: ok
==PROF== Profiling "reduce_v3_sequential" - 0: 0%....50%....100% - 9 passes
"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",\
"Grid Size","Device","CC","dram__bytes_read.sum","gpu__time_duration.sum",\
"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum","l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",\
"smsp__inst_executed.sum","smsp__thread_inst_executed_pred_on.sum"
"","","","","","","","","","","","byte","ns","sector","request","inst","inst"
"0","4242","python","h","{V3}",\
"1","7","(256, 1, 1)","(65536, 1, 1)","0","9.0","65,536,000","52,500","2,097,152","524,288",\
"10,000","300,000"
"1","4242","python","h","{V3}",\
"1","7","(256, 1, 1)","(256, 1, 1)","0","9.0","n/a","3,200","8,192","2,048","100","1,600"
==PROF== Disconnected from process 4242
"""


def test_parse_raw_page_with_base_units_row_and_thousands_separators():
    rows = profile_study.parse_csv(RAW)
    assert [r.id for r in rows] == [0, 1]
    a, b = rows
    assert a.name.startswith("void reduce_v3_sequential<float, 256>")
    assert a.info["Grid Size"] == "(65536, 1, 1)"
    assert a.values["dram__bytes_read.sum"] == 65_536_000.0  # --print-units base: bytes
    assert a.values["gpu__time_duration.sum"] == 52_500.0  # and ns
    assert a.values["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 2_097_152
    assert b.values["dram__bytes_read.sum"] is None  # n/a
    k = profile_study.keyed(a)
    d = profile_study.derive(k)
    assert d["gld_sectors_per_request"] == 4.0
    assert d["threads_per_inst"] == 30.0
    assert d["gld_gbs"] == pytest.approx(2_097_152 * 32 / 52_500)


def test_parse_rejects_text_without_a_header():
    with pytest.raises(profile_study.NcuCsvError):
        profile_study.parse_csv("==ERROR== ERR_NVGPUCTRPERM - no permission\n")


def test_numbers():
    assert profile_study.parse_number("6,553,600") == 6553600
    assert profile_study.parse_number("304.02") == 304.02
    assert profile_study.parse_number("n/a") is None and profile_study.parse_number("") is None


def test_stall_shares_and_aggregation_over_passes():
    k1 = {"duration_ns": 300.0, "inst_executed": 900.0, "dram_throughput_pct": 90.0}
    k1 |= {"warp_cycles_per_issue": 10.0, "stall_barrier": 4.0, "stall_long_scoreboard": 5.0}
    k1 |= {"registers": 16.0, "gst_sectors": 100.0}
    k2 = {"duration_ns": 100.0, "inst_executed": 100.0, "dram_throughput_pct": 10.0}
    k2 |= {"warp_cycles_per_issue": 20.0, "stall_barrier": 2.0, "stall_long_scoreboard": 0.0}
    k2 |= {"registers": 32.0, "gst_sectors": 1.0}
    total = profile_study.aggregate([k1, k2])
    assert total["duration_ns"] == 400.0 and total["gst_sectors"] == 101.0
    assert total["registers"] == 32.0
    assert total["dram_throughput_pct"] == pytest.approx((90 * 300 + 10 * 100) / 400)
    assert total["stall_barrier"] == pytest.approx((4 * 900 + 2 * 100) / 1000)
    d = profile_study.derive(k1)
    assert d["stall_share"]["barrier"] == pytest.approx(0.4)
    assert d["top_stalls"][0] == ["long_scoreboard", pytest.approx(0.5)]


# --------------------------------------------------------------------------------------------
# attribution of ncu's rows to the driver's variants


def _rows(k: int) -> list[profile_study.KernelRow]:
    return [profile_study.KernelRow(i, f"kernel{i}") for i in range(k)]


def test_attribution_by_launch_counts_with_a_library_call_last():
    manifest = [
        {"variant": "cuda/v3-sequential", "launches": 3, "range": "rl.cuda.v3-sequential"},
        {"variant": "triton/tile-256", "launches": 3, "range": "rl.triton.tile-256"},
        {"variant": "peer/torch.sum", "launches": None, "range": "rl.peer.torch.sum"},
    ]
    ranges = [
        m["range"] for m, count in zip(manifest, (3, 3, 2), strict=True) for _ in range(count)
    ]
    renamed = [profile_study.KernelRow(i, r) for i, r in enumerate(ranges)]
    out, check = profile_study.attribute(_rows(8), manifest, renamed)
    assert [len(a.rows) for a in out] == [3, 3, 2] and check == "agrees"
    renamed[4].name = "rl.cuda.v3-sequential"
    assert profile_study.attribute(_rows(8), manifest, renamed)[1].startswith("DIFFERS")
    assert profile_study.attribute(_rows(8), manifest, None)[1].startswith("unavailable")
    with pytest.raises(profile_study.ProfileError, match="fewer"):
        profile_study.attribute(_rows(5), manifest)
    with pytest.raises(profile_study.ProfileError):
        profile_study.attribute(_rows(7), manifest[:2])  # a row nobody launched


def test_ncu_command_filters_by_one_nvtx_range_per_variant(tmp_path):
    vs = [catalogue.get("cuda/v3-sequential"), catalogue.get("peer/cupy.sum-cub")]
    job = profile_study.plan_jobs(vs, [2**24], "float32")[0]
    cmd = profile_study.ncu_flags(job, tmp_path)
    assert cmd[:3] == ["--clock-control", "none", "--nvtx"]
    includes = [cmd[i + 1] for i, a in enumerate(cmd) if a == "--nvtx-include"]
    assert includes == ["rl.cuda.v3-sequential/", "rl.peer.cupy.sum-cub/"]
    names = [profile_driver.range_name(v.id) for v in catalogue.VARIANTS]
    assert len(set(names)) == len(names) and not any("/" in n for n in names)


def test_jobs_put_each_library_call_last_in_its_own_process():
    jobs = profile_study.plan_jobs(profile_study.default_variants(), [2**24], "float32")
    for job in jobs:
        peers = [i for i, v in enumerate(job.variants) if v.backend == "peer"]
        assert peers in ([], [len(job.variants) - 1])
    assert sum(len(j.variants) for j in jobs) == len(profile_study.default_variants())


# --------------------------------------------------------------------------------------------
# compute-sanitizer logs

MEMCHECK = """========= COMPUTE-SANITIZER
driver: cuda/demo-004-gmem-early-return int32 n=4099: wrong sum (a demonstration)
========= Invalid __global__ read of size 4 bytes
=========     at _Z32seed004_reduce_gmem_early_returnIiLj256EEvPT_S1_j+0x1a0 in seed_bugs.cu:70
=========     by thread (2,0,0) in block (16,0,0)
=========     Address 0x7f0000104010 is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2ef045] in libcuda.so.1
=========
========= Invalid __global__ read of size 4 bytes
=========     at _Z32seed004_reduce_gmem_early_returnIiLj256EEvPT_S1_j+0x1f0 in seed_bugs.cu:73
=========     by thread (1,0,0) in block (16,0,0)
=========
========= ERROR SUMMARY: 2 errors
"""

RACECHECK = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at _Z1kILi1EEvv+0x3f0 in warp_unroll.cu:55
=========     and Read access at _Z1kILi1EEvv+0x410 in warp_unroll.cu:55 [248 hazards]
=========
========= Warning: Race reported between Read access at adjacent_tiles_kernel+0x80 in tiles.py:9
=========     and Write access at adjacent_tiles_kernel+0x90 in tiles.py:9 [1,024 hazards]
=========
========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)
"""


def test_memcheck_records_per_kernel_and_summary():
    log = sanitize.parse_log(MEMCHECK)
    assert log.complete and log.errors == 2
    ((kernel, f),) = log.kernels.items()
    assert kernel == "_Z32seed004_reduce_gmem_early_returnIiLj256EEvPT_S1_j"
    assert f["records"] == 2 and f["kinds"] == {"Invalid __global__ read of size N bytes": 2}


def test_racecheck_summary_hazards_and_classes():
    log = sanitize.parse_log(RACECHECK)
    assert (log.hazards_displayed, log.hazard_errors, log.hazard_warnings) == (2, 1, 1)
    counts = ("records", "errors", "warnings", "hazards")
    k = log.kernels["_Z1kILi1EEvv"]
    assert tuple(k[c] for c in counts) == (1, 1, 0, 248)
    t = log.kernels["adjacent_tiles_kernel"]
    assert tuple(t[c] for c in counts) == (1, 0, 1, 1024)


def test_synccheck_record_and_a_clean_run_and_a_killed_run():
    text = (
        "========= Barrier error detected. Divergent thread(s) in warp\n"
        "=========     at _Z26seed000_reduce1_sync_in_ifIfLj256EEvPT_S1_j+0xa0 in seed_bugs.cu:41\n"
        "=========     by thread (1,0,0) in block (0,0,0)\n"
        "========= ERROR SUMMARY: 1 error\n"
    )
    log = sanitize.parse_log(text)
    assert log.errors == 1 and log.complete
    (f,) = log.kernels.values()
    assert f["kinds"] == {"Barrier error detected. Divergent thread(s) in warp": 1}
    clean = sanitize.parse_log("========= COMPUTE-SANITIZER\nok\n========= ERROR SUMMARY: 0 errors")
    assert clean.complete and clean.errors == 0 and not clean.kernels
    assert not sanitize.parse_log("========= COMPUTE-SANITIZER\n[killed after 600 s]").complete


# --------------------------------------------------------------------------------------------
# the sanitize study's selection and verdicts (no GPU)


def test_sanitize_selection_keeps_demonstrations_out_of_the_default():
    default = sanitize.select()
    assert default and not any(v.wrong for v in default)
    assert all(v.backend in ("cuda", "triton") for v in default)
    assert set(catalogue.AXIS_VARIANTS) <= set(default)  # every axis kernel too
    full = {v.id for v in sanitize.select(include_wrong=True)}
    assert set(sanitize.DEMO_TOOL) <= full and "cuda/v5-wrong-nosync" in full
    named = [profile_driver.lookup("cuda/demo-000-v1-sync-in-if")]
    batches = sanitize.plan_batches(named, sanitize.DEFAULT_SIZES)
    assert [b.sizes for b in batches] == [(2**12,)]  # whole tiles: the seed has no bounds check
    assert all(v in catalogue.BY_ID for v in sanitize.VOLATILE_SHARED | sanitize.VOLATILE_GLOBAL)


def test_verdicts():
    clean = {t: {"records": 0, "errors": 0, "warnings": 0, "hazards": 0} for t in sanitize.TOOLS}
    assert sanitize.verdict("cuda/v3-sequential", clean) == "clean"
    race = {**clean, "racecheck": {**clean["racecheck"], "records": 2, "hazards": 64}}
    assert "volatile" in sanitize.verdict("cuda/v5-volatile", race)
    assert "UNEXPECTED" in sanitize.verdict("cuda/v3-sequential", race)
    mem = {**clean, "memcheck": {**clean["memcheck"], "records": 1, "errors": 1}}
    assert sanitize.verdict("cuda/v3-sequential", mem) == "FLAGGED by memcheck"
    crashed = {**clean, "initcheck": {**clean["initcheck"], "run_failed": "float32 n=1000: x"}}
    assert sanitize.verdict("cuda/v3-sequential", crashed).startswith("FAILED to run")
    killed = {**clean, "synccheck": {**clean["synccheck"], "incomplete": True}}
    assert sanitize.verdict("cuda/v3-sequential", killed) == "did not complete under synccheck"
    doc = {"variants": [{"variant": "cuda/v3-sequential", "verdict": "FAILED to run under x"}]}
    assert sanitize.failures(doc | {"kernels": []})
    assert "NOT flagged" in sanitize.verdict("cuda/demo-004-gmem-early-return", clean)
    assert "flagged by memcheck" in sanitize.verdict("cuda/demo-004-gmem-early-return", mem)


# --------------------------------------------------------------------------------------------
# the seed-bug demonstrations


def test_demo_records_are_labelled_and_never_default():
    for v in records_beyond.DEMO_VARIANTS:
        assert v.wrong and v.family == records_beyond.DEMO_FAMILY and v.source == "seed_bugs.cu"
        assert v.id not in {w.id for w in catalogue.select()}
        assert catalogue.get(v.twin).launch.threads == v.launch.threads


def test_demo_kernels_compile_with_nvrtc():
    from harness.compile import nvrtc

    if not nvrtc.available():
        pytest.skip("libnvrtc not installed (pip install -e '.[cuda13]')")
    r = nvrtc.compile_file("seed_bugs.cu", "sm_90")  # what the catalogue asks of seed_bugs.cu
    demos = {v.name_expression(d) for v in records_beyond.DEMO_VARIANTS for d in v.dtypes}
    assert set(r.lowered) == demos
    assert len(r.resources) == 2 and all(k.spill_store_bytes == 0 for k in r.resources.values())


# --------------------------------------------------------------------------------------------
# the commands without their tools: one line, exit 2


def _no_tool(monkeypatch):
    monkeypatch.setattr(profile_driver.shutil, "which", lambda name: None)
    monkeypatch.setattr(profile_driver.glob, "glob", lambda pattern: [])
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.delenv("COMPUTE_SANITIZER", raising=False)


@pytest.mark.parametrize("command,tool", [("profile", "ncu"), ("sanitize", "compute-sanitizer")])
def test_missing_tool_is_one_line_and_exit_2(monkeypatch, capsys, command, tool):
    _no_tool(monkeypatch)
    assert reduce_ladder([command]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{tool} not found" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["profile", "sanitize"])
def test_no_gpu_is_one_line_and_exit_2(monkeypatch, capsys, command):
    monkeypatch.setattr(profile_driver, "find_tool", lambda name: "/opt/fake/" + name)
    monkeypatch.setattr(device, "torch_gpu", lambda: (False, "no GPU in this test"))
    assert reduce_ladder([command]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no GPU in this test" in err


def test_unreadable_counters_are_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(profile_driver, "find_tool", lambda name: "/opt/fake/ncu")
    monkeypatch.setattr(device, "torch_gpu", lambda: (True, ""))
    msg = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access counters"
    monkeypatch.setattr(
        profile_driver, "run_tool", lambda cmd, **kw: subprocess.CompletedProcess(cmd, 1, "", msg)
    )
    code = reduce_ladder(["profile", "--variants", "cuda/v3-sequential", "--raw", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "ERR_NVGPUCTRPERM" in err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["sanitize", "--tools", "memcheck", "nope"], "choose from 'memcheck', 'racecheck'"),
        (["profile", "--variants", "v3-sequential"], "did you mean cuda/v3-sequential?"),
        (["sanitize", "--variants", "demo-004-gmem-early-return"], "cuda/demo-004-gmem-early"),
    ],
)
def test_bad_tools_and_ids_are_usage_errors_before_any_work(args, says, capsys):
    assert reduce_ladder(args) == 2
    assert says in capsys.readouterr().err


def test_a_demonstration_is_named_by_its_id(monkeypatch, capsys):
    _no_tool(monkeypatch)  # the id accepted, then the missing tool is the one line
    assert reduce_ladder(["sanitize", "--variants", "cuda/demo-000-v1-sync-in-if"]) == 2
    assert "compute-sanitizer not found" in capsys.readouterr().err


def test_driver_refuses_without_a_gpu(monkeypatch, capsys):
    monkeypatch.setattr(device, "gpu_available", lambda: False)
    assert profile_driver.main(["--variant", "cuda/v3-sequential", "--n", "1000"]) == 2
    assert profile_driver.main(["--variant", "cuda/nope", "--n", "1000"]) == 2
    assert "unknown variant" in capsys.readouterr().err


def test_sanitizer_kernel_names_map_to_the_variants_that_launch_them():
    from harness.compile import nvrtc

    if not nvrtc.available():
        pytest.skip("libnvrtc not installed (pip install -e '.[cuda13]')")
    ids = ["cuda/v3-sequential", "cuda/demo-004-gmem-early-return", "triton/tile-256"]
    ids += ["triton/pair-adjacent-256"]
    names = sanitize.kernel_names([profile_driver.lookup(i) for i in ids])
    assert names["_Z32seed004_reduce_gmem_early_returnIiLj256EEvPT_S1_j"] == {ids[1]}
    v3 = [k for k, vs in names.items() if vs == {"cuda/v3-sequential"}]
    assert len(v3) == 2 and all(k.startswith("_Z20reduce_v3_sequential") for k in v3)  # 2 dtypes
    assert names["adjacent_tiles_kernel"] == {"triton/tile-256", "triton/pair-adjacent-256"}


def test_axis_kernels_are_attributed_to_the_variants_whose_passes_launch_them():
    from harness.compile import nvrtc

    if not nvrtc.available():
        pytest.skip("libnvrtc not installed (pip install -e '.[cuda13]')")
    ids = ["cuda/axis-r0-thread-row", "cuda/axis-r4-split-rows", "cuda/axis-fastest"]
    ids += ["triton/axis-r4-split-rows", "triton/axis-fastest"]
    assert sanitize.axis_kinds(profile_driver.lookup(ids[1])) == {"r4"}  # its combine: in r4
    names = sanitize.kernel_names([profile_driver.lookup(i) for i in ids])
    r0 = [k for k in names if k.startswith("_Z22axis_r0_thread_per_row")]
    assert len(r0) == 4 and all(names[k] == {"cuda/axis-r0-thread-row"} for k in r0)  # 4 dtypes
    r4 = [k for k in names if k.startswith("_Z18axis_r4_split_rows")]
    assert len(r4) == 4 and all(names[k] == {ids[1], "cuda/axis-fastest"} for k in r4)
    assert names["rows_split_kernel"] == {"triton/axis-r4-split-rows", "triton/axis-fastest"}
    assert names["columns_vector_kernel"] == {"triton/axis-fastest"}  # its pick for columns
    named_alone = sanitize.kernel_names([profile_driver.lookup("triton/axis-fastest")])
    assert {"rows_split_kernel", "columns_vector_kernel"} <= set(named_alone)


def test_axis_variants_run_on_shapes_their_mapping_takes():
    for v in catalogue.AXIS_VARIANTS:
        cases = profile_driver.axis_cases(v, 2**24, "sanitize")
        assert len(cases) >= 2 and len(set(cases)) == len(cases), v.id
        assert any(s[d] % 2 and len(s) == 2 for s, d in cases), v.id  # an odd, partial tile
        (profiled,) = profile_driver.axis_cases(v, 2**24, "profile")
        assert profiled == ((2**16, 256), 0 if v.launch.mapping.along == "columns" else 1)
    work = list(
        profile_driver._work(catalogue.AXIS_VARIANTS[:1], [1000, 4099], ["int32"], "sanitize")
    )
    assert [w[3:] for w in work] == profile_driver.axis_cases(
        catalogue.AXIS_VARIANTS[0], 0, "sanitize"
    )


def test_profile_shapes_run_the_axis_variants_and_the_peers_along_that_dim(tmp_path, capsys):
    shapes = [profile_driver.parse_shape(t) for t in ("2048x120:0", "4x80x33:1")]
    assert shapes == [((2048, 120), 0), ((4, 80, 33), 1)]
    for bad in ("2048x120", "2048:0", "0x5:0", "2x3:2", "2x3x4x5:0"):
        with pytest.raises(ValueError, match="MxN:DIM"):
            profile_driver.parse_shape(bad)
    vs = [
        profile_driver.lookup(i) for i in ("cuda/axis-r2-warp-row", "cuda/axis-c3-vector-columns")
    ]
    vs.append(catalogue.get("peer/torch.sum"))
    work = [
        (v.id, s, d)
        for v, _, _, s, d in profile_driver._work(vs, [2**24], ["float32"], "profile", shapes)
    ]
    assert work == [
        ("cuda/axis-c3-vector-columns", (2048, 120), 0),  # r2 takes rows only: neither shape
        ("cuda/axis-c3-vector-columns", (4, 80, 33), 1),
        ("peer/torch.sum", (2048, 120), 0),
        ("peer/torch.sum", (4, 80, 33), 1),
    ]
    jobs = profile_study.plan_jobs(vs, [2**24], "float32", shapes)  # each library call alone
    assert [(len(j.variants), j.shapes) for j in jobs] == [(2, tuple(shapes))] + [
        (1, (s,)) for s in shapes
    ]
    assert len({j.label for j in jobs}) == 3
    for j in jobs:  # what the driver is given parses (n is unused beside shapes, but checked)
        argv = j.command("profile", tmp_path / "m")
        argv = argv[argv.index("harness.studies.profile_driver") + 1 :]
        assert profile_driver.main([*argv, "--dtype", "nope"]) == 2
        assert "unknown dtype(s) nope" in capsys.readouterr().err  # n and shapes were accepted
    job = profile_driver.Job(vs, (2**24,), ("float32",), "j", tuple(shapes))
    cmd = job.command("profile", tmp_path / "m")
    assert cmd[cmd.index("--shapes") + 1 : cmd.index("--shapes") + 3] == ["2048x120:0", "4x80x33:1"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--variants", "cuda/axis-fastest", "cuda/v3-sequential", "--shapes", "8x8:0"],
            "not cuda/v3",
        ),
        (
            ["--variants", "cuda/axis-fastest", "peer/cupy.sum-cub", "--shapes", "8x8:0"],
            "not peer/",
        ),
        (["--shapes", "8x8:0"], "needs --variants"),
        (["--variants", "cuda/axis-fastest", "--shapes", "8x:0"], "MxN:DIM"),
    ],
)
def test_profile_shapes_usage_errors_before_any_work(args, says, capsys):
    assert reduce_ladder(["profile", *args]) == 2
    assert says in capsys.readouterr().err


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "int32"])
def test_the_peers_sum_along_a_dim_is_checked_against_the_exact_sums_rounded_once(dtype):
    from harness.check.verify import seed_like_input

    peer = catalogue.get("peer/torch.sum")
    x = seed_like_input(2048 * 120, dtype, "cpu").view(2048, 120)  # sums up to 2048 x 99
    assert profile_driver._check(peer, x, 0, "profile") == {"ok": True, "message": ""}
    wide = seed_like_input(3 * 400_000, dtype, "cpu").view(3, 400_000)  # sums past 2^24
    assert profile_driver._check(peer, wide, 1, "profile")["ok"] is None  # not judged


# -- a real recording (H100, ncu 2025.3.1: cupy.sum through CUB at 2^24 float32) ---------------

NCU_DATA = Path(__file__).parent / "data" / "ncu"


def test_recorded_ncu_export_parses_and_attributes_cubs_nested_range():
    """The raw page of a real run: a units row, CUB's two kernels, and CUB's own NVTX range
    (cub::DeviceReduce::Sum) nested inside ours, which the renamed export shows innermost."""
    stem = "profile-float32-2_24-1"
    rows = profile_study.parse_csv((NCU_DATA / f"{stem}.csv").read_text())
    renamed = profile_study.parse_csv((NCU_DATA / f"{stem}.nvtx.csv").read_text())
    manifest = json.loads((NCU_DATA / f"{stem}.manifest.json").read_text())
    assert [("DeviceReduceKernel" in r.name, "SingleTileKernel" in r.name) for r in rows] == [
        (True, False),
        (False, True),
    ]
    first = profile_study.keyed(rows[0])
    # the main kernel reads the whole input once: 2^24 floats = 64 MiB from DRAM, within 1%
    assert abs(first["dram_read_bytes"] - 4 * 2**24) < 0.01 * 4 * 2**24
    attributed, check = profile_study.attribute(rows, manifest, renamed)
    assert check == "agrees"
    assert [len(a.rows) for a in attributed] == [2]
    assert all("cub::DeviceReduce::Sum" in n for n in attributed[0].nvtx_names)


# -- real compute-sanitizer logs (H200, sm_90), kept as fixtures ---------------------------------

SANITIZER_DATA = Path(__file__).parent / "data" / "sanitizer"


def test_recorded_sanitizer_logs_parse():
    """The logs of the committed run: memcheck flags 004's early return (reads past n on a
    partial tile) in its kernel; synccheck reports nothing for 000's divergent barrier on sm_90;
    memcheck over every default kernel is clean and complete."""
    early = sanitize.parse_log(
        (SANITIZER_DATA / "sanitize-memcheck-demo-004-gmem-early-return.txt").read_text()
    )
    assert early.complete and early.errors > 0
    ((kernel, findings),) = early.kernels.items()
    assert "seed004_reduce_gmem_early_return" in kernel and findings["records"] > 0
    sync = sanitize.parse_log(
        (SANITIZER_DATA / "sanitize-synccheck-demo-000-v1-sync-in-if.txt").read_text()
    )
    assert sync.complete and sync.errors == 0 and not sync.kernels
    clean = sanitize.parse_log((SANITIZER_DATA / "sanitize-memcheck-default.txt").read_text())
    assert clean.complete and clean.errors == 0 and not clean.kernels


@pytest.mark.parametrize("command", ["profile", "sanitize"])
def test_json_path_is_checked_before_any_work(tmp_path, capsys, command):
    """As every command that writes: a file where a folder is needed is an error, found first."""
    (tmp_path / "a-file").write_text("")
    target = tmp_path / "a-file" / "out.json"
    assert reduce_ladder([command, "--json", str(target)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


# -- the studies end to end with the tools' recorded output standing in for the tools ------------


def _replay(monkeypatch, manifest: list[dict], output) -> None:
    """profile_driver.run_tool as the tool would: the driver's manifest written where the command
    names it, output(cmd) the tool's recorded output."""

    def run(cmd, timeout, env=None):
        if "--manifest" in cmd:
            Path(cmd[cmd.index("--manifest") + 1]).write_text(json.dumps(manifest))
        return subprocess.CompletedProcess(cmd, 0, output(cmd), "")

    monkeypatch.setattr(profile_driver, "run_tool", run)
    monkeypatch.setattr(profile_driver, "find_tool", lambda name: "/opt/fake/" + name)
    monkeypatch.setattr(device, "torch_gpu", lambda: (True, ""))


def test_profile_study_runs_ncu_exports_and_attributes(monkeypatch, tmp_path):
    stem = "profile-float32-2_24-1"
    manifest = json.loads((NCU_DATA / f"{stem}.manifest.json").read_text())
    plain, nvtx = ((NCU_DATA / f"{stem}{s}").read_text() for s in (".csv", ".nvtx.csv"))
    _replay(monkeypatch, manifest, lambda cmd: (
        nvtx if "--print-nvtx-rename" in cmd else plain if "--import" in cmd else ""))  # fmt: skip
    doc = profile_study.profile([catalogue.get("peer/cupy.sum-cub")], [2**24], "float32", tmp_path)
    (result,) = doc["results"]
    assert result["variant"] == "peer/cupy.sum-cub" and len(result["kernels"]) == 2
    assert doc["runs"][0]["nvtx_check"] == "agrees" and doc["runs"][0]["kernels"] == 2
    assert result["total"]["metrics"]["duration_ns"] > 0
    assert {p.name for p in tmp_path.iterdir()} >= {f"{stem[:-1]}0.csv", f"{stem[:-1]}0.ncu.log"}


def test_sanitize_study_reads_the_tools_logs_into_verdicts(monkeypatch, tmp_path):
    vid = "cuda/demo-004-gmem-early-return"
    manifest = [{"variant": vid, "dtype": "int32", "n": 4099, "ok": False, "wrong": True}]
    log = (SANITIZER_DATA / "sanitize-memcheck-demo-004-gmem-early-return.txt").read_text()
    _replay(monkeypatch, manifest, lambda cmd: log)
    monkeypatch.setattr(sanitize, "kernel_names", lambda vs: {
        "_Z32seed004_reduce_gmem_early_returnIiLj256EEvPT_S1_j": {vid}})  # fmt: skip
    doc = sanitize.sanitize([profile_driver.lookup(vid)], tools=("memcheck",), raw_dir=tmp_path)
    assert doc["runs"][0]["complete"] and doc["runs"][0]["errors"] > 0
    (v,) = doc["variants"]
    assert v["verdict"] == "seed bug flagged by memcheck (the tool meant for it)"
    assert v["tools"]["memcheck"]["records"] > 0 and not sanitize.failures(doc)
    assert (tmp_path / "sanitize-memcheck-demo-004-gmem-early-return.txt").is_file()
