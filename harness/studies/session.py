"""The main job: verify and time a selection of variants at some sizes; the CPU fallback.

Results are plain dicts (one per variant x dtype x n), collected in a run document:
    {"schema": "reduce-ladder/run/1", "created": ..., "device": {...}, "results": [...]}
The CLI prints them as the ladder table and writes them as JSON; the report reads them back.
"""

from __future__ import annotations

import datetime as _dt
import traceback
from collections.abc import Callable, Iterable

from harness.core import catalogue, device, dtypes
from harness.core.catalogue import Variant

SCHEMA = "reduce-ladder/run/1"
DEFAULT_SIZES = (2**24, 2**25)
CPU_SIZES = (1, 255, 256, 257, 1000, 4099)


def new_document(mode: str) -> dict:
    return {
        "schema": SCHEMA,
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "device": device.device_info(),
        "results": [],
    }


def row_header(v: Variant, dtype: str, n: int) -> dict:
    """The identifying fields every result row starts with (the run document's schema)."""
    return {
        "variant": v.id,
        "backend": v.backend,
        "stage": v.stage,
        "family": v.family,
        "seeds": list(v.seeds),
        "twin": v.twin,
        "wrong_demo": v.wrong,
        "dtype": dtype,
        "n": n,
    }


def check_and_time(
    v: Variant, dtype: str, n: int, *, timed: bool = True, reps: int | None = None
) -> dict:
    """One result row: correctness on fresh data, then (on a GPU) first-pass and total times.

    Errors are caught and reported in the row (status "error"), so one broken variant does not
    stop the run; a wrong result is status "wrong" (for a wrong demonstration: the race showed).
    """
    import torch

    from harness.check import verify
    from harness.launch import plan as runner

    row = row_header(v, dtype, n)
    dev = "cuda" if device.gpu_available() else "cpu"
    try:
        x = verify.seed_like_input(n, dtype, dev)
        check = verify.check_variant(v, x)
        row.update(check.record())
        row["status"] = "ok" if check.ok else "wrong"
        if timed and dev == "cuda":
            from harness.core import timing

            if v.backend == "peer":  # one library call (or the copy): no passes of our own
                from harness.launch import peers

                fn = peers.prepare(v, x)
                total = timing.time_ms(fn, reps=reps)
                nbytes = peers.bytes_moved(v, n, x.element_size())
                row.update(total=total.record(), bytes_total=nbytes)
                row.update(gbps_total=nbytes / total.median_ms / 1e6)
                row.update(timing.small_size_timings(fn, n))
                del fn
            else:
                plan = runner.make_plan(v, x)
                first = timing.time_ms(
                    lambda: plan.run(first_pass_only=True, restore=False),
                    setup=plan.restore,
                    reps=reps,
                )
                total = timing.time_ms(
                    lambda: plan.run(restore=False), setup=plan.restore, reps=reps
                )
                row.update(
                    passes=plan.launch_count,
                    blocks_first_pass=plan.first_blocks,
                    first_pass=first.record(),
                    total=total.record(),
                    bytes_first_pass=plan.bytes_moved(first_pass_only=True),
                    bytes_total=plan.bytes_moved(),
                    gbps_first_pass=plan.bytes_moved(True) / first.median_ms / 1e6,
                    gbps_total=plan.bytes_moved() / total.median_ms / 1e6,
                )
                row.update(timing.small_size_timings(plan.run, n))
                del plan
        del x
        if dev == "cuda":
            torch.cuda.synchronize()
    except Exception as e:  # reported in the row; the run goes on with the other variants
        row["status"] = "error"
        row["ok"] = False
        row["message"] = f"{type(e).__name__}: {e}"
        row["traceback"] = traceback.format_exc(limit=6)
    return row


def run_selection(
    variants: Iterable[Variant],
    dtype: str,
    sizes: Iterable[int],
    *,
    timed: bool = True,
    reps: int | None = None,
    progress: Callable[[dict], None] | None = None,
) -> list[dict]:
    rows = []
    for n in sizes:
        for v in variants:
            if dtype not in v.dtypes:
                continue
            row = check_and_time(v, dtype, n, timed=timed, reps=reps)
            rows.append(row)
            if progress:
                progress(row)
    return rows


def cpu_compile_rows(arch: str = "sm_90") -> list[dict]:
    """The CPU path's CUDA half: every source compiled by NVRTC (no GPU needed), spills checked."""
    from harness.compile import cuda_source, nvrtc

    rows = []
    for src in cuda_source.sources():
        row = {"source": src, "arch": arch}
        try:
            r = nvrtc.compile_file(src, arch)
            spills = [
                k
                for k, res in r.resources.items()
                if res.spill_store_bytes or res.spill_load_bytes or res.stack_bytes
            ]
            row.update(
                status="ok" if not spills else "spills", kernels=len(r.lowered), spilling=spills
            )
        except Exception as e:
            row.update(status="error", message=f"{type(e).__name__}: {e}")
        rows.append(row)
    return rows


def summarize(rows: list[dict]) -> dict:
    """Counts by status; wrong demonstrations are counted apart (their failure is the point)."""
    out = {"ok": 0, "wrong": 0, "error": 0, "demo_wrong": 0, "demo_right": 0}
    for r in rows:
        if r.get("wrong_demo"):
            out["demo_wrong" if r["status"] != "ok" else "demo_right"] += 1
        else:
            out[r["status"]] = out.get(r["status"], 0) + 1
    return out


def failed(rows: list[dict]) -> bool:
    """A run fails when a non-demonstration variant errors or returns a wrong sum."""
    return any(r["status"] != "ok" for r in rows if not r.get("wrong_demo"))


def seed_variants(variants: Iterable[Variant], seed: str) -> list[Variant]:
    """One seed's variants (seed labels "<seed>:..."), their Triton twins and the peers, in the
    order given."""
    variants = list(variants)
    prefix = f"{seed}:"
    own = {v.id for v in variants if any(s.startswith(prefix) for s in v.seeds)}
    twins = {catalogue.get(i).twin for i in own}
    return [v for v in variants if v.id in own or v.id in twins or v.backend == "peer"]


def seed_dtypes(seed: str) -> list[str]:
    """The dtypes one seed's variants support, in the dtype table's order (empty: none)."""
    vs = seed_variants(catalogue.VARIANTS, seed)
    return [d for d in dtypes.NAMES if any(d in v.dtypes for v in vs if v.seeds)]


def ladder_variants(
    dtype: str, ids: list[str] | None = None, include_wrong: bool = False
) -> list[Variant]:
    """The ladder's selection. Seed 001's variants (family "001", end to end from host memory:
    `reduce-ladder host`) are left out unless named in ids."""
    sel = catalogue.select(ids, dtype=dtype, include_wrong=include_wrong)
    if not ids:
        sel = [v for v in sel if v.family != "001"]
    return catalogue.ladder_order(sel)
