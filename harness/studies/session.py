"""The main job's measure: verify and time one variant at one size (check_and_time; on the CPU:
check only) into its rows, what the ladder's suites of harness.studies.suites (ladder, sweep,
seed004, fastest) measure their cases by; what every suite's measure shares (a row without a
time, how a failure is said, the input kept while consecutive cases share it); and which
variants a run selects."""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Iterable
from dataclasses import replace

from harness.core import catalogue, device, dtypes
from harness.core.catalogue import Variant
from harness.launch.errors import PeerUnavailable
from harness.report import records

DEFAULT_SIZES = (2**24, 2**25)
CPU_SIZES = (1, 255, 256, 257, 1000, 4099)
MAX_REPS = 100  # per timing at most (time_ms's cap: 200): halves the job's wall time; --reps
# The info key of a peer's case that cannot run here (an optional library not installed):
# check SKIPPED, message "unavailable: why" -- not an error, not a failure.
UNAVAILABLE = "unavailable"
SKIPPED = "skipped"
# What a case's info keeps of harness.check.verify.CheckResult
CHECK_KEYS = ("value", "golden", "abs_err", "tolerance", "exact_required", "input_unchanged")


def timed_call(v: Variant, x) -> tuple[Callable[[], object], Callable[[], object] | None, object]:
    """What is timed of v on x (benchmarks/test_bench.py times it too): (the call, its setup before
    each repetition, the plan); a peer's library call (or the copy) has no setup nor plan."""
    from harness.launch import peers
    from harness.launch.plan import make_plan  # looked up per call: tests replace it

    if v.backend == "peer":
        return peers.prepare(v, x), None, None
    plan = make_plan(v, x)
    return (lambda: plan.run(restore=False)), plan.restore, plan


def _timings(v: Variant, x, reps, first_pass: bool, max_reps: int, target_ms: float):
    """v's timings on x: {metric: (Timing, bytes)} -- a peer's call as "total", else the plan's
    first pass (where first_pass) and all its passes; then, for n <= 2^20, the graph replay and
    one synchronized call -- and what the case's info says of them (passes, blocks, a capture
    failure)."""
    from harness.core import timing
    from harness.launch import peers

    how = {"reps": reps, "max_reps": max_reps, "target_ms": target_ms}
    fn, setup, plan = timed_call(v, x)
    if plan is None:
        nbytes = peers.bytes_moved(v, x.numel(), x.element_size())
        times, info = {"total": (timing.time_ms(fn, **how), nbytes)}, {}
    else:
        times = {}
        if first_pass:
            first_fn = lambda: plan.run(first_pass_only=True, restore=False)  # noqa: E731
            first = timing.time_ms(first_fn, setup=setup, **how)
            times["first_pass"] = (first, plan.bytes_moved(first_pass_only=True))
        times["total"] = (timing.time_ms(fn, setup=setup, **how), plan.bytes_moved())
        info = {"passes": plan.launch_count, "blocks_first_pass": plan.first_blocks}
    small = timing.small_size_timings(fn if plan is None else plan.run, x.numel())
    if plan is not None:  # the timed plan's sum after all its launches (check_and_time compares)
        info["after_timing"] = plan.run().reshape(-1)[0].item()
    nbytes = times["total"][1]
    times |= {k: (t, nbytes) for k in ("graph", "call") if (t := records.timing_from(small.get(k)))}
    return times, info | ({"graph_error": small["graph_error"]} if "graph_error" in small else {})


def check_and_time(
    v: Variant, dtype: str, n: int, common: dict, *, timed: bool = True, reps: int | None = None,
    first_pass: bool = True, max_reps: int = MAX_REPS, target_ms: float = 300.0,
) -> list[records.Row]:  # fmt: skip
    """One case's rows: correctness on fresh exact data (verify.exact_input: the sum must be
    exact), then (on a GPU) first-pass and total times (at most max_reps repetitions, about
    target_ms worth where reps is None), each a row, and the timed plan's sum once more after
    them; or one "check" row where nothing was timed; the check's values, message and passes in
    the first row's info. An error is check "error" (the run goes on), a wrong sum "wrong".
    common: device, suite, versions (harness.studies.suites.common)."""
    import torch

    from harness.check import verify

    dev = "cuda" if device.gpu_available() else "cpu"
    ident = {**common, "variant": v.id, "config": "", "dtype": dtype, "shape": n}
    times: dict = {}
    info: dict = {}
    try:
        x = verify.exact_input(n, dtype, dev)
        got = verify.check_variant(v, x, exact=True)
        status = "ok" if got.ok else "wrong"
        info = {"message": got.message} if got.message else {}
        info["check"] = {k: c for k in CHECK_KEYS if (c := getattr(got, k)) is not None}
        if timed and dev == "cuda":
            times, more = _timings(v, x, reps, first_pass, max_reps, target_ms)
            info |= more
            if more.get("after_timing", got.value) != got.value:  # a launch that ran once right
                status = "wrong"
                info["message"] = f"after the timed runs the sum is {more['after_timing']}"
        del x
        if dev == "cuda":
            torch.cuda.synchronize()
    except PeerUnavailable as e:  # e.g. cuda.compute not installed: skipped with its reason
        status, info = SKIPPED, info | {"message": f"unavailable: {e}", UNAVAILABLE: True}
    except Exception as e:  # reported in the row (the check's values kept); the run goes on
        status, info = "error", info | errored(e)
    rows = [records.Row(**ident, metric=metric, **t.record(), bytes=nbytes, check=status)
            for metric, (t, nbytes) in times.items()]  # fmt: skip
    rows = rows or [records.Row(**ident, metric="check", median_ms=None, check=status)]
    return [replace(rows[0], info=info), *rows[1:]]


