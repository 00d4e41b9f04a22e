"""The compiler census (`reduce-ladder inspect`) and the porting reference built from it.

Facts held here follow from the code, not from a compiler version: they are what each stage's
change must produce in SASS / PTX with any NVRTC 13.x and Triton 3.6+ (all on the CPU, no GPU).
Every compiled variant of every family (ladder, 004, 001, fastest) is censused for every dtype it
lists; the peers are library calls, listed as not compiled.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from harness.compile import nvrtc
from harness.core import catalogue, dtypes
from porting import census, kernel_sources, measured, sass
from porting import doc as porting_doc

# What an optimization becomes in Triton: each lesson's `how` is one of these.
HOW = ("done by the compiler", "tile shape", "num_warps", "program count", "host code")
HOW += ("not expressible",)

# -- parsers (no tools needed) ------------------------------------------------------------------

SASS = """
	code for sm_90
		Function : _Z3fooPf
	.headerflags	@"EF_CUDA_TEXMODE_UNIFIED"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                /* 0x0 */
        /*0010*/              @!P0 LDG.E.128 R4, desc[UR4][R2.64] ;      /* 0x0 */
        /*0020*/                   LDG.E.64.CONSTANT R6, desc[UR4][R2.64] ; /* 0x0 */
        /*0030*/                   SHFL.DOWN PT, R5, R8, 0x10, 0x1f ;    /* 0x0 */
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;         /* 0x0 */
        /*0050*/               @P1 STS [R5], R0 ;                        /* 0x0 */
        /*0060*/                   STS [R5], R3 ;                        /* 0x0 */
        /*0070*/                   LDS R3, [R2+0x80] ;                   /* 0x0 */
        /*0080*/                   ATOMG.E.ADD.F32 PT, R0, desc[UR4][R2.64], R3 ; /* 0x0 */
        /*0090*/              @!P1 BRA 0x30 ;                            /* 0x0 */
        /*00a0*/                   EXIT ;                                /* 0x0 */
        /*00b0*/                   BRA 0xb0;                             /* 0x0 */
		Function : bar
        /*0000*/                   EXIT ;                                /* 0x0 */
