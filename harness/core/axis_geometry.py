"""The axis family's geometry: a reduction along one dim as (outer, length, inner) (Problem), and
its first stages' tile mappings (r0..r2, c0..c2; the vectorized ones: axis_vector) as objects: the
passes and the longest addition chain. Shapes, stages and chains: docs/axis.md. Every mapping
reads the same elements in the same order on every run, with no float atomics."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import ClassVar

from harness.core.mappings import cdiv, tree_depth

# Threads per CUDA block (num_warps x 32 for the Triton twins) in every axis stage.
AXIS_BLOCK = 256
WARP = 32
# Column stages: a block covers a strip of STRIP adjacent columns (one warp reads 32 consecutive
# elements of a row: 128 coalesced bytes for 4-byte types), and AXIS_BLOCK / STRIP row groups.
STRIP = 32
# Split-columns (c2): the blocks the first pass aims at (never the device's: the same bits on
# every GPU), splits of at least MIN_SPLIT_ROWS rows.
SPLIT_TARGET_BLOCKS = 1024
MIN_SPLIT_ROWS = 256


@dataclass(frozen=True)
class Problem:
    """A reduction along one dim of a contiguous tensor (module docstring)."""

    outer: int
    length: int
    inner: int
    out_shape: tuple[int, ...]
    itemsize: int = 4  # bytes an element: the Triton fastest splits 16-bit columns as CUDA does

    @property
    def rows(self) -> bool:
        return self.inner == 1

    @property
    def outputs(self) -> int:
        return self.outer * self.inner

    @property
    def numel(self) -> int:
        return self.outer * self.length * self.inner


def problem(shape: tuple[int, ...], dim: int, itemsize: int = 4) -> Problem:
    """The (outer, length, inner) view of reducing `shape` along `dim` (already normalized), of
    elements of `itemsize` bytes."""
    outer = math.prod(shape[:dim])
    inner = math.prod(shape[dim + 1 :])
    out_shape = tuple(shape[:dim]) + tuple(shape[dim + 1 :])
    return Problem(outer, shape[dim], inner, out_shape, itemsize)


@dataclass(frozen=True)
class AxisPass:
    """One launch of kernel `kind` ("r0" .. "r4", "c0", "tiles", "c3") over `grid` (x, y) blocks,
    reading the 3-D problem (outer, length, inner) (a second pass: the partials, (outer, splits,
    inner)); `chunk`: the rows one split of the tiles kernel reads (length when unsplit)."""

    kind: str
    grid: tuple[int, int]
    outer: int
    length: int
    inner: int
    chunk: int = 0
    lanes: int = 0  # r3: lanes per row; c3: lanes per row of a strip (harness.core.axis_vector)


@dataclass(frozen=True)
class AxisMapping:
    """What every axis mapping answers; `along`: "rows", "columns", or "any" (the fastest pair).
    A row mapping takes only rows (inner == 1); a column mapping takes any problem.
    chain_length: the error bound's L, counting the add onto the zero start as the 1-D ladder."""

    name: ClassVar[str]
    along: ClassVar[str]

    def takes(self, p: Problem) -> bool:
        return p.rows or self.along != "rows"

    def passes(self, p: Problem) -> list[AxisPass]:
        raise NotImplementedError

    def chain_length(self, p: Problem) -> int:
        raise NotImplementedError

    def describe(self) -> str:
        return self.text  # a ClassVar or field of each mapping


@dataclass(frozen=True)
class _OnePass(AxisMapping):
    """A stage of one launch of kernel `kind` over `blocks(p)` blocks; `chain(p)` its L."""

    name: str
    along: str
    kind: str
    text: str
    blocks: Callable[[Problem], int] = field(repr=False)
    chain: Callable[[Problem], int] = field(repr=False)

    def passes(self, p: Problem) -> list[AxisPass]:
        inner = 1 if self.along == "rows" else p.inner
        chunk = p.length if self.kind == "tiles" else 0
        return [AxisPass(self.kind, (self.blocks(p), 1), p.outer, p.length, inner, chunk)]

    def chain_length(self, p: Problem) -> int:
        return self.chain(p)


