"""Catalogue records, part 4: family "axis", sums along one dim of a 2-D / 3-D tensor
(docs/axis.md). Read through harness.core.catalogue (AXIS_VARIANTS, get_axis).

Kept OUT of catalogue.VARIANTS on purpose: every consumer of VARIANTS sums a 1-D input to a
scalar, and one that forgot a filter would break. Every launch kind's kernel is named once.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.core import axis_geometry as g
from harness.core import axis_vector as vec
from harness.core import dtypes
from harness.core.variant import MAX_N_32BIT, Variant

FAMILY = "axis"
# 16-bit floats are added in float32 and the sum rounded once to the input's dtype (as torch.sum);
# int32 sums wrap modulo 2^32 as the 1-D ladder's do (docs/axis.md#the-api).
AXIS_DTYPES = ("float32", "int32", "float16", "bfloat16")
SOURCE_CUDA = "axis.cu"
SOURCE_TRITON = "axis.py"

# The CUDA and Triton kernels of each launch kind (AxisPass.kind); {T} the element type, {B} the
# block size; c2's two passes read {I} and write {O}, through partials in the accumulator's type.
# fmt: off
KERNELS: dict[str, tuple[str, str]] = {
    "r0":    ("axis_r0_thread_per_row<{T}, {B}>",          "rows_thread_kernel"),
    "r1":    ("axis_r1_block_per_row<{T}, {B}>",           "rows_block_kernel"),
    "r2":    ("axis_r2_warp_per_row<{T}, {B}>",            "rows_warp_kernel"),
    "c0":    ("axis_c0_thread_per_column<{I}, {O}, {B}>",  "columns_thread_kernel"),
    "tiles": ("axis_c1_column_tiles<{I}, {O}, {B}>",       "column_tiles_kernel"),
    "r3":    ("axis_r3_subwarp_rows<{T}, {B}>",            "rows_subwarp_kernel"),
    "r4":    ("axis_r4_split_rows<{T}, {B}>",              "rows_split_kernel"),
    "c3":    ("axis_c3_vector_columns<{T}, {B}>",          "columns_vector_kernel"),
}
# fmt: on
CUDA_KERNELS: dict[str, str] = {kind: cuda for kind, (cuda, _) in KERNELS.items()}
TRITON_KERNELS: dict[str, str] = {kind: triton for kind, (_, triton) in KERNELS.items()}
# The kind whose first pass may write partials in the accumulator's type, and the one reading them.
SPLIT_KINDS = ("tiles",)
COMBINE_KINDS = ("c0",)
# The kinds combining their splits in their own launch: partials and ticket counters after x, out.
ONE_LAUNCH_SPLITS = ("r4", "c3")


@dataclass(frozen=True)
class AxisLaunch:
    """An axis variant's geometry: block size and mapping (harness.core.axis_geometry)."""

    threads: int
    mapping: g.AxisMapping

    @property
    def num_warps(self) -> int:
        return self.threads // 32

    def describe(self) -> str:
        return self.mapping.describe()


def name_expression(kind: str, src: str, dst: str | None = None) -> str:
    """The CUDA instantiation of launch kind `kind` reading dtype `src` and writing `dst`
    (default: src), at the axis family's block size."""
    cxx = dtypes.get(src).cxx
    return CUDA_KERNELS[kind].format(T=cxx, I=cxx, O=dtypes.get(dst or src).cxx, B=g.AXIS_BLOCK)


def name_expressions() -> list[str]:
    """Every instantiation axis.cu must provide: each launch kind x dtype, and for the 16-bit
    floats the two-pass splits' passes through float32 partials."""
    exprs = []
    for d in AXIS_DTYPES:
        acc = dtypes.get(d).sum_dtype
        exprs += [name_expression(k, d) for k in CUDA_KERNELS]
        exprs += [name_expression(k, d, acc) for k in SPLIT_KINDS]
        exprs += [name_expression(k, acc, d) for k in COMBINE_KINDS]
    return list(dict.fromkeys(exprs))


def display_kernel(kind: str) -> str:
    """A record's kernel field: the kind's template with {T} for the element type."""
    return CUDA_KERNELS[kind].replace("{I}", "{T}").replace("{O}", "{T}")


def _pair(stage: str, slug: str, kind: str | None, mapping: g.AxisMapping, title: str,
          change: str, triton_change: str,
          triton_mapping: g.AxisMapping | None = None) -> list[Variant]:  # fmt: skip
    """A CUDA stage and its Triton twin (or, kind None, the fastest pair: counterparts, each with
    its own choice when triton_mapping is given)."""
    common = {"stage": stage, "family": FAMILY, "dtypes": AXIS_DTYPES, "max_n": MAX_N_32BIT}
    shown = map(display_kernel, [kind] if kind else CUDA_KERNELS)
    cuda_kernel = ("" if kind else "by shape: ") + ", ".join(shown)
    triton_kernel = TRITON_KERNELS[kind] if kind else "by shape"
    twin = kind is not None
    cuda = Variant(
        id=f"cuda/axis-{slug}", backend="cuda", title=title, change=change,
        launch=AxisLaunch(g.AXIS_BLOCK, mapping),
        source=SOURCE_CUDA, kernel=cuda_kernel, twin=f"triton/axis-{slug}" if twin else None,
        counterpart=None if twin else f"triton/axis-{slug}", **common)  # fmt: skip
    triton = Variant(
        id=f"triton/axis-{slug}", backend="triton", title=title, change=triton_change,
        launch=AxisLaunch(g.AXIS_BLOCK, triton_mapping or mapping),
        source=SOURCE_TRITON, kernel=triton_kernel,
        twin_of=(cuda.id,) if twin else (), counterpart=None if twin else cuda.id,
        **common)  # fmt: skip
    return [cuda, triton]


