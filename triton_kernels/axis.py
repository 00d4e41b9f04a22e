"""Triton twins of the axis family (cuda_kernels/axis.cu): one program per CUDA block, the same
tile, the same order inside a lane; `tl.sum` is the block tree or the shuffles.

The input is the contiguous (outer, length, inner) view of harness.core.axis_geometry; every
kernel takes it as its three sizes. Offsets are int64 (the CUDA kernels' 32-bit indices are
enough below 2^31 elements; Triton's cost nothing here). ACC is the accumulator's dtype (ACC
below: float32 for float32 and the 16-bit floats, int32 for int32): every element is converted to
it on load, and the sum to the output's dtype once, on the store (round to nearest even).
"""

import triton
import triton.language as tl

# The accumulator of each dtype's sums (harness.core.dtypes: sum_dtype), as a Triton dtype.
ACC = {"float32": tl.float32, "int32": tl.int32}
# The sizes are not specialized on (Triton would compile again for every size that is 1 or a
# multiple of 16): one compile per kernel, dtype and meta-parameters serves every shape.


@triton.jit(do_not_specialize=["rows", "length"])
def rows_thread_kernel(x_ptr, out_ptr, rows, length, BLOCK: tl.constexpr, ACC: tl.constexpr):
    """r0 - a thread per row: program p owns rows p*BLOCK .. p*BLOCK + BLOCK-1, and lane t adds
    its row's elements in order (the CUDA thread's serial loop, one step for all lanes at once).
    Changed from the 1-D ladder: no tl.sum at all, every lane is one output."""
    pid = tl.program_id(0).to(tl.int64)
    row = pid * BLOCK + tl.arange(0, BLOCK)
    mask = row < rows
    base = row * length
    acc = tl.zeros([BLOCK], dtype=ACC)
    for k in range(0, length):
        acc += tl.load(x_ptr + base + k, mask=mask, other=0).to(ACC)
    tl.store(out_ptr + row, acc.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["length"])
def rows_block_kernel(x_ptr, out_ptr, length, BLOCK: tl.constexpr, ACC: tl.constexpr):
    """r1 - a program per row: lane t adds elements t, t + BLOCK, ... into a [BLOCK]
    accumulator, then tl.sum folds it (CUDA: the shared-memory tree). Changed from r0: a row is
    read BLOCK consecutive elements at a time (coalesced)."""
    row = tl.program_id(0).to(tl.int64)
    lanes = tl.arange(0, BLOCK)
    acc = tl.zeros([BLOCK], dtype=ACC)
    for start in range(0, length, BLOCK):
        offs = start + lanes
        acc += tl.load(x_ptr + row * length + offs, mask=offs < length, other=0).to(ACC)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


@triton.jit(do_not_specialize=["rows", "length"])
def rows_warp_kernel(
    x_ptr, out_ptr, rows, length, ROWS: tl.constexpr, WIDTH: tl.constexpr, ACC: tl.constexpr
):
    """r2 - a program per ROWS rows (CUDA: a warp per row, ROWS warps per block): an
    [ROWS, WIDTH] accumulator, lane l of row w adding elements l, l + WIDTH, ...; tl.sum along
    the row (CUDA: five shuffles). Changed from r1: ROWS rows per program, WIDTH = 32 lanes each."""
    _row_tiles(x_ptr, out_ptr, rows, length, ROWS, WIDTH, ACC)


@triton.jit
def _row_tiles(
    x_ptr, out_ptr, rows, length, ROWS: tl.constexpr, WIDTH: tl.constexpr, ACC: tl.constexpr
):
    """r2's and r3's program: ROWS rows, each read WIDTH consecutive elements a step into an
    [ROWS, WIDTH] accumulator, then tl.sum along the row; only WIDTH differs between them."""
    pid = tl.program_id(0).to(tl.int64)
    row = pid * ROWS + tl.arange(0, ROWS)[:, None]
    lanes = tl.arange(0, WIDTH)[None, :]
    acc = tl.zeros([ROWS, WIDTH], dtype=ACC)
    for start in range(0, length, WIDTH):
        offs = start + lanes
        mask = (row < rows) & (offs < length)
        acc += tl.load(x_ptr + row * length + offs, mask=mask, other=0).to(ACC)
    r = pid * ROWS + tl.arange(0, ROWS)
    out = tl.sum(acc, axis=1).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + r, out, mask=r < rows)