def _tile_chain(rows: int) -> int:
    """A column tile over `rows` rows: ceil(rows / 8) per row group, then their 3-level tree."""
    groups = AXIS_BLOCK // STRIP
    return cdiv(rows, groups) + tree_depth(groups)


# r0: thread t of block b owns row b*256 + t, adds its elements in order.
THREAD_PER_ROW = _OnePass("thread-per-row", "rows", "r0",
    "a thread per row, 256 rows per block; each thread adds its row in order",
    lambda p: cdiv(p.outer, AXIS_BLOCK), lambda p: p.length)  # fmt: skip
# r1: block b owns row b; thread t adds t, t+256, ..., then a 256-slot tree.
BLOCK_PER_ROW = _OnePass("block-per-row", "rows", "r1",
    "a block per row; thread t adds t, t+256, ..., then a shared-memory tree",
    lambda p: p.outer, lambda p: cdiv(p.length, AXIS_BLOCK) + tree_depth(AXIS_BLOCK))  # fmt: skip
# r2: warp w of block b owns row b*8 + w; lane l adds l, l+32, ..., then 5 shuffles.
WARP_PER_ROW = _OnePass("warp-per-row", "rows", "r2",
    "a warp per row, 8 rows per block; lane l adds l, l+32, ..., then shuffles",
    lambda p: cdiv(p.outer, AXIS_BLOCK // WARP), lambda p: cdiv(p.length, WARP) + tree_depth(WARP),
)  # fmt: skip
# c0: thread j (over outer x inner outputs) owns column j and adds its `length` elements in row
# order; a warp reads 32 adjacent columns of one row at a time (coalesced).
THREAD_PER_COLUMN = _OnePass("thread-per-column", "columns", "c0",
    "a thread per column, 256 columns per block; each adds its column in row order",
    lambda p: cdiv(p.outputs, AXIS_BLOCK), lambda p: p.length)  # fmt: skip
# c1: block (o, s) owns the 32-column strip s of batch o; thread (g, l) (row group g < 8, lane
# l < 32) adds rows g, g+8, ... of column 32s + l; the 8 row groups are folded in shared memory.
COLUMN_TILES = _OnePass("column-tiles", "columns", "tiles",
    "a block per 32-column strip, 8 row groups folded in shared memory",
    lambda p: p.outer * cdiv(p.inner, STRIP), lambda p: _tile_chain(p.length))  # fmt: skip


def cut(
    length: int, blocks: int, target: int, least: int, multiple: int, most: int | None = None
) -> tuple[int, int]:
    """(splits, elements per split), every split stage's rule (c2, r4, c3), a function of the
    shape only: `length` cut so that `blocks` unsplit blocks become about `target`, in splits of
    at least `least` elements (at most `most` splits), each a multiple of `multiple`."""
    want = min(cdiv(target, blocks), cdiv(length, least), most or length)
    chunk = cdiv(cdiv(length, max(1, want)), multiple) * multiple
    return cdiv(length, chunk), chunk


@dataclass(frozen=True)
class SplitColumns(AxisMapping):
    """c2: c1's tiles over S splits of `chunk` rows (splits) writing (outer, S, inner)
    partials; a second pass, c0's kernel, adds each column's S partials in split order."""

    name: ClassVar[str] = "split-columns"
    along: ClassVar[str] = "columns"
    text: ClassVar[str] = (
        "column tiles over row splits, then a second pass adding each column's splits"
    )

    def splits(self, p: Problem) -> tuple[int, int]:
        """(splits, rows per split), in whole row groups."""
        blocks = p.outer * cdiv(p.inner, STRIP)
        return cut(p.length, blocks, SPLIT_TARGET_BLOCKS, MIN_SPLIT_ROWS, AXIS_BLOCK // STRIP)

    def passes(self, p: Problem) -> list[AxisPass]:
        s, chunk = self.splits(p)
        grid = (p.outer * cdiv(p.inner, STRIP), s)
        first = AxisPass("tiles", grid, p.outer, p.length, p.inner, chunk)
        return [first, *(THREAD_PER_COLUMN.passes(replace(p, length=s)) if s > 1 else ())]

    def chain_length(self, p: Problem) -> int:
        s, chunk = self.splits(p)
        return _tile_chain(chunk) + (s if s > 1 else 0)


SPLIT_COLUMNS = SplitColumns()
