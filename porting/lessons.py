"""The porting doc's prose: what each CUDA optimization becomes in Triton, per (family, stage),
and the porting checklist. Words only: every number in docs/porting.md comes from the census and
the committed results (porting.doc)."""

# What each optimization becomes in Triton: (family, stage) -> (how, explanation). `how` is one of
# HOW; prose only (numbers come from the census and the results). A stage missing here is still
# documented, with its catalogue text and a pointer to this table.
HOW = (
    "done by the compiler",
    "tile shape",
    "num_warps",
    "program count",
    "host code",
    "not expressible",
)
LESSONS: dict[tuple[str, str], tuple[str, str]] = {
    ("ladder", "0"): (
        "done by the compiler",
        "Triton has no in-place tree in global memory: `tl.sum` reduces the loaded tile in "
        "registers, so the twin of the baseline already is what stages 1-3 work towards. What "
        "stays the same is the tile: one program per CUDA block, BLOCK = the block's threads.",
    ),
    ("ladder", "1"): (
        "done by the compiler",
        "Staging the tile in shared memory is the compiler's decision. A Triton kernel has no "
        "`__shared__`; the twin uses shared memory only for the few per-warp partials that "
        "cross warps (its dynamic shared memory in the census).",
    ),
    ("ladder", "2"): (
        "done by the compiler",
        "Divergence inside a warp cannot be written in Triton: a program's lanes all execute "
        "every operation on the tile. The twin is unchanged.",
    ),
    ("ladder", "3"): (
        "done by the compiler",
        "Bank conflicts are a property of the shared-memory layout, which Triton chooses (and "
        "swizzles where it matters). The twin is unchanged.",
    ),
    ("ladder", "4"): (
        "tile shape",
        "The first add during load is a tile shape: the program loads TILES = 2 tiles and adds "
        "them lane-wise before `tl.sum` (adjacent tiles) or loads tile p and tile p + grid "
        "(split halves), with half as many programs. Halving the threads instead (plan B) is "
        "BLOCK = 128 with `num_warps` = 4.",
    ),
    ("ladder", "5"): (
        "done by the compiler",
        "Unrolling the last warp without barriers is what `tl.sum` does inside a warp: "
        "shuffles, no barrier, no shared memory. The `volatile` warp-synchronous idiom (and its "
        "race) cannot be written in Triton at all.",
    ),
    ("ladder", "6"): (
        "done by the compiler",
        "BLOCK is a `tl.constexpr`, so the reduction tree is always completely unrolled for the "
        "block size; the CUDA template parameter is the constexpr. Block sizes 128..1024 are "
        "BLOCK with `num_warps` = BLOCK / 32.",
    ),
    ("ladder", "7"): (
        "program count",
        "A fixed grid with many elements per thread is a program count plus a loop inside the "
        "program: the grid is 1024 programs, each lane keeps an accumulator over its chunk "
        "(or grid-stride loop), and `tl.sum` runs once at the end.",
    ),
    ("ladder", "8"): (
        "done by the compiler",
        "Warp shuffles are how `tl.sum` lowers on NVIDIA GPUs (the census counts shuffles in "
        "every Triton kernel). There is no shuffle intrinsic to call in Triton's language, and "
        "none is needed: the twin is the one of stage 7.",
    ),
    # Seed 004 (int32, 256 threads; twins triton/tile-256 and triton/quad-adjacent-256).
    ("004", "004-1"): (
        "done by the compiler",
        "As ladder stage 0: Triton has no in-place tree in global memory; the twin loads the "
        "tile and `tl.sum` reduces it in registers, so it never writes its input and needs no "
        "scratch copy. The tile is the same: BLOCK = 256, one program per block.",
    ),
    ("004", "004-2"): (
        "done by the compiler",
        "Moving the tree into `__shared__` memory is the compiler's decision in Triton (as ladder "
        "stage 1): the twin is unchanged, and its only shared memory is the scratch for the "
        "per-warp partials of `tl.sum`.",
    ),
    ("004", "004-3"): (
        "tile shape",
        "Four data blocks per block is a tile shape: the twin loads TILES = 4 adjacent tiles and "
        "adds them lane-wise before `tl.sum`, with a quarter as many programs; the four loads are "
        "independent of one another, as in the CUDA thread. Folding them into "
        "tile 0 in place has no Triton counterpart (nor any need for one).",
    ),
    ("004", "004-4"): (
        "tile shape",
        "The same TILES = 4 twin as the global-memory unroll: the CUDA thread's register sum of "
        "its four elements is the lane-wise add of the four `tl.load`s; where the tree then runs "
        "(shared memory here, global memory in 004-3) is the compiler's business in Triton.",
    ),
    ("004", "004-5"): (
        "done by the compiler",
        "Static versus dynamic shared memory is not a choice in Triton: every Triton kernel's "
        "scratch is dynamic shared memory, sized by the compiler (the `shared` of the compiled "
        "kernel: the census's dynamic shared memory) and passed at launch by Triton's "
        "launcher. The twin is 004-2's.",
    ),
    ("004", "004-6"): (
        "done by the compiler",
        "As 004-5, for the four-tile kernel: only the declaration of the shared array changed, "
        "which Triton does not let you write; the twin is 004-4's (TILES = 4).",
    ),
    # Seed 001 (data starts in host memory; harness/studies/host_plan.py runs the same host loop
    # for both backends; every twin reads the same 2 x 1024 tile with BLOCK = 1024, num_warps = 32).
    ("001", "V0"): (
        "done by the compiler",
        "The interleaved in-place tree in global memory has no Triton form: the twin loads the "
        "block's 2 x 1024 elements (TILES = 2, BLOCK = 1024, `num_warps` = 32) and `tl.sum` "
        "reduces them. The host side (copy to the device, the loop of passes over the partials, "
        "the scalar back) is the same Python for both backends (harness/studies/host_plan.py).",
    ),
    ("001", "V1"): (
        "done by the compiler",
        "Sequential (coalesced) addressing, and the read/write race it fixes, are about which "
        "thread touches which word of the tree; Triton's tree belongs to the compiler, so V1 "
        "has V0's twin.",
    ),
    ("001", "V2"): (
        "host code",
        "Pinned host memory changes the copy, not the kernel: V2 launches V1's kernel, and its "
        "twin is the same Triton kernel fed from pinned host memory by the same host code.",
    ),
    ("001", "V3"): (
        "host code",
        "Several streams overlap copies and passes: host code again. Triton launches on the "
        "current torch stream, so the twin runs the same chunked multi-stream loop with the "
        "same kernel.",
    ),
    ("001", "V4"): (
        "done by the compiler",
        "The tree in shared memory with the first add during load is what every 001 twin "
        "already does (TILES = 2, then `tl.sum`); V4's twin is V2's (pinned, one stream).",
    ),
    # Past the ladder: a counterpart, not a tile twin (its own tiles by design).
    ("fastest", "fastest"): (
        "program count",
        "triton/fastest is cuda/fastest's counterpart, not its twin. The SM-sized persistent "
        "grid is a program count (programs per SM times SMs, capped) with a grid-stride loop "
        "inside the program. The 16-byte loads are done by the compiler, which vectorizes a load "
        "only where it can prove the pointer 16-byte aligned and the load unmasked: the wrapper "
        "passes an aligned bulk view and loads full tiles without a mask. Loads in flight per "
        "thread (CUDA's UNROLL) follow from BLOCK / (32 x `num_warps`) and `num_stages`, which "
        "an autotuner picks per device, dtype and size. The one-launch finish is expressible: "
        "store the partial, `tl.debug_barrier()`, an `acq_rel` `tl.atomic_add` ticket, and the "
        "last program sums the partials in program order with volatile loads.",
    ),
    ("reproducible", "repro"): (
        "tile shape",
        "triton/reproducible is cuda/reproducible's counterpart and gives the same bits. What "
        "fixes the bits is a shape, not a schedule: 1024 lanes per chunk (BLOCK = 1024) and the "
        "lane tree written out as ten `tl.reshape(v, [K // 2, 2])` + `tl.split` levels, since "
        "`tl.sum` / `tl.reduce` choose their own combining order. The float64 TwoSum steps are "
        "plain adds and subtracts, so neither compiler can contract or reorder them. The CUDA "
        "block's shuffle tree becomes shared-memory layout conversions in Triton; the one-launch "
        "finish becomes a second launch, which changes no bit.",
    ),
}

