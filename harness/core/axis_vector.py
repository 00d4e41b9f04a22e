"""The axis family's vectorized stages (r3 sub-warp rows, r4 split rows, c3 vectorized columns)
and the fastest pair's choice among every stage (ByShape), as axis_geometry's mappings. Each reads
a QUAD, four adjacent elements; how, and each stage's chain: docs/axis.md#the-stages."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from harness.core.axis_geometry import (
    AXIS_BLOCK,
    MIN_SPLIT_ROWS,
    SPLIT_COLUMNS,
    WARP,
    AxisMapping,
    AxisPass,
    Problem,
    cut,
)
from harness.core.mappings import cdiv, next_pow2, tree_depth

QUAD = 4
# What one thread folds serially at most in a row tile's tl.sum (a [., 4 x lanes] tile: 4
# elements a thread, 8 when Triton gives a 16-bit thread 16 bytes) and in CUDA's quad fold (3).
QUAD_FOLD = 8
# Loads a thread has in flight before it adds: r4's quads of its row, c3's rows of its quad.
ROW_UNROLL = 4
COLUMN_UNROLL = 8
# r4: a block reads ROW_TILE elements a step; splits of at least MIN_SPLIT elements aim at about
# ROW_TARGET_BLOCKS blocks (several per SM slot: a shorter tail at the end of the pass).
ROW_TILE = AXIS_BLOCK * ROW_UNROLL * QUAD
MIN_SPLIT = 16 * ROW_TILE
ROW_TARGET_BLOCKS = 4096
# c3: about COLUMN_TARGET_BLOCKS blocks, at most MAX_SPLITS splits of at least MIN_SPLIT_ROWS
# rows (axis_geometry's); fewer than SHORT_COLUMNS rows get one row group of 256 lanes.
COLUMN_TARGET_BLOCKS = 1024
MAX_SPLITS = 512
SHORT_COLUMNS = 256  # measured on the H100: 256 beat 64 and 128 on (120 or 224, 2^20) along dim 0
# c3 over fewer than SHORT_COLUMNS rows (no row splits): narrower strips until the pass has about
# two blocks per SM slot of the H100's 132 SMs.
SHORT_TARGET_BLOCKS = 256


@dataclass(frozen=True)
class SubwarpRows(AxisMapping):
    """r3: `lanes` lanes per row (lanes(p)), 256 / lanes rows per block."""

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
        return cdiv(p.length, QUAD * lanes) + QUAD_FOLD + tree_depth(lanes)


@dataclass(frozen=True)
class SplitRows(AxisMapping):
    """r4, one launch: block (o, k) adds split k of row o (splits); with S > 1 splits the row's
    last block adds the S partials. 2 x QUAD_FOLD: the Triton tile gives a thread 16 elements to
    fold; the combine's QUAD_FOLD: a Triton thread may hold several partials."""

    name: ClassVar[str] = "split-rows"
    along: ClassVar[str] = "rows"
    text: ClassVar[str] = (
        "rows split over blocks (16-byte loads), the row's last block adding the splits"
    )
    target: int = ROW_TARGET_BLOCKS  # the splits' aim and least split (the Triton fastest's:
    least: int = MIN_SPLIT  # SPLIT_ROWS_TRITON)

    def splits(self, p: Problem) -> tuple[int, int]:
        """(splits, elements per split) over p.outer rows, in whole ROW_TILEs (cut)."""
        return cut(p.length, p.outer, self.target, self.least, ROW_TILE)

    def passes(self, p: Problem) -> list[AxisPass]:
        s, chunk = self.splits(p)
        return [AxisPass("r4", (p.outer, s), p.outer, p.length, 1, chunk)]

    def chain_length(self, p: Problem) -> int:
        s, chunk = self.splits(p)
        per = cdiv(min(chunk, p.length), AXIS_BLOCK * QUAD) + 2 * QUAD_FOLD + tree_depth(AXIS_BLOCK)
        return per + (cdiv(s, AXIS_BLOCK) + QUAD_FOLD + tree_depth(AXIS_BLOCK) if s > 1 else 0)