"""


def test_sass_counts():
    fns = sass.split_sass(SASS)
    assert set(fns) == {"_Z3fooPf", "bar"}
    c = sass.count_sass(fns["_Z3fooPf"])
    assert c.ldg == {"32": 0, "64": 1, "128": 1}
    assert (c.shuffles, c.barriers, c.sts, c.lds, c.atomics) == (1, 1, 2, 1, 1)
    assert c.sts_addresses == 1
    assert c.back_edges == 1  # the final self-loop is not a loop
    assert c.instructions == 12
    assert sass.count_sass(fns["bar"]).instructions == 1


def test_resource_usage_and_ptx_parsers():
    usage = sass.parse_resource_usage(
        "Resource usage:\n Common:\n  GLOBAL:0\n Function k:\n"
        "  REG:25 STACK:0 SHARED:1024 LOCAL:8 CONSTANT[0]:568 TEXTURE:0\n"
    )
    assert usage["k"]["REG"] == 25 and usage["k"]["LOCAL"] == 8
    ptx = (
        ".weak .entry a(\n.param .u32 p)\n{\n\trem.u32 \t%r5, %r1, %r4;\n"
        "\tdiv.rn.f32 %f1, %f2, %f3;\n}\n.visible .entry b()\n{\n\tdiv.s64 %rd1, %rd2, %rd3;\n}\n"
        ".extern .shared .align 16 .b8 global_smem[];\n.shared .align 4 .b8 s[128];\n"
    )
    parts = sass.split_ptx(ptx)
    assert set(parts) == {"a", "b"}
    assert sass.ptx_int_divrem(parts["a"]) == 1  # the float division does not count
    assert sass.ptx_int_divrem(parts["b"]) == 1
    assert sass.ptx_static_shared(ptx) == 128


# -- the live census ----------------------------------------------------------------------------


def _tools_ok() -> str | None:
    if not nvrtc.available():
        return "libnvrtc not installed (pip install -e '.[cuda13]')"
    try:
        sass.find_tool("cuobjdump")
    except sass.ToolMissing as e:
        return str(e)
    return None


needs_tools = pytest.mark.skipif(_tools_ok() is not None, reason=str(_tools_ok()))


@pytest.fixture(scope="module")
def rows() -> dict[tuple[str, str], census.Census]:
    rs = census.census(list(catalogue.VARIANTS), None, "sm_90")
    return {(r.variant, r.dtype): r for r in rs}


def _get(rows, vid: str, dtype: str = "float32") -> census.Census:
    return rows[(vid, dtype)]


@needs_tools
def test_census_covers_every_variant_and_dtype(rows):
    expected = {(v.id, d) for v, d in census.census_pairs(list(catalogue.VARIANTS), None)}
    assert set(rows) == expected
    assert any(k[0].startswith("cuda/") for k in rows) and any(
        k[0].startswith("triton/") for k in rows
    )


@needs_tools
def test_nothing_spills(rows):
    for key, r in rows.items():
        assert not r.spills, f"{key}: local {r.local_bytes}, spills {r.spill_bytes}"
        assert r.stack_bytes == 0, f"{key}: {r.stack_bytes}-byte stack frame"
        assert r.registers > 0, key


@needs_tools
def test_global_memory_stage_uses_no_shared_memory(rows):
    r = _get(rows, "cuda/v0-gmem-interleaved")
    assert r.static_smem == 0 and r.dynamic_smem == 0
    assert r.counts.lds == 0 and r.counts.sts == 0
    assert r.counts.barriers >= 1  # the barrier between tree steps


@needs_tools
def test_shuffle_stage_has_shuffles_and_no_shared_memory_tree(rows):
    for vid in ("cuda/v8-shuffle-chunked", "cuda/v8-shuffle-strided"):
        r = _get(rows, vid)
        assert r.counts.shuffles >= 10, vid  # two rounds of five __shfl_down_sync
        assert r.counts.lds <= 2 and r.counts.sts <= 2, vid  # only the 32-slot array
        assert r.counts.barriers == 1, vid
        assert r.static_smem <= 32 * 8, vid
        # the stage before it has the shared-memory tree and no shuffle
        v7 = _get(rows, vid.replace("v8-shuffle", "v7-fixed"))
        assert v7.counts.shuffles == 0 and v7.counts.lds > r.counts.lds


@needs_tools
def test_interleaved_modulo_goes_away_with_strided_and_sequential_indexing(rows):
    assert _get(rows, "cuda/v0-gmem-interleaved").int_divrem >= 1  # tid % (2*i)
    assert _get(rows, "cuda/v1-smem-interleaved").int_divrem >= 1
    assert _get(rows, "cuda/v2-strided-index").int_divrem == 0
    assert _get(rows, "cuda/v3-sequential").int_divrem == 0


@needs_tools
def test_sequential_addressing_stores_to_slot_tid_only(rows):
    # v3: every step writes smem[tid] (one store address, loop invariant); v2 writes
    # smem[2*i*tid], recomputed each step, besides the initial smem[tid].
    assert _get(rows, "cuda/v3-sequential").counts.sts_addresses == 1
    assert _get(rows, "cuda/v2-strided-index").counts.sts_addresses >= 2


@needs_tools
def test_complete_unroll_has_no_loop_and_one_barrier_per_step(rows):
    for b in (128, 256, 512, 1024):
        r = _get(rows, f"cuda/v6-unroll-{b}")
        assert r.counts.back_edges == 0, b
        # one after the load, one per step from b down to 64 slots
        assert r.counts.barriers == 1 + int(math.log2(b // 64)), b
    assert _get(rows, "cuda/v5-volatile").counts.back_edges >= 1  # the tree loop is still there


@needs_tools
def test_first_add_during_load_reads_two_elements(rows):
    for v in catalogue.VARIANTS:
        if v.backend == "cuda" and v.stage in ("4", "5", "6"):
            r = _get(rows, v.id)
            assert sum(r.counts.ldg.values()) == 2, v.id
    assert sum(_get(rows, "cuda/v3-sequential").counts.ldg.values()) == 1


@needs_tools
def test_triton_sum_lowers_to_shuffles(rows):
    for (vid, dtype), r in rows.items():
        if r.backend != "triton" or catalogue.get(vid).family == "reproducible":
            continue  # (its trees are tl.reshape + tl.split levels, in a fixed order: no tl.sum)
        # float sums shuffle (5 steps per warp); an integer sum may instead use redux.sync
        # (REDUX), one instruction for a whole warp
        assert r.counts.shuffles >= 5 or r.counts.warp_reductions >= 1, (vid, dtype)
        if dtype != "int32":
            assert r.counts.shuffles >= 5, (vid, dtype)
        assert r.static_smem == 0, (vid, dtype)  # Triton's scratch is dynamic shared memory
        if catalogue.get(vid).twin_of:
            # a tile twin is one tl.sum: no barrier per tree step, no integer division.
            # (triton/fastest, not a twin, has two tl.sum, a debug_barrier before its ticket and
            # the tail owner num_full % programs: see test_triton_fastest_*)
            assert r.counts.barriers <= 2, (vid, dtype)
            assert r.int_divrem == 0, (vid, dtype)


@needs_tools
def test_size_argument_width_matches_the_launcher(rows):
    # harness.launch.plan passes n as np.uint64 when max_n > 2^31 - 1 (seed 001) and as np.uint32
    # otherwise, then the per-thread count as np.uint32; harness.launch.single_launch passes
    # np.uint64.
    # The mangled symbol's last parameters must say the same (Itanium: y = unsigned long long,
    # j = unsigned int), or the launch would pass the wrong width.
    for (vid, dtype), r in rows.items():
        v = catalogue.get(vid)
        if v.backend != "cuda":
            continue
        wide = v.max_n > catalogue.MAX_N_32BIT or v.launch.mapping.one_launch
        want = ("y" if wide else "j") + ("j" if v.launch.mapping.cuda_takes_per_thread else "")
        assert r.symbol.endswith(want), (vid, dtype, r.symbol)
    assert all(catalogue.get(v).max_n > 2**31 for v, _ in rows if v.startswith("cuda/001-"))


@needs_tools
def test_seed_004_memory_and_four_tile_loads(rows):
    get = lambda vid: _get(rows, f"cuda/004-{vid}", "int32")  # noqa: E731
    for vid in ("gmem", "gmem-unroll4"):  # in place in global memory: no shared memory at all
        r = get(vid)
        assert r.static_smem == 0 and r.dynamic_smem == 0, vid
        assert r.counts.lds == 0 and r.counts.sts == 0, vid
        assert r.counts.barriers >= 1, vid
    for vid in ("smem", "smem-unroll4"):  # __shared__ int smem[256]
        assert get(vid).static_smem >= 256 * 4 and get(vid).dynamic_smem == 0, vid
    for vid in ("smem-dyn", "smem-unroll4-dyn"):  # extern __shared__, 256 * sizeof(int) at launch
        r = get(vid)
        assert r.static_smem == 0 and r.dynamic_smem == 256 * 4, vid
        assert r.counts.lds > 0 and r.counts.sts > 0, vid
    # four data blocks per block: each thread issues four (bounds-checked) loads instead of one
    ldg = {vid: sum(get(vid).counts.ldg.values()) for vid in ("smem", "smem-unroll4")}
    assert ldg == {"smem": 1, "smem-unroll4": 4}
    assert sum(get("smem-unroll4-dyn").counts.ldg.values()) == 4
    gmem = sum(get("gmem").counts.ldg.values())
    assert sum(get("gmem-unroll4").counts.ldg.values()) > gmem  # (its tree also reads global)
    quad = sum(_get(rows, "triton/quad-adjacent-256", "int32").counts.ldg.values())
    assert quad == 4 * sum(_get(rows, "triton/tile-256", "int32").counts.ldg.values())


@needs_tools
def test_seed_001_shared_memory_only_in_v4(rows):
    for dtype in ("float32", "int32"):
        for vid in ("v0-gmem-interleaved", "v1-gmem-sequential", "v2-pinned", "v3-streams"):
            r = _get(rows, f"cuda/001-{vid}", dtype)  # in place in global memory
            assert r.static_smem == r.dynamic_smem == 0, (vid, dtype)
            assert r.counts.lds == r.counts.sts == 0, (vid, dtype)
        v4 = _get(rows, "cuda/001-v4-smem", dtype)  # __shared__ T smem[1024]
        assert v4.static_smem >= 1024 * 4 and v4.counts.lds > 0 and v4.counts.sts > 0, dtype
        # V4 reads the input once (two elements per thread, added during the load); V0/V1 keep
        # reading global memory inside the tree loop
        assert sum(v4.counts.ldg.values()) == 2, dtype


@needs_tools
def test_cuda_fastest_vector_loads_last_block_atomic_and_small_shared_array(rows):
    from harness.core.catalogue import FASTEST_UNROLL

    for dtype in catalogue.get("cuda/fastest").dtypes:
        r = _get(rows, "cuda/fastest", dtype)
        # UNROLL 16-byte loads in the main loop (and UNROLL guarded ones for the partial tile)
        assert r.counts.ldg["128"] >= FASTEST_UNROLL[dtype], dtype
        assert r.counts.atomics >= 1, dtype  # the last-block ticket (atomicAdd)
        assert r.counts.shuffles >= 10, dtype  # two rounds of five __shfl_down_sync
        # no shared-memory tree: only warp_sums[256 / 32] accumulators and the is_last flag
        acc_bytes = 8 if dtype == "float64" else 4
        assert r.static_smem <= (256 // 32) * acc_bytes + 16, dtype
        assert r.dynamic_smem == 0, dtype
        assert r.counts.lds <= 4 and r.counts.sts <= 4, dtype


@needs_tools
def test_triton_fastest_vector_loads_and_ticket(rows):
    for dtype in catalogue.get("triton/fastest").dtypes:
        r = _get(rows, "triton/fastest", dtype)
        # the unmasked full tiles of the aligned bulk (xa_ptr, declared 16-byte aligned as the
        # launcher makes it) load 16 bytes at a time
        assert r.counts.ldg["128"] >= 1, dtype
        assert r.counts.atomics >= 1, dtype  # the acq_rel ticket (and the counter reset)
        assert r.counts.back_edges >= 1, dtype  # the grid-stride loop


def test_triton_fastest_census_job_follows_the_launcher():
    """The compile job for triton/fastest takes its argument types and meta-parameters from
    the launcher's own helpers (triton_kernels.fastest), not from a copy."""
    from triton_kernels import fastest

    v = catalogue.get("triton/fastest")
    for dtype in v.dtypes:
        job = census.triton_job(v, dtype, "sm_90")
        acc = dtypes.get(dtype).sum_dtype
        assert job["args"] == fastest.triton_census_spec(dtype)["args"]
        assert job["args"]["x_ptr"] == (dtype, False) and job["args"]["xa_ptr"] == (dtype, True)
        assert job["args"]["out_ptr"] == job["args"]["part_ptr"] == (acc, True)
        assert job["args"]["count_ptr"] == ("int32", True)
        assert job["meta"] == fastest.triton_meta(fastest.DEFAULT, dtype, programs=2)
    assert census.triton_job(v, "float16", "sm_90")["args"]["out_ptr"] == ("float32", True)