@triton.jit(do_not_specialize=["outer", "length", "inner"])
def columns_thread_kernel(
    x_ptr, out_ptr, outer, length, inner, BLOCK: tl.constexpr, ACC: tl.constexpr
):
    """c0 - a program per BLOCK outputs j = (o, i): lane j adds element (o, r, i) for
    r = 0, 1, ... in order (the CUDA thread's loop down its column); the lanes read BLOCK
    adjacent columns of one row at a time. Also c2's second pass, over the split partials."""
    pid = tl.program_id(0).to(tl.int64)
    j = pid * BLOCK + tl.arange(0, BLOCK)
    mask = j < outer * inner
    o = j // inner
    i = j - o * inner
    base = o * length * inner + i
    acc = tl.zeros([BLOCK], dtype=ACC)
    for r in range(0, length):
        acc += tl.load(x_ptr + base + r * inner, mask=mask, other=0).to(ACC)
    tl.store(out_ptr + j, acc.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit(do_not_specialize=["length", "inner", "chunk"])
def column_tiles_kernel(
    x_ptr,
    out_ptr,
    length,
    inner,
    chunk,
    GROUPS: tl.constexpr,
    WIDTH: tl.constexpr,
    ACC: tl.constexpr,
):
    """c1 / c2's first pass - program (b, k) covers the WIDTH-column strip b % strips of batch
    b // strips over rows [k*chunk, min(length, (k+1)*chunk)): a [GROUPS, WIDTH] accumulator,
    row group g adding rows g, g + GROUPS, ...; tl.sum over the groups (CUDA: the fold in shared
    memory). Writes (o, k, i) of an (outer, num_programs(1), inner) output: with one split,
    (o, i)."""
    pid = tl.program_id(0).to(tl.int64)
    k = tl.program_id(1).to(tl.int64)
    splits = tl.num_programs(1).to(tl.int64)
    strips = tl.cdiv(inner, WIDTH)
    o = pid // strips
    i = (pid - o * strips) * WIDTH + tl.arange(0, WIDTH)
    groups = tl.arange(0, GROUPS)[:, None]
    begin = k * chunk
    end = tl.minimum(length, begin + chunk)
    acc = tl.zeros([GROUPS, WIDTH], dtype=ACC)
    for start in range(begin, end, GROUPS):
        r = start + groups
        mask = (r < end) & (i[None, :] < inner)
        offs = o * length * inner + r * inner + i[None, :]
        acc += tl.load(x_ptr + offs, mask=mask, other=0).to(ACC)
    out = tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty)
    tl.store(out_ptr + (o * splits + k) * inner + i, out, mask=i < inner)


# The vectorized stages (r3, r4, c3): a thread's four adjacent elements (a QUAD) are one access.
# Triton emits the 16-byte load itself when it can prove the quad contiguous and aligned: the
# pointer is specialized on 16-byte alignment at launch, and EVEN (the contiguous dim a multiple
# of 4, known to the host) is told to it as `n // 4 * 4` (the same value, a visible multiple of 4).


