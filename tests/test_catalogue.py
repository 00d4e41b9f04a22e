"""The catalogue is the single source of truth: check its records are complete and consistent."""

import json
import re
from pathlib import Path

from harness.cli.main import main
from harness.core import catalogue, dtypes
from harness.core.catalogue import FASTEST_UNROLL

ROOT = Path(__file__).resolve().parents[1]


def cuda_sources() -> list[str]:
    """The CUDA variants' source files, each once, in catalogue order."""
    sources = (v.source for v in catalogue.VARIANTS if v.backend == "cuda" and v.source)
    return list(dict.fromkeys(sources))


# Every seed label the project implements, exactly as the issues spell them.
SEED_LABELS = (
    ["000:v0", "000:v1", "000:v2", "000:v3", "000:v4a", "000:v4b"]
    + [f"000:v{i}" for i in range(5, 9)]
    + ["002:R0", "002:R1", "002:R2-official", "002:R2-mine", "002:R3"]
    + ["002:R4-A", "002:R4-B", "002:R4-C", "002:R5-wrong1", "002:R5-wrong2", "002:R5"]
    + ["002:R6", "002:R6-official", "002:R7", "002:R8"]
    + [f"001:V{i}" for i in range(5)]
    + ["004:reduceGmem", "004:reduceSmem", "004:reduceGmemUnroll", "004:reduceSmemUnroll"]
    + ["004:reduceSmemDyn", "004:reduceSmemUnrollDyn"]
)


def test_every_seed_label_is_implemented_and_no_other():
    used = [s for v in catalogue.VARIANTS for s in v.seeds]
    assert set(used) == set(SEED_LABELS)


def test_every_cuda_variant_has_a_triton_twin_with_the_same_tiles():
    for v in catalogue.VARIANTS:
        if v.backend != "cuda" or v.family != "ladder":
            continue
        twin = catalogue.get(v.twin)
        assert twin.backend == "triton"
        assert twin.launch == v.launch or (
            # only in_place / dynamic_smem may differ: Triton never writes its input and has no
            # dynamic shared memory to size
            twin.launch.threads == v.launch.threads
            and twin.launch.mapping is v.launch.mapping
            and twin.launch.tiles == v.launch.tiles
            and twin.launch.max_blocks == v.launch.max_blocks
        ), v.id
        assert v.id in twin.twin_of
        assert set(v.dtypes) <= set(twin.dtypes)


def test_every_triton_variant_twins_some_cuda_stage():
    for v in catalogue.VARIANTS:
        if v.backend == "triton" and v.family == "ladder":
            assert v.twin_of, f"{v.id} twins nothing"
            assert v.stage, f"{v.id} has no stage"


def test_wrong_demonstrations_are_labelled_and_out_of_default_selection():
    wrong = {v.id for v in catalogue.VARIANTS if v.wrong}
    assert wrong == {"cuda/v5-wrong-nosync", "cuda/v5-wrong-novolatile"}
    assert not wrong & {v.id for v in catalogue.select()}
    assert {v.id for v in catalogue.select(sorted(wrong))} == wrong  # runnable on request


def test_ladder_covers_stages_0_to_8_for_float32():
    stages = {v.stage for v in catalogue.select(backend="cuda", dtype="float32", family="ladder")}
    assert stages == {str(i) for i in range(9)}


def test_complete_unroll_is_instantiated_for_four_block_sizes():
    sizes = {v.launch.threads for v in catalogue.VARIANTS if "000:v6" in v.seeds}
    assert sizes == {128, 256, 512, 1024}


def test_name_expressions_are_unique_per_source():
    for source in cuda_sources():
        exprs = catalogue.name_expressions(source)
        assert len(exprs) == len(set(exprs)), source


def test_list_json_prints_every_record(capsys):
    assert main(["list", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in records] == [v.id for v in catalogue.VARIANTS]
    for r in records:
        assert {
            "id",
            "backend",
            "stage",
            "seeds",
            "twin",
            "dtypes",
            "wrong",
            "tile_mapping",
            "launch_policy",
            "title",
        } <= set(r)


def _cu_templates(source: str) -> dict[str, list[str]]:
    """kernel name -> its template parameter names, read from cuda_kernels/<source>."""
    text = (ROOT / "cuda_kernels" / source).read_text()
    pattern = (
        r"template\s*<([^>]*)>\s*__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?(\w+)\s*\("
    )
    return {
        name: [p.split()[-1] for p in params.split(",")]
        for params, name in re.findall(pattern, text)
    }


def test_name_expressions_take_the_block_size_from_the_launch():
    # The block size is written once, in launch.threads: a kernel template's BLOCK parameter gets
    # it through {B}, never as a typed number that could disagree with the launch.
    checked = 0
    for v in catalogue.select(backend="cuda", include_wrong=True):
        params = _cu_templates(v.source)[v.kernel.split("<")[0]]
        assert not re.search(r"[<,]\s*\d", v.kernel), f"{v.id}: a number typed in {v.kernel}"
        assert ("{B}" in v.kernel) == ("BLOCK" in params), v.id
        for dtype in v.dtypes:
            args = v.name_expression(dtype).split("<", 1)[1].rstrip(">").split(", ")
            assert len(args) == len(params), (v.id, args, params)
            if "BLOCK" in params:
                assert args[params.index("BLOCK")] == str(v.launch.threads), (v.id, dtype)
                checked += 1
    assert checked > 50


def test_list_json_kernel_is_the_name_expression_with_the_element_type_open():
    for v in catalogue.select(backend="cuda", include_wrong=True):
        kernel = v.record()["kernel"]
        assert "{B}" not in kernel
        for dtype in v.dtypes:
            want = v.name_expression(dtype)
            assert kernel.format(T=dtypes.get(dtype).cxx, U=FASTEST_UNROLL.get(dtype, 0)) == want


def test_triton_twins_take_stage_dtypes_and_twin_of_from_their_cuda_stages():
    for t in catalogue.select(backend="triton", include_wrong=True):
        cuda = [v for v in catalogue.VARIANTS if v.twin == t.id]
        if t.counterpart:  # families "fastest", "reproducible": counterparts, not twins
            assert not cuda and not t.twin_of
            continue
        assert t.twin_of == tuple(v.id for v in cuda)
        assert t.stage == catalogue.ladder_order(cuda)[0].stage
        assert set(t.dtypes) == {d for v in cuda for d in v.dtypes}


def test_peer_ids_are_the_catalogue_peer_records():
    ids = (
        catalogue.TORCH_SUM_ID,
        catalogue.CUB_ID,
        catalogue.NOCUB_ID,
        catalogue.COPY_ID,
        *catalogue.COMPILE_IDS,
        *catalogue.CCCL_IDS,
    )
    assert ids == catalogue.PEER_IDS
    assert [v.id for v in catalogue.select(backend="peer")] == list(ids)


def test_stage_key_orders_the_ladder_then_seed_rungs_then_the_rest():
    stages = ["peer", "004-2", "8", "V0", "0", "004-1", "fastest", "10"]
    assert sorted(stages, key=catalogue.stage_key) == [
        "0",
        "8",
        "10",
        "004-1",
        "004-2",
        "V0",
        "fastest",
        "peer",
    ]
