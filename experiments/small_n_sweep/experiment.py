"""The small-n sweep: cuda/fastest's two paths at small n beside CUB and torch.sum, one GPU call.

    python -m experiments.small_n_sweep [--log2 10 11 ... 16] [--dtypes float32 int32]
        [--json small-n.json]

For each dtype and n = 2^k, device time per call (harness.core.timing.time_ms: CUDA events, L2
flushed, queued behind a gate, median) of
- "multi-block": reduce_fastest on cuda_grid's blocks (the path above the threshold);
- "small B256", "small B512", "small B1024": reduce_fastest_small, one block of 256 / 512 / 1024
  threads (harness.launch.single_launch.small_expression; B512 is the production small path);
- "production": what cuda/fastest's plan launches at this n (single_launch.cuda_kernel with
  SMALL_MAX_BYTES), the path the threshold picks;
- the peers cupy.sum (CUB) and torch.sum.
Each line gives the microseconds and each path's ratio to the better peer (better peer time /
path time: >= 1.00 is at least as fast). The summary line names, per dtype, the largest n at which
small B512 is still at least as fast as multi-block: the threshold the data supports
(SMALL_MAX_BYTES in single_launch is what the production path uses). Every path's sum is checked
against the golden under cuda/fastest's error bound (harness.check.verify.compare: exact for
int32 and for these integer-valued inputs while sum|x| <= 2^24); a WRONG one is printed and
recorded (the peers are not checked here).
About 20 s on an H100 at the defaults (estimated: 7 sizes x 2 dtypes x 7 timed calls, plus one
NVRTC compile per block size).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import experiments
from harness.core import sizes
from harness.report import documents
from harness.report.records import Row
from harness.studies.suites import row_common

SUITE = "small-n"  # its ROWS document's suite
DEFAULT_LOG2 = tuple(range(10, 17))
DTYPES = ("float32", "int32", "bfloat16", "float16", "float64")
SMALL_BLOCKS = (256, 512, 1024)
PEERS = ("cub", "torch.sum")


def _launch(kern, blocks: int, threads: int, x, out, ws) -> Callable[[], None]:
    from harness.launch import single_launch
    from harness.launch.stream import on_torch_stream

    args = single_launch.cuda_args(x, out, *ws)

    def go() -> None:
        with on_torch_stream():
            kern((blocks,), (threads,), args)

    return go


def paths(dtype: str, x) -> dict[str, tuple[Callable[[], None], object]]:
    """label -> (launch, its output tensor) for every path of the module docstring."""
    import torch

    from harness.compile import cuda_loader
    from harness.core import catalogue, dtypes
    from harness.launch import peers, single_launch

    v = catalogue.get("cuda/fastest")
    n = x.numel()
    acc = dtypes.get(dtype).sum_torch
    ws = single_launch.workspace(v, dtype, x.device)
    out: dict[str, tuple[Callable[[], None], object]] = {}

    def add(label: str, kern, blocks: int, threads: int) -> None:
        o = torch.empty(1, dtype=acc, device=x.device)
        out[label] = (_launch(kern, blocks, threads, x, o, ws), o)

    add("multi-block", cuda_loader.kernel(v, dtype), single_launch.cuda_grid(v, dtype, n), 256)
    for b in SMALL_BLOCKS:
        kern, blocks, threads = single_launch.cuda_kernel(v, dtype, n, max_bytes=2**62, block=b)
        add(f"small B{b}", kern, blocks, threads)
    add("production", *single_launch.cuda_kernel(v, dtype, n))
    if dtype != "bfloat16":
        cub = peers.prepare(catalogue.get(catalogue.CUB_ID), x)
        out["cub"] = (cub, None)
    out["torch.sum"] = (lambda: torch.sum(x), None)
    return out


def sweep(log2s: list[int], dtypes: list[str], log=print) -> dict:
    import torch

    from harness.check import verify
    from harness.core import catalogue, device, timing

    v = catalogue.get("cuda/fastest")
    rows = []
    for dtype in dtypes:
        for k in log2s:
            x = verify.seed_like_input(2**k, dtype, "cuda")
            fns = paths(dtype, x)
            g = verify.golden(x)
            ok = {}
            for label, (fn, o) in fns.items():
                fn()
                torch.cuda.synchronize()
                if o is not None:  # our paths: the golden under cuda/fastest's error bound
                    r = verify.compare(v, dtype, x.numel(), verify.as_number(o), g, True)
                    ok[label] = r.ok
            us = {lb: timing.time_ms(fn).median_ms * 1000.0 for lb, (fn, _) in fns.items()}
            peer = min(us[p] for p in PEERS if p in us)
            row = {"dtype": dtype, "n": 2**k, "us": us, "vs_better_peer": {
                lb: peer / t for lb, t in us.items()}, "sum_agrees": ok}  # fmt: skip
            rows.append(row)
            log(_line(row))
    doc = {"device": device.device_info(), "rows": rows, "summary": summary(rows)}
    for line in doc["summary"]:
        log(line)
    return doc


def _line(row: dict) -> str:
    cells = "  ".join(
        f"{lb} {t:6.2f}us {row['vs_better_peer'][lb]:.2f}x"
        + ("" if row["sum_agrees"].get(lb, True) else " WRONG")
        for lb, t in row["us"].items()
    )
    return f"{row['dtype']:<8} {sizes.size_label(row['n']):>5}  {cells}"


def summary(rows: list[dict]) -> list[str]:
    """Per dtype: the largest n (from the smallest up, without a gap) where small B512 is at
    least as fast as multi-block, in elements and bytes."""
    lines = []
    for dtype in dict.fromkeys(r["dtype"] for r in rows):
        best = None
        for r in sorted((r for r in rows if r["dtype"] == dtype), key=lambda r: r["n"]):
            if r["us"]["small B512"] > r["us"]["multi-block"]:
                break
            best = r["n"]
        itemsize = {"float64": 8, "float16": 2, "bfloat16": 2}.get(dtype, 4)
        where = (
            f"up to n = {sizes.size_label(best)} ({best * itemsize // 1024} KiB)"
            if best
            else "at no n of the sweep"
        )
        lines.append(f"{dtype}: small B512 >= multi-block {where}")
    return lines


def document(doc: dict) -> dict:
    """The sweep's ROWS document: per dtype, n and path a row ("total", microseconds written in
    ms), each path's check its sum's (the peers are not checked); the ratios to the better peer
    are the times' (not written), the summary beside them."""
    common, said = row_common(SUITE, doc["device"]), {True: "ok", False: "wrong"}
    return experiments.as_rows(doc, SUITE, [
        Row(**common, variant=path, config="", dtype=r["dtype"], shape=r["n"], metric="total",
            median_ms=us / 1e3, check=said.get(r["sum_agrees"].get(path), ""))
        for r in doc["rows"] for path, us in r["us"].items() if us is not None
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.small_n_sweep")
    ap.add_argument("--log2", nargs="*", type=int, default=list(DEFAULT_LOG2))
    ap.add_argument("--dtypes", nargs="*", default=["float32", "int32"])
    ap.add_argument("--json", help="also write the rows here")
    args = ap.parse_args(argv)
    if not args.log2 or any(k < 0 or k > 24 for k in args.log2):
        ap.error("--log2: exponents from 0 to 24 (a sweep of small n)")
    bad = [d for d in args.dtypes if d not in DTYPES]
    if bad or not args.dtypes:
        ap.error(f"--dtypes {bad}: choose from {', '.join(DTYPES)}")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        ap.error(f"--json {args.json}: the folder {Path(args.json).parent} does not exist")
    from harness.core import device

    ok, why = device.torch_gpu()
    if not ok:
        print(f"small_n_sweep needs a CUDA GPU: {why}", file=sys.stderr)
        return 2
    from harness.launch import peers

    with peers.cupy_accelerators(["cub"]):
        doc = sweep(sorted(args.log2), args.dtypes)
    if args.json:
        documents.write_document(args.json, document(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