_TL_SUM = "tl.sum over the same tile; the compiler chooses the tree"
# fmt: off
AXIS_VARIANTS: tuple[Variant, ...] = (
    *_pair("r0", "r0-thread-row", "r0", g.THREAD_PER_ROW,
           "rows: a thread per row (the naive port)",
           "the 1-D loop moved inside a thread: each thread adds its row serially; a warp's loads "
           "are `length` elements apart (uncoalesced)",
           "a program per 256 rows, a [256] accumulator stepping along the rows"),
    *_pair("r1", "r1-block-row", "r1", g.BLOCK_PER_ROW,
           "rows: a block per row, shared-memory tree",
           "the 1-D ladder's stage 3 per row: 256 threads read the row coalesced, then the "
           "sequential-addressing tree in shared memory",
           "a program per row, [256] accumulator, " + _TL_SUM),
    *_pair("r2", "r2-warp-row", "r2", g.WARP_PER_ROW,
           "rows: a warp per row, shuffles (8 rows per block)",
           "a warp per row: no shared memory, no barrier, 5 shuffles; 8 rows per block, so short "
           "rows no longer leave 7/8 of a block idle",
           "a program per 8 rows, an [8, 32] accumulator, " + _TL_SUM),
    *_pair("c0", "c0-thread-column", "c0", g.THREAD_PER_COLUMN,
           "columns: a thread per column (coalesced across columns)",
           "a thread per output column adds down its column; a warp reads 32 adjacent columns "
           "of one row: coalesced with no tree at all",
           "a program per 256 columns, a [256] accumulator stepping down the rows"),
    *_pair("c1", "c1-column-tiles", "tiles", g.COLUMN_TILES,
           "columns: 2-D tiles, row groups folded in shared memory",
           "a block per 32-column strip: 8 row groups walk the rows in parallel, their partials "
           "folded in shared memory; 8x the threads of c0 per column",
           "a program per strip, an [8, 32] accumulator, tl.sum over the row groups"),
    *_pair("c2", "c2-split-columns", "tiles", g.SPLIT_COLUMNS,
           "columns: the reduced dim split across blocks, deterministic second pass",
           "tall-skinny inputs: c1's tiles over row splits write partials (no atomics), and c0's "
           "kernel adds each column's partials in split order",
           "the same splits and partials, then the same second pass"),
    *_pair("r3", "r3-subwarp-rows", "r3", vec.SUBWARP_ROWS,
           "rows: sub-warp groups sized to the row, 16-byte loads",
           "1 to 32 lanes per row chosen from its length (256 / lanes rows per block), each lane "
           "reading 4 adjacent elements as one load, then shuffles of that width",
           "a program per 256 / lanes rows, a [rows, 4 x lanes] accumulator, " + _TL_SUM),
    *_pair("r4", "r4-split-rows", "r4", vec.SPLIT_ROWS,
           "rows: each row split across blocks, combined in the same launch",
           "few long rows: a row's splits go to several blocks, each with 16-byte loads and 4 "
           "in flight per thread, writing a partial (no atomics on the values); the row's last "
           "block (a ticket) adds its partials in a fixed order in the same launch",
           "a program per split, a [4096] tile a step, tl.sum; the row's last program (a "
           "ticket) adds the partials, a [256] tile a step"),
    *_pair("c3", "c3-vector-columns", "c3", vec.VECTOR_COLUMNS,
           "columns: vectorized along the output, the tile shaped to its width",
           "each thread 4 adjacent columns as one load; 256 lanes for wide outputs over few rows, "
           "32 lanes x 8 row groups otherwise (fewer lanes for narrow batches); the rows split "
           "across blocks when the tiles are too few, each strip's last block (a ticket) adding "
           "its partials in split order in the same launch",
           "a program per strip, a [4 x groups, 4 x lanes] tile, tl.sum over the rows"),
    *_pair("fastest", "fastest", None, vec.BY_SHAPE,
           "axis fastest: a stage picked from the shape",
           "rows: r3 for many rows of at most 1024 elements, else r4; columns: c3",
           "the same choice among the Triton twins, except c2 for column sums of 512 rows or "
           "more of 512 to 8192 columns (measured faster than Triton's c3 there), and r4 and c3 "
           "split their own way: fewer, longer c3 programs (Triton's fold through shared memory "
           "ends each one) and more r4 splits of few long rows",
           vec.BY_SHAPE_TRITON),
)
# fmt: on
AXIS_BY_ID: dict[str, Variant] = {v.id: v for v in AXIS_VARIANTS}
