"""Every ratio the tables print, computed here only: against the peers measured in the same run at
the same dtype and n (x CUB, x torch.sum, % copy), and along the ladder (step x, cumulative x).

x_cub = t(cupy.sum, CUB on) / t and x_torch = t(torch.sum) / t: above 1 the variant is faster
than the peer. pct_copy = effective GB/s / the device-to-device copy's GB/s * 100. step_x =
t(previous stage) / t and cum_x = t(first stage of the family) / t, over the timed CUDA rows in
ladder order; a seed's own ladder (a family, e.g. 004) starts its own, and wrong demonstrations
and failed checks neither get nor give a step.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness.core.catalogue import (
    CCCL_ID,
    CCCL_NONDET_ID,
    COMPILE_COOP_ID,
    COMPILE_DYNAMIC_ID,
    COMPILE_ID,
    COPY_ID,
    CUB_ID,
    NOCUB_ID,
)
from harness.core.catalogue import TORCH_SUM_ID as TORCH_ID
from harness.report.records import ResultRecord

# The order the tables and plots show the peers (a run without some of them shows the rest):
# CUB's three ways in, then PyTorch's, then the copy. The ratio columns stay x CUB and x torch.sum.
PEER_ORDER = (
    CUB_ID,
    NOCUB_ID,
    CCCL_ID,
    CCCL_NONDET_ID,
    TORCH_ID,
    COMPILE_ID,
    COMPILE_DYNAMIC_ID,
    COMPILE_COOP_ID,
    COPY_ID,
)
PEER_LABELS = {
    CUB_ID: "cupy.sum (CUB)",
    NOCUB_ID: "cupy.sum (no CUB)",
    CCCL_ID: "cuda.compute (run to run)",
    CCCL_NONDET_ID: "cuda.compute (not guaranteed)",
    TORCH_ID: "torch.sum",
    COMPILE_ID: "torch.compile (static)",
    COMPILE_DYNAMIC_ID: "torch.compile (dynamic)",
    COMPILE_COOP_ID: "torch.compile (coop)",
    COPY_ID: "copy bandwidth",
}


@dataclass(frozen=True)
class PeerRatios:
    x_cub: float | None = None
    x_torch: float | None = None
    pct_copy: float | None = None

    def text(self) -> str:
        """'0.50× CUB, 1.00× torch.sum, 45% of copy' (the ones measured), or '-'."""
        parts = []
        if self.x_cub is not None:
            parts.append(f"{self.x_cub:.2f}× CUB")
        if self.x_torch is not None:
            parts.append(f"{self.x_torch:.2f}× torch.sum")
        if self.pct_copy is not None:
            parts.append(f"{self.pct_copy:.0f}% of copy")
        return ", ".join(parts) or "-"


NO_RATIOS = PeerRatios()


def records_at(records: Iterable[ResultRecord], dtype: str, n: int) -> dict[str, ResultRecord]:
    """The records of one (dtype, n), by variant id."""
    return {r.variant: r for r in records if r.dtype == dtype and r.n == n}


def peer_ratios(r: ResultRecord | None, at: dict[str, ResultRecord]) -> PeerRatios:
    """r against the peers in `at` (records_at of r's dtype and n). Only a passing, timed record
    gets ratios, and only against passing, timed peers."""
    if r is None or not r.ok or not r.ms:
        return NO_RATIOS

    def peer(vid: str) -> ResultRecord | None:
        p = at.get(vid)
        return p if p is not None and p.ok and p.ms else None

    cub, torch_sum, copy = peer(CUB_ID), peer(TORCH_ID), peer(COPY_ID)
    gbps, copy_gbps = r.gbps_total, copy.gbps_total if copy else None
    return PeerRatios(
        x_cub=cub.ms / r.ms if cub else None,
        x_torch=torch_sum.ms / r.ms if torch_sum else None,
        pct_copy=100 * gbps / copy_gbps if gbps and copy_gbps else None,
    )


@dataclass(frozen=True)
class Steps:
    step_x: float | None = None
    cum_x: float | None = None


def ladder_steps(rows: Iterable[ResultRecord | None]) -> list[Steps]:
    """step x and cumulative x of each CUDA record, in the order given (ladder order); None
    entries (rows with no CUDA record) get no steps and break nothing."""
    out: list[Steps] = []
    family, first_ms, prev_ms = None, None, None
    for r in rows:
        if r is None:
            out.append(Steps())
            continue
        if r.family != family:  # a seed's own ladder starts its own x columns
            family, first_ms, prev_ms = r.family, None, None
        ms = r.ms
        usable = bool(ms) and r.ok and not r.wrong_demo  # a wrong sum's time is no reference
        out.append(
            Steps(
                step_x=prev_ms / ms if usable and prev_ms else None,
                cum_x=first_ms / ms if usable and first_ms else None,
            )
        )
        if usable:
            first_ms = first_ms or ms
            prev_ms = ms
    return out