@needs_tools
def test_cli_prints_table_and_json(capsys, tmp_path):
    from harness.cli.main import main

    out = tmp_path / "c.json"
    ids = "cuda/v3-sequential,triton/tile-256"
    assert main(["inspect", "--variants", ids, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cuda/v3-sequential" in text and "triton/tile-256" in text
    doc = json.loads(out.read_text())
    assert doc["schema"] == census.SCHEMA and len(doc["census"]) == 2
    assert main(["inspect", "--variants", "cuda/v8-shuffle-chunked", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["census"][0]["counts"]["shuffles"] >= 10
    # peers are listed, not dropped: library calls, nothing compiled
    assert main(["inspect", "--variants", "cuda/v3-sequential", "peer/torch.sum"]) == 0
    assert f"{census.NOT_COMPILED}: peer/torch.sum" in capsys.readouterr().out
    assert (
        main(["inspect", "--variants", "cuda/v3-sequential", "peer/copy", "--format", "json"]) == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert [r["variant"] for r in doc["census"]] == ["cuda/v3-sequential"]
    assert [(p["variant"], p["reason"]) for p in doc["not_compiled"]] == [
        ("peer/copy", census.NOT_COMPILED)
    ]


def test_cli_usage_errors(capsys):
    from harness.cli.main import main

    assert main(["inspect", "--arch", "ampere"]) == 2
    assert main(["inspect", "--dtype", "float8"]) == 2  # not a catalogue dtype
    # a dtype none of the selected variants lists (float64: only the fastest pair has it)
    assert main(["inspect", "--dtype", "float64", "--variants", "cuda/v3-sequential"]) == 2
    assert main(["inspect", "--variants", "peer/torch.sum"]) == 2  # nothing to compile
    assert main(["inspect", "--variants", "cuda/nope"]) == 2


# -- the porting reference ----------------------------------------------------------------------


def test_porting_doc_is_up_to_date():
    """docs/porting.md and its appendices are what the generator makes of the committed inputs,
    byte for byte, and no other docs/porting*.md is left behind. If this fails:
    reduce-ladder inspect --dtype all --json docs/census-sm_90.json
    reduce-ladder inspect --write-doc docs/porting.md"""
    rendered = porting_doc.render_all()
    how = " && ".join(porting_doc.REGEN.split("\n"))
    for path, text in rendered.items():
        assert path.is_file(), f"{path.name} is missing: {how}"
        assert path.read_text() == text, f"{path.name} is stale: {how}"
    committed = set(porting_doc.DOC.parent.glob(f"{porting_doc.DOC.stem}*.md"))
    committed.discard(porting_doc.DOC.with_name(porting_doc.INDUCTOR_PAGE))  # the experiment's
    assert committed == set(rendered), f"not generated: {sorted(committed - set(rendered))}"


def test_committed_census_covers_the_catalogue():
    doc, rs = census.load_document(porting_doc.CENSUS)
    have = {(r.variant, r.dtype) for r in rs}
    want = {(v.id, d) for v, d in census.census_pairs(list(catalogue.VARIANTS), None)}
    assert want <= have, f"not in {porting_doc.CENSUS.name}: {sorted(want - have)}"
    assert doc["tools"]["nvrtc"] and doc["tools"]["triton"]
    families = {catalogue.get(r.variant).family for r in rs}
    assert {"ladder", "004", "001", "fastest"} <= families
    peers = {v.id for v in catalogue.VARIANTS if not census.compiled(v)}
    assert peers and {p["variant"] for p in doc["not_compiled"]} == peers


def _guide() -> str:
    return porting_doc.DOC.read_text()


def _appendix() -> str:
    return porting_doc.appendix_path(porting_doc.DOC).read_text()


def test_porting_guide_reads_checklist_first_and_fits():
    text = _guide()
    sections = [ln for ln in text.splitlines() if ln.startswith("## ")]
    assert sections[0] == "## The porting checklist", sections[:3]
    assert len(text.splitlines()) <= 1500, len(text.splitlines())
    app = porting_doc.appendix_path(porting_doc.DOC).name
    assert f"]({app}" in text and f"]({porting_doc.INDUCTOR_PAGE})" in text  # both are linked
    assert "<details><summary>generated code" not in text  # Inductor's code: its own appendix
    assert re.search(r"\bissue\s+\d", text, re.I) is None  # no issue numbers for the reader


def test_paths_the_porting_docs_name_exist():
    root = porting_doc.ROOT
    for path in porting_doc.render_all():
        named = re.findall(
            r"(?:harness|porting|triton_kernels|cuda_kernels)/[\w/]+\.(?:py|cuh?)", path.read_text()
        )
        missing = sorted({p for p in named if not (root / p).is_file()})
        assert not missing, f"{path.name} names paths that do not exist: {missing}"


def test_porting_doc_covers_every_stage_with_each_source_once():
    """Every stage of every family (the axis family's too) has its screen in the guide and, where
    the census covers it (not the axis family), its census in the appendix; every kernel (CUDA,
    its Triton partner; the guide prints them without their header comment) and every helper,
    CUDA and Triton, is printed exactly once in the two."""
    guide, appendix = _guide(), _appendix()
    both = guide + appendix
    sources: dict[str, str] = {}
    assert kernel_sources.AXIS in kernel_sources.families()
    for fam in kernel_sources.families():
        for st in kernel_sources.stages(fam):
            anchor = f'<a id="{st.anchor}"></a>'
            assert anchor in guide, st.anchor
            assert (anchor in appendix) is (fam != kernel_sources.AXIS), st.anchor
            assert (fam, st.stage) in porting_doc.LESSONS, st.anchor  # no "not described"
            assert porting_doc.LESSONS[(fam, st.stage)][0] in HOW
            for v in st.cuda:
                assert f"`{v.id}`" in guide, v.id
                partner = kernel_sources.triton_partner(v)
                assert partner is not None, v.id
                t = kernel_sources.record(partner)
                if not kernel_sources.has_kernel(v):  # axis-fastest: the stages' kernels
                    assert f"`{v.id}` has no kernel of its own" in guide, v.id
                    continue
                kernel, helpers = kernel_sources.kernel_text(v)
                sources[f"{v.source}:{v.kernel}"] = kernel_sources.code_only(kernel)
                sources.update({f"helper {name}": text for name, text in helpers})
                tri, helpers = kernel_sources.kernel_text(t)
                sources[f"{t.source}:{t.kernel}"] = kernel_sources.code_only(tri)
                sources.update({f"helper {name}": text for name, text in helpers})
    assert any(name == "helper _row_tiles" for name in sources)  # a Triton helper
    for what, text in sources.items():
        assert both.count(text) == 1, f"{what}: printed {both.count(text)} times"
    assert "not described yet" not in both
    for v in catalogue.select(backend="peer"):
        assert f"`{v.id}`" in guide and f"`{v.id}`" in appendix, v.id


def test_axis_chapter_measures_each_stage_from_the_committed_runs():
    """Each axis stage's measured lines carry the committed axis.json's own times, at the shape
    the generator picked, on every device; counters and compute-sanitizer are said not measured
    where the committed results hold no axis variant (never a typed-in number)."""
    runs = measured.load(porting_doc.ROOT, (measured.AXIS_RESULTS,), "rows")
    assert runs, "no results/*/axis.json committed"
    guide = _guide()
    chapter = guide[guide.index('<a id="axis-stage-r0"></a>') :]
    for st in kernel_sources.stages(kernel_sources.AXIS):
        block = chapter.split(f'<a id="{st.anchor}"></a>')[1].split("### ")[0]
        config = measured.axis_config(st.cuda[0].id, runs)
        for _, doc in runs:
            (row,) = [
                r
                for r in doc.rows
                if (r.variant, r.config, r.dtype) == (st.cuda[0].id, config, "float32")
            ]
            assert f"`{row.variant}` {row.median_ms * 1e3:,.1f} µs" in block, st.anchor
            assert f"{doc.device}, {config.replace(' dim=', ' along dim ')}" in block
    ids = {v.id for st in kernel_sources.stages(kernel_sources.AXIS) for v in (*st.cuda, *st.twins)}
    profile = measured.committed(porting_doc.ROOT)  # what the guide reads
    profiled = {r["variant"] for r in profile["doc"].get("results", [])} if profile else set()
    head = guide[guide.index("## Along an axis") : guide.index('<a id="axis-stage-r0"></a>')]
    assert ("**Hardware counters**: not measured yet" in head) is not bool(ids & profiled)
    sanitize = measured.committed(porting_doc.ROOT, "sanitize.json", "sanitize")
    sanitized = {v["variant"] for v in sanitize["doc"].get("variants", [])} if sanitize else set()
    assert ("**compute-sanitizer**: not run on this family yet" in head) is not bool(
        ids & sanitized
    )