def _column_chain(p: Problem, chunk: int, lanes: int) -> int:
    groups = AXIS_BLOCK // lanes
    return cdiv(min(chunk, p.length), groups) + tree_depth(groups) + COLUMN_UNROLL


@dataclass(frozen=True)
class VectorColumns(AxisMapping):
    """c3, one launch: block (b, k) owns a strip of 4 x lanes columns (lanes) of batch b over
    split k of the rows (splits); with S > 1 the strip's last block adds the S partials.
    COLUMN_UNROLL: slack for the rows Triton's layout may give one thread to fold."""

    name: ClassVar[str] = "vector-columns"
    along: ClassVar[str] = "columns"
    text: ClassVar[str] = (
        "a 16-byte quad of columns per thread, the tile shaped to the output's width"
    )
    target: int = COLUMN_TARGET_BLOCKS  # the splits' aim (the Triton fastest's: 256)
    narrow_target: int = 0  # the Triton fastest's aim below NARROW_COLUMNS columns (narrow)

    def narrow(self, p: Problem) -> bool:
        """The narrow rule applies: a narrow_target, few columns, rows enough to split."""
        wide = p.inner >= NARROW_COLUMNS or p.length < SHORT_COLUMNS
        return bool(self.narrow_target) and not wide

    def lanes(self, p: Problem) -> int:
        """Lanes per strip row: enough quads for the batch's columns, at most a warp; over fewer
        than SHORT_COLUMNS rows 256, halved until the pass has SHORT_TARGET_BLOCKS blocks (one row
        group of 256 lanes over (224, 2048) was 2 blocks: 0.38x torch.sum). Under the narrow rule
        about 8 strips of at least 8 lanes."""
        short = p.length < SHORT_COLUMNS
        lanes = min(AXIS_BLOCK if short else WARP, next_pow2(cdiv(p.inner, QUAD)))
        while short and lanes > 1 and p.outer * cdiv(p.inner, QUAD * lanes) < SHORT_TARGET_BLOCKS:
            lanes //= 2
        return min(lanes, max(8, next_pow2(cdiv(p.inner, 8 * QUAD)))) if self.narrow(p) else lanes

    def splits(self, p: Problem) -> tuple[int, int]:
        """(splits, rows per split) in whole row groups (cut): about `target` blocks in splits of
        at least MIN_SPLIT_ROWS rows; under the narrow rule about narrow_target blocks in splits
        of at least 2 row groups."""
        lanes = self.lanes(p)
        groups, blocks = AXIS_BLOCK // lanes, p.outer * cdiv(p.inner, QUAD * lanes)
        if self.narrow(p):
            return cut(p.length, blocks, self.narrow_target, 2 * groups, groups, MAX_SPLITS)
        return cut(p.length, blocks, self.target, MIN_SPLIT_ROWS, groups, MAX_SPLITS)

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
# The Triton fastest's own splits of the same stages (experiments/axis_triton_splits; why and the
# numbers: docs/axis.md#the-stages), about 8 narrow strips below NARROW_COLUMNS 4-byte columns.
SPLIT_ROWS_TRITON = SplitRows(target=512, least=2 * ROW_TILE)
NARROW_COLUMNS = 512
VECTOR_COLUMNS_TRITON = VectorColumns(target=256, narrow_target=512)

# The fastest pair's choice (ByShape.pick; docs/axis.md#the-stages): r3 for MANY_ROWS rows or
# more of at most SHORT_ROW elements, else r4; columns c3, or c2 for the Triton twin on TILE_ROWS
# rows or more of TILE_COLUMNS columns.
SHORT_ROW = 1024
MANY_ROWS = 2048
TILE_ROWS = 512
TILE_COLUMNS = (512, 8192)


@dataclass(frozen=True)
class ByShape(AxisMapping):
    """The fastest pair: one of the stages' mappings, picked from the shape alone; `triton`: the
    Triton twin's choice and splits."""

    name: ClassVar[str] = "by-shape"
    along: ClassVar[str] = "any"
    triton: bool = False

    def pick(self, p: Problem) -> AxisMapping:
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
