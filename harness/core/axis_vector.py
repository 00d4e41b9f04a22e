"""The axis family's vectorized stages (r3 sub-warp rows, r4 split rows, c3 vectorized columns)
and the fastest pair's choice among every stage (ByShape), as axis_geometry's mappings. Each reads
a QUAD, four adjacent elements, as one access where the contiguous dim and the address allow, else
one by one in the same order; every choice (lanes, splits) is a function of the shape only, never
of the GPU (docs/axis.md). The chain lengths are upper bounds for both twins."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.core.axis_geometry import (
    AXIS_BLOCK,
    SPLIT_COLUMNS,
    WARP,
    AxisPass,
    Problem,
    _Mapping,
    _tree,
    cdiv,
    cut,
)
from harness.core.repro_geometry import next_pow2

QUAD = 4
# What one thread folds serially at most in a row tile's tl.sum (a [., 4 x lanes] tile: 4
# elements a thread, 8 when Triton gives a 16-bit thread 16 bytes) and in CUDA's quad fold (3).
QUAD_FOLD = 8
# Loads a thread has in flight before it adds: r4's quads of its row, c3's rows of its quad.
ROW_UNROLL = 4
COLUMN_UNROLL = 8
# r4: a block reads ROW_TILE elements a step (256 threads x ROW_UNROLL quads); a split is a
# multiple of it, at least MIN_SPLIT elements, and the splits aim at about ROW_TARGET_BLOCKS
# blocks (several per SM slot: smaller blocks leave a shorter tail at the end of the pass).
ROW_TILE = AXIS_BLOCK * ROW_UNROLL * QUAD
MIN_SPLIT = 16 * ROW_TILE
ROW_TARGET_BLOCKS = 4096
# c3: about COLUMN_TARGET_BLOCKS blocks, at most MAX_SPLITS splits of at least MIN_SPLIT_ROWS
# rows; reductions of fewer than SHORT_COLUMNS rows get one row group of 256 lanes (each thread
# walks its quad down every row, no fold).
COLUMN_TARGET_BLOCKS = 1024
MAX_SPLITS = 512
MIN_SPLIT_ROWS = 256
SHORT_COLUMNS = 256  # measured on the H100: 256 beat 64 and 128 on (120 or 224, 2^20) along dim 0
# c3 over fewer than SHORT_COLUMNS rows (no row splits): narrower strips until the pass has about
# two blocks per SM slot of the H100's 132 SMs.
SHORT_TARGET_BLOCKS = 256


@dataclass(frozen=True)
class SubwarpRows(_Mapping):
    """r3: groups of `lanes` lanes per row (lanes(p)), 256 / lanes rows per block; lane l adds
    quads l, l + lanes, ... of its row into 4 accumulators, folds them, then log2(lanes) shuffles.
    Chain: ceil(length / (4 lanes)) + QUAD_FOLD + log2(lanes)."""

    name: ClassVar[str] = "sub-warp-rows"
    along: ClassVar[str] = "rows"
    text: ClassVar[str] = (
        "1 to 32 lanes per row (from its length), a 16-byte quad per lane, then shuffles"
    )

    @staticmethod
    def lanes(p: Problem) -> int:
        """The fewest lanes (a power of two, at most a warp) whose quads cover the row."""
        return min(WARP, next_pow2(cdiv(p.length, QUAD)))

    def passes(self, p: Problem) -> list[AxisPass]:
        lanes = self.lanes(p)
        grid = (cdiv(p.outer, AXIS_BLOCK // lanes), 1)
        return [AxisPass("r3", grid, p.outer, p.length, 1, lanes=lanes)]

    def chain_length(self, p: Problem) -> int:
        lanes = self.lanes(p)
        return cdiv(p.length, QUAD * lanes) + QUAD_FOLD + _tree(lanes)


def row_splits(
    p: Problem, target: int = ROW_TARGET_BLOCKS, least: int = MIN_SPLIT
) -> tuple[int, int]:
    """r4: (splits, elements per split), a function of the shape only: about `target` blocks
    over all rows, each split a multiple of ROW_TILE and at least `least` elements (one split
    when there are rows enough)."""
    return cut(p.length, min(cdiv(target, p.outer), cdiv(p.length, least)), ROW_TILE)


@dataclass(frozen=True)
class SplitRows(_Mapping):
    """r4, one launch: block (o, k) adds split k of row o (row_splits), thread t its quads t,
    t + 256, ... into 4 accumulators, folded and then a block fold (5 shuffles + 3); with S > 1
    splits each block writes its partial and takes a ticket on its row's counter, and the row's
    last block adds the S partials, thread t the partials t, t + 256, ..., then the same fold.
    Chain: ceil(split / 1024) + 2 x QUAD_FOLD + log2(256) (the Triton tile gives a thread 16
    elements to fold), and with S > 1 the combine's ceil(S / 256) + QUAD_FOLD + log2(256) added
    (a Triton thread may hold several of the [256] combine tile's partials: QUAD_FOLD of slack)."""

    name: ClassVar[str] = "split-rows"
    along: ClassVar[str] = "rows"
    text: ClassVar[str] = (
        "rows split over blocks (16-byte loads), the row's last block adding the splits"
    )
    target: int = ROW_TARGET_BLOCKS  # row_splits' aim and least split (the Triton fastest's:
    least: int = MIN_SPLIT  # SPLIT_ROWS_TRITON)

    def splits(self, p: Problem) -> tuple[int, int]:
        return row_splits(p, self.target, self.least)

    def passes(self, p: Problem) -> list[AxisPass]:
        s, chunk = self.splits(p)
        return [AxisPass("r4", (p.outer, s), p.outer, p.length, 1, chunk)]

    def chain_length(self, p: Problem) -> int:
        s, chunk = self.splits(p)
        per = cdiv(min(chunk, p.length), AXIS_BLOCK * QUAD) + 2 * QUAD_FOLD + _tree(AXIS_BLOCK)
        return per + (cdiv(s, AXIS_BLOCK) + QUAD_FOLD + _tree(AXIS_BLOCK) if s > 1 else 0)


def column_lanes(p: Problem) -> int:
    """c3's first pass: lanes per strip row (a power of two), the widest strip: enough quads to
    cover the batch's columns, at most a warp (8 row groups); over fewer than SHORT_COLUMNS rows,
    which are never split, 256 (one row group), halved (to at least one lane) until the pass has
    SHORT_TARGET_BLOCKS blocks (one row group of 256 lanes over (224, 2048) was 2 blocks: 0.38x
    torch.sum)."""
    short = p.length < SHORT_COLUMNS
    lanes = min(AXIS_BLOCK if short else WARP, next_pow2(cdiv(p.inner, QUAD)))
    while short and lanes > 1 and p.outer * cdiv(p.inner, QUAD * lanes) < SHORT_TARGET_BLOCKS:
        lanes //= 2
    return lanes


def column_splits(
    p: Problem, target: int = COLUMN_TARGET_BLOCKS, lanes: int = 0, least: int = MIN_SPLIT_ROWS
) -> tuple[int, int]:
    """c3: (splits, rows per split), a function of the shape only: about `target` blocks, at
    most MAX_SPLITS splits of at least `least` rows, a multiple of the row groups (`lanes`:
    column_lanes by default)."""
    lanes = lanes or column_lanes(p)
    groups = AXIS_BLOCK // lanes
    blocks = p.outer * cdiv(p.inner, QUAD * lanes)
    return cut(p.length, min(cdiv(target, blocks), MAX_SPLITS, cdiv(p.length, least)), groups)


def _column_chain(p: Problem, chunk: int, lanes: int) -> int:
    groups = AXIS_BLOCK // lanes
    return cdiv(min(chunk, p.length), groups) + _tree(groups) + COLUMN_UNROLL


@dataclass(frozen=True)
class VectorColumns(_Mapping):
    """c3, one launch: block (b, k) owns a strip of 4 x lanes columns (column_lanes) of batch b
    over split k of the rows (column_splits); thread (g, l) adds rows g, g + G, ... (G = 256 /
    lanes row groups) of its quad's 4 columns; the G groups are folded in shared memory; with
    S > 1 splits each block writes its strip's partials and the strip's last block (a ticket)
    adds the S partials of each column in the same tile, thread (g, l) splits g, g + G, ..., and
    the same fold. Chain: ceil(rows / G) + log2(G) + COLUMN_UNROLL (slack for the rows of the
    group dim Triton's layout may give one thread to fold) for the split, and with S > 1 the
    combine's ceil(S / G) + log2(G) + COLUMN_UNROLL added: an element's partial enters one
    column's combine chain once."""

    name: ClassVar[str] = "vector-columns"
    along: ClassVar[str] = "columns"
    text: ClassVar[str] = (
        "a 16-byte quad of columns per thread, the tile shaped to the output's width"
    )
    target: int = COLUMN_TARGET_BLOCKS  # column_splits' aim (the Triton fastest's: 256)
    narrow_target: int = 0  # the Triton fastest's aim below NARROW_COLUMNS columns (narrow)

    def narrow(self, p: Problem) -> bool:
        """The narrow rule applies: a narrow_target, few columns, rows enough to split."""
        wide = p.inner >= NARROW_COLUMNS or p.length < SHORT_COLUMNS
        return bool(self.narrow_target) and not wide

    def lanes(self, p: Problem) -> int:
        """column_lanes, or under the narrow rule about 8 strips of at least 8 lanes."""
        lanes = column_lanes(p)
        return min(lanes, max(8, next_pow2(cdiv(p.inner, 8 * QUAD)))) if self.narrow(p) else lanes

    def splits(self, p: Problem) -> tuple[int, int]:
        if self.narrow(p):  # about narrow_target programs, splits of at least 2 row groups
            lanes = self.lanes(p)
            return column_splits(p, self.narrow_target, lanes, 2 * (AXIS_BLOCK // lanes))
        return column_splits(p, self.target)

    def passes(self, p: Problem) -> list[AxisPass]:
        (s, chunk), lanes = self.splits(p), self.lanes(p)
        grid = (p.outer * cdiv(p.inner, QUAD * lanes), s)
        return [AxisPass("c3", grid, p.outer, p.length, p.inner, chunk, lanes)]

    def chain_length(self, p: Problem) -> int:
        s, chunk = self.splits(p)
        lanes = self.lanes(p)
        split = _column_chain(p, chunk, lanes)
        # with S > 1, the combine over the (outer, S, inner) partials
        return split if s == 1 else split + _column_chain(replace(p, length=s), s, lanes)


SUBWARP_ROWS = SubwarpRows()
SPLIT_ROWS = SplitRows()
VECTOR_COLUMNS = VectorColumns()
# The Triton fastest's own splits of the same stages (sweeps of the twins' kernels,
# experiments/axis_triton_splits; docs/axis.md has the numbers): its c3 ends each program in a
# cross-warp tl.sum through shared memory (bank conflicts), so it wants fewer, longer programs
# than the CUDA c3, except below NARROW_COLUMNS 4-byte columns, where the H100 and the H200 both
# wanted about 8 narrow strips and 512 programs; its r4 wants more splits of few long rows.
SPLIT_ROWS_TRITON = SplitRows(target=512, least=2 * ROW_TILE)
NARROW_COLUMNS = 512
VECTOR_COLUMNS_TRITON = VectorColumns(target=256, narrow_target=512)

# The fastest pair's choice (ByShape.pick): rows of at most SHORT_ROW elements, when there are at
# least MANY_ROWS of them, get a few lanes each (r3); other rows are split over blocks (r4: one
# split, a block per row, when there are rows enough). Columns: c3, except for the Triton twin on
# inputs of at least TILE_ROWS rows of TILE_COLUMNS columns (c2: Triton's compiled c2 loop keeps
# more loads in flight than its c3 there; the CUDA c2 loop, one load at a time, never wins).
SHORT_ROW = 1024
MANY_ROWS = 2048
TILE_ROWS = 512
TILE_COLUMNS = (512, 8192)


@dataclass(frozen=True)
class ByShape(_Mapping):
    """The fastest pair: one of the stages' mappings, picked from the shape alone (pick);
    `triton` (the Triton twin's) sends moderately wide column sums of many rows to c2 and splits
    r4 and c3 its own way (SPLIT_ROWS_TRITON, VECTOR_COLUMNS_TRITON)."""

    name: ClassVar[str] = "by-shape"
    along: ClassVar[str] = "any"
    triton: bool = False

    def pick(self, p: Problem) -> _Mapping:
        if p.rows:
            if p.length <= SHORT_ROW and p.outer >= MANY_ROWS:
                return SUBWARP_ROWS
            return SPLIT_ROWS_TRITON if self.triton else SPLIT_ROWS
        lo, hi = TILE_COLUMNS
        if self.triton and p.length >= TILE_ROWS and lo <= p.inner <= hi:
            return SPLIT_COLUMNS
        # 16-bit columns keep the CUDA's c3: fewer programs measured slower there ((262144, 128)
        # bfloat16 along dim 0: 46 us in 512 splits, 59 in 256)
        return VECTOR_COLUMNS_TRITON if self.triton and p.itemsize >= 4 else VECTOR_COLUMNS

    def passes(self, p: Problem) -> list[AxisPass]:
        return self.pick(p).passes(p)

    def chain_length(self, p: Problem) -> int:
        return self.pick(p).chain_length(p)

    def describe(self) -> str:
        own = (
            f", c2 for {TILE_ROWS}+ rows of {TILE_COLUMNS[0]}-{TILE_COLUMNS[1]} columns, "
            "r4 and c3 with their own splits"
        )
        return "by shape: r3 for many short rows, r4 for other rows, c3 for columns" + (
            own if self.triton else ""
        )


BY_SHAPE = ByShape()
BY_SHAPE_TRITON = ByShape(triton=True)
