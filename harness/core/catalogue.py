"""The catalogue of variants: one record per variant, the single source of truth.

The CLI, the tests, the benchmarks, the report and the docs all read VARIANTS. Adding a variant is
one record here plus one kernel (a template in a cuda_kernels/*.cu file, or a Triton kernel in
triton_kernels/). See README.md, "Adding a variant".

Vocabulary
- backend: "cuda" (a kernel in cuda_kernels/, launched through CuPy), "triton" (a kernel in
  triton_kernels/), "peer" (what a user would call instead: torch.sum, cupy.sum).
- stage: the rung of the ladder ("0".."8" for seeds 000/002); the ladder is printed in stage order.
  A seed with a ladder of its own numbers its rungs "<seed>-<k>" ("004-1".."004-6"): they print
  after the main ladder, as their own group (see _stage_key).
- seeds: the seed labels the variant implements, e.g. "000:v3", "002:R3" (see SEED_LABELS).
- twin: the Triton variant that hands each program the same tile(s) as this CUDA block (and for a
  Triton record, None: its CUDA stages name it).
- tile mapping (Launch): which elements one block / program reads. Both backends derive their grid
  from the same Launch, so "same tile" holds by construction.
- kernel: for CUDA a C++ name expression with {T} for the element type, instantiated through
  NVRTC's name_expressions; for Triton the name of the @triton.jit function in triton_kernels.tiles.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace

from harness.core import dtypes

# Every seed label the project implements, exactly as the issues spell them.
SEED_LABELS: tuple[str, ...] = (
    *(f"000:v{i}" for i in range(4)),
    "000:v4a",
    "000:v4b",
    *(f"000:v{i}" for i in range(5, 9)),
    "002:R0",
    "002:R1",
    "002:R2-official",
    "002:R2-mine",
    "002:R3",
    "002:R4-A",
    "002:R4-B",
    "002:R4-C",
    "002:R5-wrong1",
    "002:R5-wrong2",
    "002:R5",
    "002:R6",
    "002:R6-official",
    "002:R7",
    "002:R8",
    *(f"001:V{i}" for i in range(5)),
    "004:reduceGmem",
    "004:reduceSmem",
    "004:reduceGmemUnroll",
    "004:reduceSmemUnroll",
    "004:reduceSmemDyn",
    "004:reduceSmemUnrollDyn",
)

# Largest n the 32-bit-indexed seed kernels accept (their index arithmetic stays below 2^32).
MAX_N_32BIT = 2**31 - 1

MAPPINGS = ("tiles", "split-pair", "grid-stride", "chunked", "single-launch")


@dataclass(frozen=True)
class Launch:
    """How a variant covers the input: shared by a CUDA stage and its Triton twin.

    threads: CUDA threads per block = Triton lanes per program (BLOCK); num_warps = threads // 32.
    mapping:
      "tiles"       block b reads `tiles` adjacent tiles of `threads` elements: [b*T*k, (b+1)*T*k)
      "split-pair"  block b reads tile b and tile b + gridDim (two halves of the grid's span)
      "grid-stride" a fixed grid of at most `max_blocks`; thread t of block b reads b*T + t + i*G*T
      "chunked"     a fixed grid of at most `max_blocks`; block b owns K consecutive tiles
      "single-launch" one launch returns the sum: a persistent grid of min(per_sm * SMs,
                    max_blocks) blocks (fewer when n is small) walks the input grid-stride in
                    tiles of `threads` lanes x `tiles` elements each, and the last block to finish
                    combines the per-block partials (harness.launch.single_launch). `threads` and
                    `tiles`
                    bound the error analysis (passes.chain_length): every lane of every block adds
                    at most `tiles` elements per grid-stride step.
    in_place: the first pass writes into its input (the harness gives it a scratch copy).
    """

    threads: int
    mapping: str
    tiles: int = 1
    max_blocks: int | None = None
    in_place: bool = False
    dynamic_smem: bool = False
    per_sm: int = 0  # "single-launch": blocks per SM (the grid is read off the device)

    def __post_init__(self) -> None:
        if self.mapping not in MAPPINGS:
            raise ValueError(f"unknown mapping {self.mapping!r}; expected one of {MAPPINGS}")
        if self.threads < 32 or self.threads > 1024 or self.threads & (self.threads - 1):
            raise ValueError(f"threads must be a power of two in 32..1024, got {self.threads}")
        if self.mapping in ("grid-stride", "chunked") and not self.max_blocks:
            raise ValueError(f"mapping {self.mapping!r} needs max_blocks")
        if self.mapping == "single-launch" and not (self.max_blocks and self.per_sm):
            raise ValueError("mapping 'single-launch' needs max_blocks and per_sm")

    @property
    def num_warps(self) -> int:
        return self.threads // 32

    @property
    def takes_per_thread(self) -> bool:
        """Whether the kernels take the per-thread element count as an extra argument."""
        return self.mapping in ("grid-stride", "chunked")

    def describe(self) -> str:
        t = self.threads
        if self.mapping == "tiles":
            what = "1 tile" if self.tiles == 1 else f"{self.tiles} adjacent tiles"
            return f"{what} of {t} per block"
        if self.mapping == "split-pair":
            return f"tile b + tile b+grid of {t} per block"
        if self.mapping == "grid-stride":
            return f"{self.max_blocks} blocks x {t}, grid-stride"
        if self.mapping == "single-launch":
            return f"grid >= {self.per_sm}/SM (<= {self.max_blocks}) x >= {t} lanes, one launch"
        return f"{self.max_blocks} blocks x {t}, contiguous chunk per block"


@dataclass(frozen=True)
class Variant:
    id: str
    backend: str
    stage: str
    title: str
    change: str
    seeds: tuple[str, ...] = ()
    twin: str | None = None
    dtypes: tuple[str, ...] = ("float32",)
    launch: Launch | None = None
    source: str | None = None
    kernel: str | None = None
    wrong: bool = False
    family: str = "ladder"
    max_n: int = MAX_N_32BIT
    notes: str = ""
    # Seed 001 (family "001"): where the data starts and how it reaches the device, see
    # harness.studies.host.STAGINGS ("pageable", "pinned", "streams"); "" for device-resident
    # variants.
    staging: str = ""
    twin_of: tuple[str, ...] = field(default=(), compare=False)
    # The other backend's variant built for the same goal with its own tiles (family "fastest":
    # cuda/fastest <-> triton/fastest). Not a twin: `twin` promises the same tiles, this does not.
    counterpart: str | None = None

    @property
    def in_default_run(self) -> bool:
        return not self.wrong

    @property
    def tile_mapping(self) -> str:
        return self.launch.describe() if self.launch else "library call"

    def name_expression(self, dtype: str) -> str:
        """The C++ name expression NVRTC instantiates for this CUDA variant and element type."""
        if self.backend != "cuda" or self.kernel is None:
            raise ValueError(f"{self.id} is not a CUDA kernel")
        # {U}: cuda/fastest's UNROLL for the dtype (FASTEST_UNROLL); other kernels have no {U}
        return self.kernel.format(T=dtypes.get(dtype).cxx, U=FASTEST_UNROLL.get(dtype, 0))

    def record(self) -> dict:
        """The JSON-ready record (what `reduce-ladder list --format json` prints)."""
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        d["dtypes"] = list(self.dtypes)
        d["twin_of"] = list(self.twin_of)
        d["tile_mapping"] = self.tile_mapping
        d["launch_policy"] = launch_policy(self)
        return d


def launch_policy(v: Variant) -> str:
    """One line on how the variant reduces any n to a scalar."""
    if v.launch is None:
        return "one library call"
    if v.launch.mapping == "single-launch":
        return f"{v.launch.describe()}; the last block to finish sums the partials in block order"
    base = f"{v.launch.describe()}; the same kernel again over the partials until one is left"
    return base + ("; first pass on a scratch copy (in place)" if v.launch.in_place else "")


def _cuda(
    id: str,
    stage: str,
    title: str,
    change: str,
    seeds: Iterable[str],
    twin: str,
    launch: Launch,
    source: str,
    kernel: str,
    **kw,
) -> Variant:
    return Variant(
        id=f"cuda/{id}",
        backend="cuda",
        stage=stage,
        title=title,
        change=change,
        seeds=tuple(seeds),
        twin=f"triton/{twin}",
        launch=launch,
        source=source,
        kernel=kernel,
        **kw,
    )


def _triton(id: str, title: str, launch: Launch, kernel: str, change: str, **kw) -> Variant:
    return Variant(
        id=f"triton/{id}",
        backend="triton",
        stage="",  # filled in from the CUDA stages it twins (first one), see _link_twins
        title=title,
        change=change,
        launch=launch,
        source="tiles.py",
        kernel=kernel,
        **kw,
    )


T256 = Launch(256, "tiles")
PAIR_ADJ = {b: Launch(b, "tiles", tiles=2) for b in (128, 256, 512, 1024)}
PAIR_SPLIT = {b: Launch(b, "split-pair", tiles=2) for b in (128, 256)}
STRIDED_1024 = Launch(256, "grid-stride", max_blocks=1024)
CHUNKED_1024 = Launch(256, "chunked", max_blocks=1024)

# fmt: off
_LADDER_CUDA: list[Variant] = [
    _cuda("v0-gmem-interleaved", "0", "interleaved addressing in global memory, in place",
          "baseline: tid % 2i threads add in place in global memory",
          ["000:v0", "002:R0"], "tile-256", Launch(256, "tiles", in_place=True),
          "interleaved.cu", "reduce_v0_gmem_interleaved<{T}>"),
    _cuda("v1-smem-interleaved", "1", "interleaved addressing in shared memory",
          "tile copied to shared memory; input no longer written",
          ["000:v1", "002:R1"], "tile-256", T256,
          "interleaved.cu", "reduce_v1_smem_interleaved<{T}, 256>"),
    _cuda("v2-strided-index", "2", "strided index: no divergent branch",
          "thread t works on slot 2*i*t: active threads are a contiguous prefix",
          ["000:v2", "002:R2-official"], "tile-256", T256,
          "interleaved.cu", "reduce_v2_strided_index<{T}, 256>"),
    _cuda("v3-sequential", "3", "sequential addressing: no bank conflicts",
          "slot tid + s: a warp's accesses hit 32 different banks",
          ["000:v3", "002:R2-mine", "002:R3"], "tile-256", T256,
          "sequential.cu", "reduce_v3_sequential<{T}, 256>"),
    _cuda("v4-adjacent-256", "4", "first add during load, half the blocks (adjacent tiles)",
          "each thread adds two elements while loading; 256 threads, n/512 blocks",
          ["000:v4a"], "pair-adjacent-256", PAIR_ADJ[256],
          "sequential.cu", "reduce_v4_first_add<{T}, 256, PAIR_ADJACENT>"),
    _cuda("v4-adjacent-128", "4", "first add during load, half the threads (adjacent tiles)",
          "each thread adds two elements while loading; 128 threads, n/256 blocks",
          ["000:v4b", "002:R4-C"], "pair-adjacent-128", PAIR_ADJ[128],
          "sequential.cu", "reduce_v4_first_add<{T}, 128, PAIR_ADJACENT>"),
    _cuda("v4-split-256", "4", "first add during load, half the blocks (split halves)",
          "plan A: 256 threads read tile b and tile b + grid (seed's offset bug fixed)",
          ["002:R4-A"], "pair-split-256", PAIR_SPLIT[256],
          "sequential.cu", "reduce_v4_first_add<{T}, 256, PAIR_SPLIT>"),
    _cuda("v4-split-128", "4", "first add during load, half the threads (split halves)",
          "plan B: 128 threads read tile b and tile b + grid (seed's offset bug fixed)",
          ["002:R4-B"], "pair-split-128", PAIR_SPLIT[128],
          "sequential.cu", "reduce_v4_first_add<{T}, 128, PAIR_SPLIT>"),
    _cuda("v5-volatile", "5", "unroll the last warp (volatile shared memory)",
          "last six steps without __syncthreads(), warp-synchronous through volatile",
          ["000:v5"], "pair-adjacent-256", PAIR_ADJ[256],
          "warp_unroll.cu", "reduce_v5_warp_volatile<{T}, 256, PAIR_ADJACENT>"),
    _cuda("v5-volatile-split", "5", "unroll the last warp, split halves (002's indexing)",
          "as v5-volatile, with 002 Reduction 5's plan-A pairing",
          ["002:R5"], "pair-split-256", PAIR_SPLIT[256],
          "warp_unroll.cu", "reduce_v5_warp_volatile<{T}, 256, PAIR_SPLIT>"),
    _cuda("v5-syncwarp", "5", "unroll the last warp, made sound with __syncwarp()",
          "volatile lockstep replaced by read / __syncwarp / write / __syncwarp",
          [], "pair-adjacent-256", PAIR_ADJ[256],
          "warp_unroll.cu", "reduce_v5_warp_syncwarp<{T}, 256, PAIR_ADJACENT>",
          notes="The sound fix seed 002 names for Reduction 5 (no seed code of its own)."),
    _cuda("v5-wrong-nosync", "5", "WRONG demo: last barriers dropped, no volatile",
          "002's first wrong Reduction 5: stale-register race in the last warp",
          ["002:R5-wrong1"], "pair-split-256", PAIR_SPLIT[256],
          "warp_unroll.cu", "reduce_v5_wrong_nosync<{T}, 256>", wrong=True),
    _cuda("v5-wrong-novolatile", "5", "WRONG demo: unrolled last warp without volatile",
          "002's second wrong Reduction 5: stale-register race in the last warp",
          ["002:R5-wrong2"], "pair-split-256", PAIR_SPLIT[256],
          "warp_unroll.cu", "reduce_v5_wrong_novolatile<{T}, 256>", wrong=True),
    *(
        _cuda(f"v6-unroll-{b}", "6", f"complete unroll, block size {b} (template)",
              "the tree loop unrolled on a compile-time block size",
              ["000:v6"], f"pair-adjacent-{b}", PAIR_ADJ[b],
              "warp_unroll.cu", f"reduce_v6_complete_unroll<{{T}}, {b}, PAIR_ADJACENT>")
        for b in (128, 256, 512, 1024)
    ),
    _cuda("v6-unroll-split-256", "6", "complete unroll, split halves (002's indexing)",
          "as v6-unroll-256, with 002 Reduction 6's plan-A pairing",
          ["002:R6", "002:R6-official"], "pair-split-256", PAIR_SPLIT[256],
          "warp_unroll.cu", "reduce_v6_complete_unroll<{T}, 256, PAIR_SPLIT>"),
    _cuda("v7-fixed-chunked", "7", "1024 blocks, many elements per thread (chunked)",
          "grid fixed at 1024 blocks; each thread sums a chunk serially in a register",
          ["000:v7"], "chunked-1024", CHUNKED_1024,
          "many_per_thread.cu", "reduce_v7_fixed_blocks<{T}, 256, MAP_CHUNKED, false>"),
    _cuda("v7-fixed-strided", "7", "1024 blocks, many elements per thread (grid-stride)",
          "grid fixed at 1024 blocks; grid-stride loop into the volatile shared slot (002 R7)",
          ["002:R7"], "grid-stride-1024", STRIDED_1024,
          "many_per_thread.cu", "reduce_v7_fixed_blocks<{T}, 256, MAP_STRIDED, true>"),
    _cuda("v8-shuffle-chunked", "8", "warp shuffle (chunked)",
          "__shfl_down_sync in registers; one 32-slot array and one barrier per block",
          ["000:v8"], "chunked-1024", CHUNKED_1024,
          "many_per_thread.cu", "reduce_v8_shuffle<{T}, 256, MAP_CHUNKED>"),
    _cuda("v8-shuffle-strided", "8", "warp shuffle (grid-stride)",
          "__shfl_down_sync in registers; one 32-slot array and one barrier per block",
          ["002:R8"], "grid-stride-1024", STRIDED_1024,
          "many_per_thread.cu", "reduce_v8_shuffle<{T}, 256, MAP_STRIDED>"),
]

# int32 on every non-wrong ladder stage (issue 4): the kernels are templates on T, int sums wrap
# modulo 2^32 as the seeds' do (docs/int32.md). The wrong demonstrations stay float32 only.
_LADDER_CUDA = [v if v.wrong else replace(v, dtypes=("float32", "int32")) for v in _LADDER_CUDA]

# Seed 004 (issue 4): int, 256 threads; one tile or four adjacent tiles per block, in global or
# shared memory, static or dynamic shared memory. The seed's kernels are int-only; so are these.
QUAD_ADJ_256 = Launch(256, "tiles", tiles=4)
_I32 = {"dtypes": ("int32",), "family": "004"}

_SEED004_CUDA: list[Variant] = [
    _cuda("004-gmem", "004-1", "004 baseline: in place in global memory",
          "in-place complete-unroll tree in global memory, volatile last warp",
          ["004:reduceGmem"], "tile-256", Launch(256, "tiles", in_place=True),
          "unroll_blocks.cu", "reduce_gmem<{T}, 256>", **_I32),
    _cuda("004-smem", "004-2", "the same tree in static shared memory",
          "tile loaded once into __shared__ smem[256]; input no longer written",
          ["004:reduceSmem"], "tile-256", T256,
          "unroll_blocks.cu", "reduce_smem<{T}, 256>", **_I32),
    _cuda("004-gmem-unroll4", "004-3", "4 data blocks per block, in place in global memory",
          "each thread folds its elements of tiles 1..3 into tile 0; grid 4x smaller",
          ["004:reduceGmemUnroll"], "quad-adjacent-256",
          Launch(256, "tiles", tiles=4, in_place=True),
          "unroll_blocks.cu", "reduce_gmem_unroll4<{T}, 256>", **_I32),
    _cuda("004-smem-unroll4", "004-4", "4 data blocks per block, into shared memory",
          "each thread sums 4 tiles' elements in a register, then the shared-memory tree",
          ["004:reduceSmemUnroll"], "quad-adjacent-256", QUAD_ADJ_256,
          "unroll_blocks.cu", "reduce_smem_unroll4<{T}, 256>", **_I32),
    _cuda("004-smem-dyn", "004-5", "reduceSmem with dynamic shared memory",
          "extern __shared__ array sized at launch (256 * sizeof(T))",
          ["004:reduceSmemDyn"], "tile-256", Launch(256, "tiles", dynamic_smem=True),
          "unroll_blocks.cu", "reduce_smem_dyn<{T}, 256>", **_I32),
    _cuda("004-smem-unroll4-dyn", "004-6", "reduceSmemUnroll with dynamic shared memory",
          "extern __shared__ array sized at launch (256 * sizeof(T))",
          ["004:reduceSmemUnrollDyn"], "quad-adjacent-256",
          Launch(256, "tiles", tiles=4, dynamic_smem=True),
          "unroll_blocks.cu", "reduce_smem_unroll4_dyn<{T}, 256>", **_I32),
]

_SEED004_TRITON: list[Variant] = [
    _triton("quad-adjacent-256", "four adjacent tiles of 256 per program", QUAD_ADJ_256,
            "adjacent_tiles_kernel", "four tiles added lane-wise on load, then tl.sum",
            family="004"),
]

_TRITON_CHANGE = "tl.sum over the same tile(s); the compiler chooses the tree"

_LADDER_TRITON: list[Variant] = [
    _triton("tile-256", "one tile of 256 per program", T256, "adjacent_tiles_kernel",
            _TRITON_CHANGE),
    *(
        _triton(f"pair-adjacent-{b}", f"two adjacent tiles of {b} per program", PAIR_ADJ[b],
                "adjacent_tiles_kernel", "two tiles added lane-wise on load, then tl.sum")
        for b in (128, 256, 512, 1024)
    ),
    *(
        _triton(f"pair-split-{b}", f"tile p + tile p+grid of {b} per program", PAIR_SPLIT[b],
                "split_pair_kernel", "two tiles added lane-wise on load, then tl.sum")
        for b in (128, 256)
    ),
    _triton("chunked-1024", "1024 programs, contiguous chunk each", CHUNKED_1024,
            "chunked_kernel", "per-lane accumulator over the chunk, then tl.sum"),
    _triton("grid-stride-1024", "1024 programs, grid-stride loop", STRIDED_1024,
            "grid_stride_kernel", "per-lane accumulator over a grid-stride loop, then tl.sum"),
]
# fmt: on


def _link_twins(cuda: list[Variant], triton: list[Variant]) -> list[Variant]:
    """Give each Triton record its stage (its first CUDA stage) and the CUDA ids it twins."""
    by_id = {t.id: t for t in triton}
    twins_of: dict[str, list[str]] = {t.id: [] for t in triton}
    for c in cuda:
        if c.twin not in by_id:
            raise ValueError(f"{c.id}: twin {c.twin!r} is not a Triton variant")
        twins_of[c.twin].append(c.id)
    out = []
    for t in triton:
        cs = [c for c in cuda if c.id in twins_of[t.id]]
        stage = min((c.stage for c in cs), default="", key=_stage_key)
        names = tuple(d for d in dtypes.NAMES if any(d in c.dtypes for c in cs)) or t.dtypes
        out.append(
            Variant(
                **{
                    **asdict(t),
                    "launch": t.launch,
                    "stage": stage,
                    "dtypes": names,
                    "twin_of": tuple(twins_of[t.id]),
                }
            )
        )
    return out


def _stage_key(stage: str) -> tuple[int, str]:
    head = stage.split("-")[0]
    if "-" in stage and len(head) == 3 and head.isdigit():  # a seed's own rungs, e.g. "004-1"
        return (1000 + int(head), stage)
    return (int(head), stage) if head.isdigit() else (10**6, stage)


# Seed 001: host-driven multi-pass reduction from HOST memory (harness/host.py runs them end to
# end: transfer, the host loop of passes, the scalar back). All use 1024 threads and a tile of
# 2 x 1024 adjacent elements per block; the kernels take 64-bit sizes (max_n far past 2^31). The
# Triton twins run the same host loop with triton/pair-adjacent-1024's kernel (one program = the
# same 2048 elements): one twin per host staging, since V0, V1 and V4 differ only in the block tree
# Triton's compiler chooses by itself.
HOST_TILE = Launch(1024, "tiles", tiles=2)
HOST_TILE_IN_PLACE = Launch(1024, "tiles", tiles=2, in_place=True)
MAX_N_64BIT = 2**62

# fmt: off
_HOST_CUDA: list[Variant] = [
    _cuda("001-v0-gmem-interleaved", "V0", "interleaved pairs in global memory, in place",
          "host loop of passes from pageable host memory; left = start + id*2*stride",
          ["001:V0"], "001-pageable", HOST_TILE_IN_PLACE,
          "host_passes.cu", "reduce_001_v0_gmem_interleaved<{T}>"),
    _cuda("001-v1-gmem-sequential", "V1", "sequential (coalesced) addressing in global memory",
          "left = start + tid, right = left + stride, stride halving (seed's race fixed)",
          ["001:V1"], "001-pageable", HOST_TILE_IN_PLACE,
          "host_passes.cu", "reduce_001_v1_gmem_sequential<{T}>"),
    _cuda("001-v2-pinned", "V2", "pinned (page-locked) host memory",
          "V1's kernel; the host data sits in pinned memory, so the copy is a direct DMA",
          ["001:V2"], "001-pinned", HOST_TILE_IN_PLACE,
          "host_passes.cu", "reduce_001_v1_gmem_sequential<{T}>", staging="pinned"),
    _cuda("001-v3-streams", "V3", "multi-stream pipeline (pinned)",
          "V1's kernel; chunks copied async on several streams, reduced as they arrive",
          ["001:V3"], "001-streams", HOST_TILE_IN_PLACE,
          "host_passes.cu", "reduce_001_v1_gmem_sequential<{T}>", staging="streams"),
    _cuda("001-v4-smem", "V4", "shared memory (pinned, one stream)",
          "V2 with the tree in shared memory; input read once, never written",
          ["001:V4"], "001-pinned", HOST_TILE,
          "host_passes.cu", "reduce_001_v4_smem<{T}, 1024>", staging="pinned"),
]
_HOST_CUDA = [
    Variant(**{**asdict(v), "launch": v.launch, "family": "001", "max_n": MAX_N_64BIT,
               "dtypes": ("float32", "int32"), "staging": v.staging or "pageable"})
    for v in _HOST_CUDA
]

_HOST_TRITON: list[Variant] = [
    _triton(f"001-{staging}", f"Triton twin of the seed-001 host loop, {staging} host memory",
            HOST_TILE, "adjacent_tiles_kernel",
            "same host loop and staging; tl.sum over the same 2 x 1024 tile",
            family="001", max_n=MAX_N_64BIT, staging=staging)
    for staging in ("pageable", "pinned", "streams")
]
# fmt: on

# Peers: what a user would call instead, timed in the same run (how each runs:
# harness.launch.peers).
_PEER_DTYPES = ("float32", "int32")
# fmt: off
_PEERS: list[Variant] = [
    Variant(id="peer/torch.sum", backend="peer", stage="peer", title="torch.sum",
            change="PyTorch's own reduction (int32 input: accumulates and returns int64)",
            dtypes=_PEER_DTYPES, family="peer"),
    Variant(id="peer/cupy.sum-cub", backend="peer", stage="peer", title="cupy.sum, CUB on",
            change="cupy.sum(x, dtype=x.dtype) through cub::DeviceReduce (routine accelerator)",
            dtypes=_PEER_DTYPES, family="peer"),
    Variant(id="peer/cupy.sum-nocub", backend="peer", stage="peer", title="cupy.sum, CUB off",
            change="cupy.sum(x, dtype=x.dtype) through CuPy's own reduction kernel",
            dtypes=_PEER_DTYPES, family="peer"),
    Variant(id="peer/copy", backend="peer", stage="peer", title="device-to-device copy",
            change="not a sum: copy bandwidth, bytes read plus written (2 n itemsize)",
            dtypes=_PEER_DTYPES, family="peer"),
]
# fmt: on

# Past the ladder (issue 8): one variant per backend, built to be the fastest sum at every size.
# Not tile twins (different tiles by design): each names the other as its counterpart. Triton's
# launch record gives the smallest BLOCK / per_sm its autotuner may pick (triton_kernels.fastest),
# which is what the error bound needs; CUDA's is the one configuration it runs with per dtype.
# FASTEST_UNROLL: 16-byte loads in flight per thread, per dtype ({U} in the kernel expression).
# 8 for 4- and 8-byte types; 4 for the 16-bit types, whose conversions need the registers (UNROLL
# 8 measured slower for float16 than 4: harness/fastest_ablation.py, results/<device>/).
# FASTEST_STEP = the most elements a lane adds per grid-stride step over all dtypes (launch.tiles,
# which the error bound uses): 4 x 8 halves = 8 x 4 floats = 32 (8 x 2 doubles = 16).
FASTEST_DTYPES = ("float32", "int32", "float16", "bfloat16", "float64")
FASTEST_UNROLL = {"float32": 8, "int32": 8, "float64": 8, "float16": 4, "bfloat16": 4}
FASTEST_STEP = 32
_FASTEST: list[Variant] = [
    Variant(
        id="cuda/fastest",
        backend="cuda",
        stage="fastest",
        title="one launch: 16-byte loads, SM-sized persistent grid, last-block finish",
        change="past stage 8: LDG.E.128 x8 (x4 for 16-bit types) in flight per thread, grid "
        "from the SM count, "
        "deterministic last-block-done combine instead of a second pass",
        launch=Launch(256, "single-launch", tiles=FASTEST_STEP, max_blocks=2048, per_sm=4),
        source="fastest.cu",
        kernel="reduce_fastest<{T}, 256, {U}, FAST_ACQ_REL>",
        dtypes=FASTEST_DTYPES,
        family="fastest",
        max_n=2**62,
        counterpart="triton/fastest",
        notes="Deterministic for a given device (SM count), n and alignment. float16/bfloat16 "
        "accumulate in float32 and return float32; int32 wraps modulo 2^32.",
    ),
    Variant(
        id="triton/fastest",
        backend="triton",
        stage="fastest",
        title="one launch: autotuned persistent grid-stride, last-program finish",
        change="programs from the SM count, BLOCK / num_warps / num_stages / programs per SM "
        "autotuned per device, dtype and size bucket; atomic-ticket last-program combine",
        launch=Launch(1024, "single-launch", tiles=1, max_blocks=2048, per_sm=2),
        source="fastest.py",
        kernel="fastest_kernel",
        dtypes=FASTEST_DTYPES,
        family="fastest",
        max_n=2**62,
        counterpart="cuda/fastest",
        notes="Deterministic for a given device, n and chosen configuration (cached per process "
        "and size bucket). float16/bfloat16 accumulate in float32 and return float32.",
    ),
]

_CUDA = [*_LADDER_CUDA, *_SEED004_CUDA]
VARIANTS: tuple[Variant, ...] = (
    *_CUDA,
    *_link_twins(_CUDA, [*_LADDER_TRITON, *_SEED004_TRITON]),
    *_HOST_CUDA,
    *_link_twins(_HOST_CUDA, _HOST_TRITON),
    *_FASTEST,
    *_PEERS,
)
BY_ID: dict[str, Variant] = {v.id: v for v in VARIANTS}
if len(BY_ID) != len(VARIANTS):
    raise RuntimeError("duplicate variant ids in the catalogue")


def get(variant_id: str) -> Variant:
    """The record for `variant_id`; a clear error listing the valid ids otherwise."""
    try:
        return BY_ID[variant_id]
    except KeyError:
        raise KeyError(f"unknown variant {variant_id!r}; valid ids: {', '.join(BY_ID)}") from None


def select(
    ids: Iterable[str] | None = None,
    *,
    backend: str | None = None,
    dtype: str | None = None,
    include_wrong: bool = False,
    family: str | None = None,
) -> list[Variant]:
    """Variants in catalogue order, filtered. Explicitly named ids are always included (a wrong
    demonstration runs when asked for by name); otherwise wrong demonstrations only with
    include_wrong."""
    chosen = [get(i) for i in ids] if ids else [v for v in VARIANTS if include_wrong or not v.wrong]
    return [
        v
        for v in chosen
        if (backend is None or v.backend == backend)
        and (dtype is None or dtype in v.dtypes)
        and (family is None or v.family == family)
    ]


def ladder_order(variants: Iterable[Variant]) -> list[Variant]:
    """Stable sort by stage (catalogue order within a stage)."""
    return sorted(variants, key=lambda v: _stage_key(v.stage))


def cuda_sources() -> dict[str, list[Variant]]:
    """CUDA variants grouped by source file."""
    out: dict[str, list[Variant]] = {}
    for v in VARIANTS:
        if v.backend == "cuda" and v.source:
            out.setdefault(v.source, []).append(v)
    return out


def name_expressions(source: str) -> list[str]:
    """Every template instantiation a source file must provide (all its variants x dtypes), each
    once (seed 001's V1, V2 and V3 launch one kernel)."""
    exprs = [v.name_expression(d) for v in cuda_sources().get(source, []) for d in v.dtypes]
    return list(dict.fromkeys(exprs))


def log2_ceil(x: int) -> int:
    return max(0, math.ceil(math.log2(x))) if x > 1 else 0