CHECKLIST = """\
1. **Find the tile.** Write down which elements one CUDA block reads (one tile, two tiles, a
   grid-stride loop, a contiguous chunk). That is the Triton program's `tl.arange`/`tl.load`
   pattern; BLOCK = threads per block, `num_warps` = threads / 32, grid = number of blocks.
2. **Drop what the compiler owns.** `__shared__` arrays, `__syncthreads()`, the tree loop,
   divergence tricks, bank-conflict-free indexing, last-warp unrolling and warp shuffles all
   become one `tl.sum` (check the census: SHFL and a single BAR in every Triton twin).
3. **Keep what changes the work.** Adds during load (`TILES`), the number of programs, and a
   per-lane accumulator loop for many elements per thread are expressed in the kernel and grid.
4. **Match types and order before comparing.** Accumulate in the same type; give each lane the
   same elements in the same order as the CUDA thread, then per-block partials can be compared
   exactly on integer-valued data.
5. **Check the compiled code, not the source.** Registers, spills (local memory), shared memory,
   global-load width, barriers and shuffles come out of `reduce-ladder inspect`; run it for your
   target `--arch` after every change.
6. **Measure against peers.** Time the kernel beside `torch.sum` / CUB and the copy bandwidth
   on the same GPU; a reduction is memory-bound, so GB/s against the copy is the figure of merit.
"""