@triton.jit(do_not_specialize=["rows", "length"])
def rows_subwarp_kernel(
    x_ptr,
    out_ptr,
    rows,
    length,
    ROWS: tl.constexpr,
    WIDTH: tl.constexpr,
    EVEN: tl.constexpr,
    ACC: tl.constexpr,
):
    """r3 - a program per ROWS rows, WIDTH = 4 x lanes columns of each (CUDA: BLOCK / lanes
    groups of `lanes` lanes, a quad per lane): an [ROWS, WIDTH] accumulator, tl.sum along the row
    (CUDA: the quad's fold, then shuffles of width `lanes`). Changed from r2: the tile's width is
    sized to the row (4 for rows of 4) and each lane's 4 adjacent elements are one load."""
    if EVEN:
        length = length // 4 * 4
    _row_tiles(x_ptr, out_ptr, rows, length, ROWS, WIDTH, ACC)


# r4's combine: the row's partials a [ROW_COMBINE] tile a step (CUDA: thread t the partials t,
# t + 256, ...)
ROW_COMBINE = tl.constexpr(256)


@triton.jit(do_not_specialize=["length", "chunk"])
def rows_split_kernel(x_ptr, out_ptr, part_ptr, count_ptr, length, chunk, TILE: tl.constexpr,
                      EVEN: tl.constexpr, SPLIT: tl.constexpr, ACC: tl.constexpr):  # fmt: skip
    """r4 - program (o, k) reads elements [k*chunk, min(length, (k+1)*chunk)) of row o in
    tiles of TILE = 256 threads x 4 quads x 4 (CUDA: thread t's quads t, t+256, t+512, t+768 of
    each step, loaded before they are added); tl.sum folds the tile (CUDA: block_fold). One
    split: the output (o). SPLIT (a row over num_programs(1) > 1 programs; part_ptr its
    (outer, splits) ACC partials, count_ptr an int32 ticket counter per row, 0 at launch and
    after it): each writes its partial (o, k), takes a ticket on the row's counter (acq_rel),
    and the program holding the row's last ticket adds the row's partials, a [ROW_COMBINE] tile
    a step (volatile loads), tl.sum, stores the output and takes the splits back off the counter
    (a modular ticket, as c3's); a fixed order whichever program is last, no float atomics.
    Changed from r1: a row over several programs, and TILE elements in flight per step."""
    if EVEN:
        length = length // 4 * 4
    o = tl.program_id(0).to(tl.int64)
    k = tl.program_id(1).to(tl.int64)
    splits = tl.num_programs(1)
    chunk = chunk // TILE * TILE  # a multiple of TILE (axis_geometry): now a visible one
    begin = k * chunk
    end = tl.minimum(length, begin + chunk)
    lanes = tl.arange(0, TILE)
    acc = tl.zeros([TILE], dtype=ACC)
    for start in range(begin, end, TILE):
        offs = start + lanes
        acc += tl.load(x_ptr + o * length + offs, mask=offs < end, other=0).to(ACC)
    total = tl.sum(acc, axis=0)
    if SPLIT:
        part = part_ptr + o * splits
        tl.store(part + k, total)
        tl.debug_barrier()  # the partial's store is done before the release
        ticket = tl.atomic_add(count_ptr + o, 1, sem="acq_rel")
        if ticket % splits == splits - 1:
            comb = tl.zeros([ROW_COMBINE], dtype=ACC)
            for first in range(0, splits, ROW_COMBINE):
                idx = first + tl.arange(0, ROW_COMBINE)
                comb += tl.load(part + idx, mask=idx < splits, other=0, volatile=True)
            tl.store(out_ptr + o, tl.sum(comb, axis=0).to(out_ptr.dtype.element_ty))
            tl.atomic_add(count_ptr + o, -splits)
    else:
        tl.store(out_ptr + o, total.to(out_ptr.dtype.element_ty))