def errored(e: Exception) -> dict:
    """A failed case's info: the exception as failure() says it, its traceback (called in the
    except block that caught it)."""
    return {"message": failure(e), "traceback": traceback.format_exc(limit=6)}


def failure(e: Exception) -> str:
    """How a row says an exception was raised: "Type: what" (300 characters at most),
    once the device has finished what was queued (the failure is reported; the run goes on)."""
    import torch

    if torch.cuda.is_initialized():
        with contextlib.suppress(Exception):  # a sticky device error raises here again
            torch.cuda.synchronize()
    return f"{type(e).__name__}: {e}"[:300]


def untimed(ident: dict, check: str, why: str) -> list[records.Row]:
    """A case's one row without a time: "skipped", "wrong" or "error", and why."""
    return [records.Row(**ident, median_ms=None, check=check, info={"message": why})]


_kept: dict = {}


def kept(key: tuple, make: Callable[[], object]):
    """make()'s value (a case's input), kept while consecutive cases ask for the same key; the
    previous one freed first."""
    if key not in _kept:
        import torch

        _kept.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        _kept[key] = make()
    return _kept[key]


def case_rows(rows: Iterable[records.Row]) -> list[records.Row]:
    """Each case's first row (its message rides on it), in order: a case is one (variant,
    config, dtype, shape)."""
    first: dict[tuple, records.Row] = {}
    for r in rows:
        first.setdefault((r.variant, r.config, r.dtype, r.shape), r)
    return list(first.values())


def summarize(rows: Iterable[records.Row]) -> dict:
    """The cases counted by check; wrong demonstrations apart (their failure is the point), then
    where there are some: peers that cannot run here ("skipped"), cases measured with no check of
    their own ("unchecked": a peer's time, the copy alone)."""
    wrong_demo = {v.id for v in catalogue.VARIANTS if v.wrong}
    out = dict.fromkeys(("ok", "wrong", "error", "demo_wrong", "demo_right"), 0)
    for r in case_rows(rows):
        if r.variant in wrong_demo:
            key = "demo_right" if r.check == "ok" else "demo_wrong"
        else:
            key = r.check or "unchecked"
        out[key] = out.get(key, 0) + 1
    return out


def failed(rows: Iterable[records.Row]) -> list[records.Row]:
    """Rows whose check failed ("wrong", "error"), a wrong demonstration's excepted (its failure
    is the point); a peer that cannot run here ("skipped") has not failed."""
    wrong_demo = {v.id for v in catalogue.VARIANTS if v.wrong}
    return [r for r in rows if r.check in ("wrong", "error") and r.variant not in wrong_demo]


def carries_study(v: Variant, seed: str) -> bool:
    """v is one of the note's own variants (labelled "<seed>:..."), not a twin or a peer."""
    return any(s.startswith(f"{seed}:") for s in v.seeds)


def seed_variants(variants: Iterable[Variant], seed: str) -> list[Variant]:
    """One seed's variants (labels "<seed>:..."), their Triton twins and the peers, in order."""
    variants = list(variants)
    own = {v.id for v in variants if carries_study(v, seed)}
    twins = {catalogue.get(i).twin for i in own}
    return [v for v in variants if v.id in own or v.id in twins or v.backend == "peer"]


def seed_dtypes(seed: str) -> list[str]:
    """The dtypes one seed's variants support, in the dtype table's order (empty: none)."""
    vs = seed_variants(catalogue.VARIANTS, seed)
    return [d for d in dtypes.NAMES if any(d in v.dtypes for v in vs if v.seeds)]


def ladder_variants(dtype: str, ids: list[str] | None = None, include_wrong: bool = False,
                    everything: bool = False) -> list[Variant]:  # fmt: skip
    """The ladder's selection: seed 001's variants (`reduce-ladder host`) only when named, the
    variants not run by default (the torch.compile peers) only when named or everything."""
    sel = catalogue.select(ids, dtype=dtype, include_wrong=include_wrong)
    if not ids:
        sel = [v for v in sel if v.family != "001" and (everything or v.by_default)]
    return catalogue.ladder_order(sel)
