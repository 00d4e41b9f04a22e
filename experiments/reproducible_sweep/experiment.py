"""Sweep of cuda/reproducible's shape (block size, UNROLL, blocks per SM, PREFETCH) and
triton/reproducible's (num_warps, num_stages, programs per SM, UNROLL), timed beside torch.sum and
cupy.sum (CUB), in one GPU call:

    python -m experiments.reproducible_sweep [--sizes 24 28 30] [--dtypes float32]
        [--register-cap] [--json PATH]

--register-cap runs REGISTER_CAP_SHAPES instead: CUDA shapes whose launch bounds ask for more
blocks per SM than the .cu's (a copy of the source with ReproBounds' MIN_BLOCKS replaced), so
that 512-thread blocks at 32 registers fill the SM (the occupancy Nsight Compute pointed to).

Every shape must give the catalogue plan's bits (the design promises it; a shape that does not
is printed as WRONG and makes the exit status 1), so the sweep also tests reproducibility. Each
time is harness.core.timing.time_ms (CUDA events, L2 flushed, median). "x best" = the better of
torch.sum and CUB / this shape's time (>= 1: at least as fast; the issue's target is >= 0.97).
Pick the winner, then change cuda/reproducible's template arguments (harness/core/
records_beyond.py: threads; cuda_kernels/reproducible.cu: REPRO_UNROLL, the PREFETCH
default; per_sm) or triton_kernels/reproducible.py's NUM_WARPS / NUM_STAGES / UNROLL (per_sm:
its record).
Without a GPU: exit 2.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from functools import cache
from pathlib import Path

import experiments
from harness.report import documents
from harness.report.records import Row
from harness.studies.suites import row_common

SUITE = "repro-sweep"  # its ROWS document's suite

# (threads, UNROLL, blocks per SM, PREFETCH): the catalogue's first, then the neighbours worth a
# look. PREFETCH: the next chunk's first UNROLL steps in flight during the lane tree (mid n).
CUDA_SHAPES = (
    (256, 4, 4, True),
    (256, 4, 4, False),
    (256, 8, 4, True),
    (256, 8, 4, False),
    (256, 8, 2, True),
    (256, 4, 2, True),
    (256, 2, 4, True),
    (128, 4, 8, True),
    (512, 2, 2, True),
)
# (threads, UNROLL, blocks per SM, PREFETCH, the launch bounds' blocks per SM): the catalogue's
# first (0: the .cu's own bounds, 64 registers at 256 threads), then the register caps: 32
# registers at 512 threads (4 blocks of 512 fill an SM's 2048 threads) and 40 (3 blocks), 32 at
# 1024 threads (float32 only: a 16-bit element is half a 32-bit word), 40 at 256.
REGISTER_CAP_SHAPES = (
    (256, 4, 4, True, 0),
    (512, 4, 4, True, 4),
    (512, 2, 4, True, 4),
    (512, 4, 4, False, 4),
    (512, 2, 4, False, 4),
    (512, 8, 4, False, 4),
    (512, 4, 4, True, 3),
    (1024, 4, 2, True, 2),
    (1024, 4, 2, False, 2),
    (256, 4, 4, True, 6),
)
BOUNDS = "static constexpr u32 MIN_BLOCKS = (SMALL ? 1024 : 512) / BLOCK;"


@cache
def capped_source(min_blocks: int) -> Path:
    """A copy of cuda_kernels/reproducible.cu whose launch bounds ask for min_blocks blocks per
    SM (the compiler then caps the registers at 65536 / (min_blocks x threads)); the same
    operations in the same order, so the same bits."""
    from cuda_kernels import source_path

    src = source_path("reproducible.cu").read_text()
    if BOUNDS not in src:
        raise RuntimeError("cuda_kernels/reproducible.cu's ReproBounds changed: update BOUNDS")
    out = Path(tempfile.mkdtemp()) / f"reproducible_min_blocks_{min_blocks}.cu"
    out.write_text(src.replace(BOUNDS, f"static constexpr u32 MIN_BLOCKS = {min_blocks};"))
    return out


# (num_warps, num_stages, programs per SM, UNROLL rows per phase-1 iteration)
TRITON_SHAPES = (
    (4, 3, 4, 4),
    (4, 3, 4, 1),
    (4, 3, 4, 2),
    (4, 3, 4, 8),
    (4, 1, 4, 4),
    (8, 3, 4, 4),
    (8, 3, 4, 8),
    (4, 3, 2, 8),
    (2, 3, 8, 4),
)


def sweep(dtypes: list[str], sizes: list[int], log=print, register_cap: bool = False) -> dict:
    import torch

    from harness.check import verify
    from harness.compile import cuda_loader
    from harness.core import catalogue, device, mappings, timing
    from harness.launch import peers, reproducible_plan, single_launch
    from triton_kernels import reproducible as trepro

    cuda_v = catalogue.get("cuda/reproducible")
    sms = mappings.sm_count()
    doc: dict = {"device": device.device_info(), "sms": sms, "rows": []}
    for dtype in dtypes:
        for k in sizes:
            n = 2**k
            x = verify.seed_like_input(n, dtype, "cuda").mul_(1.0 / 3.0)
            m = mappings.chunk_count(n)
            ref = reproducible_plan.make_plan(cuda_v, dtype, x)
            want = ref.run().clone()
            base = {}
            for pid in (catalogue.TORCH_SUM_ID, catalogue.CUB_ID):
                try:
                    base[pid] = timing.time_ms(peers.prepare(catalogue.get(pid), x)).median_ms
                except Exception as e:  # CuPy has no bfloat16: that peer is absent, and said so
                    log(f"  {pid}: {type(e).__name__}: {e}")
            best = min(base.values()) if base else None
            log(
                f"\n{dtype} n = 2^{k} (M = {m} chunks, {sms} SMs): "
                + ", ".join(f"{p.split('/')[1]} {t * 1e3:.1f} us" for p, t in base.items())
            )
            if register_cap:
                # a thread's lanes fill whole 32-bit words: 1024 threads, 4-byte types only
                shapes = [("cuda", s) for s in REGISTER_CAP_SHAPES
                          if mappings.LANES // s[0] * x.element_size() % 4 == 0]  # fmt: skip
            else:
                shapes = [("cuda", (*s, 0)) for s in CUDA_SHAPES]
                shapes += [("triton", s) for s in TRITON_SHAPES]
            for backend, shape in shapes:
                out = torch.empty_like(ref.outs[0])
                if backend == "cuda":
                    threads, unroll, per_sm, prefetch, min_blocks = shape
                    grid = max(1, min(m, per_sm * sms))
                    ws = [torch.empty_like(t) for t in ref.workspace[:2]]
                    ws.append(torch.zeros_like(ref.workspace[2]))
                    if min_blocks:
                        expr = reproducible_plan.cuda_expression(dtype, threads, unroll, True,
                                                                 prefetch)  # fmt: skip
                        kern = cuda_loader.kernel_by_expression(capped_source(min_blocks), expr)
                    else:
                        kern = reproducible_plan.cuda_kernel(
                            cuda_v, dtype, x.data_ptr(), threads, unroll, prefetch
                        )
                    go = single_launch.on_stream(
                        kern, grid, threads, single_launch.cuda_args(x, out, *ws)
                    )
                    label = f"cuda B{threads} U{unroll} p{per_sm}" + ("" if prefetch else " nopf")
                    if min_blocks:
                        label += f" r{kern.num_regs}"
                else:
                    warps, stages, per_sm, unroll = shape
                    grid = max(1, min(m, per_sm * sms))
                    phi, plo = (torch.empty_like(t) for t in ref.workspace[:2])
                    go = trepro.launch(x, out, phi, plo, grid, warps, stages, unroll)
                    label = f"triton w{warps} s{stages} p{per_sm} U{unroll}"
                go()
                same = verify.same_bits(out, want)
                ms = timing.time_ms(go).median_ms
                ratio = best / ms if best else None
                doc["rows"].append(
                    {
                        "dtype": dtype,
                        "n": n,
                        "variant": f"{backend}/reproducible",
                        "shape": label,
                        "grid": grid,
                        "median_ms": ms,
                        "x_best_peer": ratio,
                        "same_bits": same,
                        "peers_ms": base,
                    }
                )
                log(
                    f"  {label:<26} grid {grid:>5} {ms * 1e3:9.1f} us  x best "
                    + (f"{ratio:.3f}" if ratio else "-")
                    + ("" if same else "  WRONG BITS")
                )
                del go
            del x, ref
            torch.cuda.empty_cache()
    return doc


def document(doc: dict) -> dict:
    """The sweep's ROWS document: per dtype, n and shape (the config), the variant's time
    ("total", checked by its bits; its grid in info), then the peers' at that dtype and n (each
    shape's ratio to the better peer is the times': not written)."""
    common = row_common(SUITE, doc["device"])
    out = []
    for r in doc["rows"]:
        ident = dict(common, config=r["shape"], dtype=r["dtype"], shape=r["n"], metric="total")
        check = "ok" if r["same_bits"] else "wrong"
        out.append(Row(**ident, variant=r["variant"], median_ms=r["median_ms"], check=check,
                       info={"grid": r["grid"]}))  # fmt: skip
        out += [Row(**ident, variant=p, median_ms=ms) for p, ms in r["peers_ms"].items() if ms]
    return experiments.as_rows(doc, SUITE, out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.reproducible_sweep",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--sizes", nargs="+", type=int, default=[24, 28, 30], help="log2 n")
    p.add_argument("--dtypes", nargs="+", default=["float32"])
    p.add_argument("--register-cap", action="store_true", help="REGISTER_CAP_SHAPES instead")
    p.add_argument("--json", help="also write the rows here")
    a = p.parse_args(argv)
    from harness.core import catalogue, device

    bad = [d for d in a.dtypes if d not in catalogue.get("cuda/reproducible").dtypes]
    if bad or any(not 10 <= k <= 32 for k in a.sizes):
        p.error(f"dtypes: {', '.join(catalogue.get('cuda/reproducible').dtypes)}; sizes 10..32")
    if not device.cupy_gpu()[0]:
        print(f"reproducible_sweep needs a GPU with CuPy: {device.cupy_gpu()[1]}", file=sys.stderr)
        return 2
    t0 = time.time()
    doc = sweep(a.dtypes, a.sizes, register_cap=a.register_cap)
    doc["wall_s"] = time.time() - t0
    if a.json:
        documents.write_document(a.json, document(doc))
    wrong = [r for r in doc["rows"] if not r["same_bits"]]
    print(f"\nwall {doc['wall_s']:.0f} s; {len(doc['rows'])} shapes timed, {len(wrong)} wrong bits")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