@triton.jit(do_not_specialize=["length", "inner", "chunk"])
def columns_vector_kernel(
    x_ptr,
    out_ptr,
    part_ptr,  # SPLIT: (outer, num_programs(1), inner) ACC partials (workspace)
    count_ptr,  # SPLIT: an int32 ticket counter per strip, 0 at launch and after it
    length,
    inner,
    chunk,
    GROUPS: tl.constexpr,
    UNROLL: tl.constexpr,
    WIDTH: tl.constexpr,
    EVEN: tl.constexpr,
    SPLIT: tl.constexpr,
    ACC: tl.constexpr,
):
    """c3 - program (b, k) covers the WIDTH-column strip b % strips of batch b // strips (WIDTH =
    4 x lanes: a quad per lane) over rows [k*chunk, min(length, (k+1)*chunk)): a [GROUPS, WIDTH]
    accumulator (CUDA: GROUPS row groups, a quad of 4 accumulators a thread); a step reads UNROLL
    [GROUPS, WIDTH] tiles, rows start + u x GROUPS + g, and adds them in u order (CUDA: UNROLL
    rows loaded before they are added, in the same order); whole steps unmasked along the rows,
    then the rest one tile at a time; tl.sum over the groups (CUDA: the fold in shared memory).
    SPLIT (the rows over num_programs(1) > 1 programs): each writes its partial (o, k, i), takes
    a ticket on its strip's counter (acq_rel), and the program holding the strip's last ticket
    adds the partials, row group g the splits g, g + GROUPS, ... (volatile loads), tl.sum over
    the groups, stores the output and takes the splits back off the counter (a modular ticket:
    triton_kernels/fastest.py says why); a fixed order whichever program is last, no float
    atomics. Changed from c1: a lane's 4 adjacent columns are one load, the tile's width and
    height follow the shape, and the splits combine in this launch (a second launch of the
    same kernel did it before: 4.0 us of (2048, 80)'s 12.7 along dim 0 on the H100). A first
    version kept an [UNROLL x GROUPS, WIDTH] accumulator (32 a thread, 64 registers against
    CUDA's 34, 0.67-0.88x of the CUDA kernel); this one holds what the CUDA thread holds."""
    if EVEN:
        inner = inner // 4 * 4
    # 32-bit offsets here (every index is below the 2^31 elements the plan allows): the int64
    # ones of the other kernels cost this tile's elements registers and instructions
    pid = tl.program_id(0)
    k = tl.program_id(1)
    splits = tl.num_programs(1)
    strips = tl.cdiv(inner, WIDTH)
    o = pid // strips
    i = (pid - o * strips) * WIDTH + tl.arange(0, WIDTH)
    cols = (i < inner)[None, :]
    groups = tl.arange(0, GROUPS)[:, None]
    begin = k * chunk
    end = tl.minimum(length, begin + chunk)
    step = UNROLL * GROUPS
    whole = begin + (end - begin) // step * step
    base = x_ptr + o * length * inner + i[None, :]
    acc = tl.zeros([GROUPS, WIDTH], dtype=ACC)
    for start in range(begin, whole, step):
        for u in tl.static_range(UNROLL):
            r = start + u * GROUPS + groups
            acc += tl.load(base + r * inner, mask=cols, other=0).to(ACC)
    for start in range(whole, end, GROUPS):
        r = start + groups
        acc += tl.load(base + r * inner, mask=(r < end) & cols, other=0).to(ACC)
    if SPLIT:
        part = part_ptr + o * splits * inner + i
        tl.store(part + k * inner, tl.sum(acc, axis=0), mask=i < inner)
        tl.debug_barrier()  # every thread's part of the store is done before the release
        ticket = tl.atomic_add(count_ptr + pid, 1, sem="acq_rel")
        if ticket % splits == splits - 1:
            comb = tl.zeros([GROUPS, WIDTH], dtype=ACC)
            for start in range(0, splits, GROUPS):
                r = start + groups
                mask = (r < splits) & cols
                comb += tl.load(part[None, :] + r * inner, mask=mask, other=0, volatile=True)
            out = tl.sum(comb, axis=0).to(out_ptr.dtype.element_ty)
            tl.store(out_ptr + o * inner + i, out, mask=i < inner)
            tl.atomic_add(count_ptr + pid, -splits)
    else:
        out = tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty)
        tl.store(out_ptr + o * inner + i, out, mask=i < inner)
