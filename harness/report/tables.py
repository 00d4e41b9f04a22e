"""Turn result rows into the ladder table: as rich (terminal) and as Markdown (files, README)."""

from __future__ import annotations

from collections.abc import Iterable

from harness.core import catalogue
from harness.core.passes import one_pass


def _ms(row: dict | None, key: str = "total") -> float | None:
    if not row or key not in row:
        return None
    return row[key]["median_ms"]


def ladder_rows(results: list[dict], n: int, dtype: str = "float32") -> list[dict]:
    """One row per CUDA variant at size n in ladder order, its Triton twin beside it."""
    at = {r["variant"]: r for r in results if r["n"] == n and r["dtype"] == dtype}
    cuda = [
        catalogue.BY_ID[i]
        for i in at
        if i in catalogue.BY_ID and catalogue.BY_ID[i].backend == "cuda"
    ]
    rows: list[dict] = []
    first_ms = prev_ms = None
    family = None
    for v in catalogue.ladder_order(cuda):
        r, t = at[v.id], at.get(v.twin or "")
        ms = _ms(r)
        if v.family != family:  # a seed's own ladder (e.g. 004) starts its own × columns
            family, first_ms, prev_ms = v.family, None, None
        row = {
            "stage": v.stage,
            "variant": v.id,
            "seeds": " ".join(v.seeds),
            "change": v.change,
            "status": r["status"],
            "wrong_demo": v.wrong,
            "cuda_first_ms": _ms(r, "first_pass"),
            "cuda_ms": ms,
            "cuda_gbps": r.get("gbps_total"),
            "twin": v.twin,
            "twin_status": t["status"] if t else None,
            "triton_ms": _ms(t),
            "triton_gbps": t.get("gbps_total") if t else None,
            "step_x": prev_ms / ms if ms and prev_ms and not v.wrong else None,
            "cum_x": first_ms / ms if ms and first_ms and not v.wrong else None,
        }
        if ms and not v.wrong:
            first_ms = first_ms or ms
            prev_ms = ms
        rows.append(row)
    return rows


def _f(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _status(s: str | None, demo: bool = False) -> str:
    if s is None:
        return "-"
    if demo:
        return "race showed (wrong)" if s != "ok" else "right this run"
    return {"ok": "ok", "wrong": "WRONG", "error": "ERROR"}.get(s, s)


HEADER = (
    "stage",
    "variant",
    "what it changes",
    "CUDA 1st pass µs",
    "CUDA µs",
    "CUDA GB/s",
    "Triton twin",
    "Triton µs",
    "Triton GB/s",
    "step ×",
    "cum. ×",
    "check",
)


def _cells(r: dict) -> list[str]:
    def us(ms: float | None) -> str:
        return _f(None if ms is None else ms * 1e3, ".1f")

    check = _status(r["status"], r["wrong_demo"])
    if r["twin_status"] not in (None, "ok"):
        check += f" / twin {_status(r['twin_status'])}"
    return [
        r["stage"],
        r["variant"].removeprefix("cuda/"),
        r["change"],
        us(r["cuda_first_ms"]),
        us(r["cuda_ms"]),
        _f(r["cuda_gbps"], ".0f"),
        (r["twin"] or "").removeprefix("triton/"),
        us(r["triton_ms"]),
        _f(r["triton_gbps"], ".0f"),
        _f(r["step_x"], ".2f"),
        _f(r["cum_x"], ".1f"),
        check,
    ]


def markdown_ladder(rows: Iterable[dict], peers: Iterable[dict] = ()) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    cells = [_cells(r) for r in rows] + [peer_cells(p) for p in peers]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in cs) + " |" for cs in cells]
    return "\n".join(lines) + "\n"


def rich_ladder(rows: Iterable[dict], title: str, peers: Iterable[dict] = ()):
    from rich.table import Table

    table = Table(title=title, show_lines=False)
    for h in HEADER:
        table.add_column(
            h, justify="right" if "µs" in h or "×" in h or "GB/s" in h else "left", overflow="fold"
        )
    for r in rows:
        style = "red" if r["status"] != "ok" and not r["wrong_demo"] else None
        table.add_row(*_cells(r), style=style)
    peers = list(peers)
    if peers:
        table.add_section()
        for p in peers:
            table.add_row(*peer_cells(p), style="red" if p["status"] != "ok" else "dim")
    return table


# Peers (torch.sum, cupy.sum with CUB on / off, copy bandwidth): the footer of the ladder table.
CUB_ID, TORCH_ID, COPY_ID = "peer/cupy.sum-cub", "peer/torch.sum", "peer/copy"


def ratios(ms: float | None, gbps: float | None, at: dict[str, dict]) -> dict:
    """Ratios against the peers measured in the same run at the same n and dtype:
    x_cub = t(cupy.sum, CUB) / t (above 1: faster than CUB), x_torch likewise for torch.sum,
    pct_copy = effective GB/s as % of the device-to-device copy's GB/s."""

    def t(vid: str) -> float | None:
        r = at.get(vid)
        return _ms(r) if r and r.get("status") == "ok" else None

    cub, tor = t(CUB_ID), t(TORCH_ID)
    copy = at.get(COPY_ID, {}).get("gbps_total") if t(COPY_ID) else None
    return {
        "x_cub": cub / ms if cub and ms else None,
        "x_torch": tor / ms if tor and ms else None,
        "pct_copy": 100 * gbps / copy if gbps and copy else None,
    }


def ratio_text(r: dict) -> str:
    parts = []
    if r.get("x_cub") is not None:
        parts.append(f"{r['x_cub']:.2f}× CUB")
    if r.get("x_torch") is not None:
        parts.append(f"{r['x_torch']:.2f}× torch.sum")
    if r.get("pct_copy") is not None:
        parts.append(f"{r['pct_copy']:.0f}% of copy")
    return ", ".join(parts) or "-"


def peer_rows(results: list[dict], n: int, dtype: str = "float32") -> list[dict]:
    """One footer row per peer measured at (n, dtype), with its ratios to the other peers."""
    at = {r["variant"]: r for r in results if r["n"] == n and r["dtype"] == dtype}
    out = []
    for vid in (CUB_ID, "peer/cupy.sum-nocub", TORCH_ID, COPY_ID):
        r = at.get(vid)
        if r is None:
            continue
        ms, gbps = _ms(r), r.get("gbps_total")
        out.append(
            {
                "variant": vid,
                "title": catalogue.BY_ID[vid].title if vid in catalogue.BY_ID else vid,
                "status": r["status"],
                "ms": ms,
                "gbps": gbps,
                **ratios(ms, gbps, at),
            }
        )
    return out


def peer_cells(p: dict) -> list[str]:
    us = _f(None if p["ms"] is None else p["ms"] * 1e3, ".1f")
    what = p["title"] + ("" if p["variant"] == COPY_ID else f": {ratio_text(p)}")
    return [
        "peer",
        p["variant"],
        what,
        "-",
        us,
        _f(p["gbps"], ".0f"),
        *["-"] * 5,
        _status(p["status"]),
    ]


def best_line(results: list[dict], n: int, dtype: str = "float32") -> str | None:
    """'fastest CUDA stage ... / fastest Triton ...' with their ratios to the peers."""
    at = {r["variant"]: r for r in results if r["n"] == n and r["dtype"] == dtype}
    parts = []
    for backend in ("cuda", "triton"):
        ok = [
            r
            for r in at.values()
            if r.get("backend") == backend and r["status"] == "ok" and _ms(r) is not None
        ]
        if ok:
            b = min(ok, key=lambda r: _ms(r))
            rt = ratios(_ms(b), b.get("gbps_total"), at)
            parts.append(
                f"fastest {backend}: {b['variant']} {b.get('gbps_total', 0):.0f} GB/s "
                f"({ratio_text(rt)})"
            )
    return "; ".join(parts) or None


CHECK_HEADER = ("variant", "dtype", "n", "status", "result", "golden", "|err|", "tolerance")


def check_cells(r: dict) -> list[str]:
    status = _status(r["status"], r.get("wrong_demo", False))
    return [
        r["variant"],
        r["dtype"],
        f"{r['n']:,}",
        status,
        str(r.get("value", "-")),
        str(r.get("golden", "-")),
        _f(r.get("abs_err"), ".3g"),
        _f(r.get("tolerance"), ".3g"),
    ]


def rich_checks(rows: Iterable[dict], title: str):
    from rich.table import Table

    table = Table(title=title)
    for h in CHECK_HEADER:
        table.add_column(h, overflow="fold")
    for r in rows:
        bad = r["status"] != "ok" and not r.get("wrong_demo")
        table.add_row(*check_cells(r), style="red" if bad else None)
    return table


# ---------------------------------------------------------------------------------------------
# A seed's own table: seed 004's effective-bandwidth table, regenerated (`--seed 004`).

# Seed 004's own nsys times (ms) for 16M ints, 256 threads, on its (unnamed) GPU: printed beside
# ours for reference only. The seed gives no figure for its Dyn kernels ("no difference seen").
SEED_FIGURES_MS: dict[str, float] = {
    "004:reduceGmem": 0.248,
    "004:reduceSmem": 0.201,
    "004:reduceGmemUnroll": 0.120,
    "004:reduceSmemUnroll": 0.097,
}

ITEMSIZE = {"float32": 4, "int32": 4}


def _kernel_ms(row: dict | None) -> float | None:
    """The first-pass kernel time: for in-place variants without the scratch refresh copy."""
    if not row:
        return None
    return _ms(row, "first_pass_kernel") or _ms(row, "first_pass")


def seed_rows(results: list[dict], n: int, dtype: str, seed: str = "004") -> list[dict]:
    """The seed's table: one row per CUDA kernel of the seed (stage order) with its Triton twin,
    then the peers. Like the seed it times one kernel (the first pass, n elements in, one partial
    per block out); effective bandwidth = (bytes read + bytes written) / time. Peers are one
    library call (n in, 1 out)."""
    at = {r["variant"]: r for r in results if r["n"] == n and r["dtype"] == dtype}
    prefix = f"{seed}:"
    size = ITEMSIZE[dtype]
    cuda = [
        catalogue.BY_ID[i]
        for i, r in at.items()
        if i in catalogue.BY_ID
        and r.get("backend") == "cuda"
        and any(s.startswith(prefix) for s in catalogue.BY_ID[i].seeds)
    ]

    def gbps(nbytes: int, ms: float | None) -> float | None:
        return nbytes / ms / 1e6 if ms else None

    rows: list[dict] = []
    for v in catalogue.ladder_order(cuda):
        r, t = at[v.id], at.get(v.twin or "")
        label = next(s for s in v.seeds if s.startswith(prefix))
        written = r.get("blocks_first_pass") or one_pass(v.launch, n).blocks
        nbytes = (n + written) * size
        ms, tms = _kernel_ms(r), _kernel_ms(t)
        rows.append(
            {
                "kernel": label.removeprefix(prefix),
                "variant": v.id,
                "status": r["status"],
                "cuda_ms": ms,
                "twin": v.twin,
                "twin_status": t["status"] if t else None,
                "twin_ms": tms,
                "read": n,
                "written": written,
                "bytes": nbytes,
                "cuda_gbps": gbps(nbytes, ms),
                "twin_gbps": gbps(nbytes, tms),
                "seed_ms": SEED_FIGURES_MS.get(label),
                "in_place": bool(v.launch and v.launch.in_place),
            }
        )
    for i, r in at.items():
        if r.get("backend") != "peer":
            continue
        ms = _ms(r) or _ms(r, "first_pass")
        written = n if i == "peer/copy" else 1  # the copy writes all n; a sum writes one value
        nbytes = (n + written) * size
        rows.append(
            {
                "kernel": i.removeprefix("peer/"),
                "variant": i,
                "status": r["status"],
                "cuda_ms": ms,
                "twin": None,
                "twin_status": None,
                "twin_ms": None,
                "read": n,
                "written": written,
                "bytes": nbytes,
                "cuda_gbps": gbps(nbytes, ms),
                "twin_gbps": None,
                "seed_ms": None,
                "in_place": False,
            }
        )
    return rows


SEED_HEADER = (
    "kernel",
    "CUDA µs",
    "Triton twin",
    "twin µs",
    "elements read",
    "elements written",
    "total bytes",
    "CUDA GB/s",
    "twin GB/s",
    "seed's ms (its GPU)",
    "check",
)


def _seed_cells(r: dict) -> list[str]:
    def us(ms: float | None) -> str:
        return _f(None if ms is None else ms * 1e3, ".1f")

    check = _status(r["status"])
    if r["twin_status"] not in (None, "ok"):
        check += f" / twin {_status(r['twin_status'])}"
    return [
        r["kernel"] + (" (in place)" if r["in_place"] else ""),
        us(r["cuda_ms"]),
        (r["twin"] or "-").removeprefix("triton/"),
        us(r["twin_ms"]),
        str(r["read"]),
        str(r["written"]),
        str(r["bytes"]),
        _f(r["cuda_gbps"], ".1f"),
        _f(r["twin_gbps"], ".1f"),
        _f(r["seed_ms"], ".3f"),
        check,
    ]


SEED_NOTE = (
    "One kernel (the first pass) as the seed times it: n elements read, one partial per block "
    "written; effective bandwidth = (bytes read + bytes written) / time. In-place kernels are "
    "timed without the harness's refresh of their scratch copy. Peers: one library call, n read, "
    "1 written (the copy: n written). The seed's column is its own GPU's nsys time, for "
    "reference only."
)


def markdown_seed(rows: Iterable[dict]) -> str:
    lines = ["| " + " | ".join(SEED_HEADER) + " |", "|" + "---|" * len(SEED_HEADER)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in _seed_cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n\n" + SEED_NOTE + "\n"


def rich_seed(rows: Iterable[dict], title: str):
    from rich.table import Table

    table = Table(title=title, caption=SEED_NOTE)
    for h in SEED_HEADER:
        left = h in ("kernel", "Triton twin", "check")
        table.add_column(h, justify="left" if left else "right", overflow="fold")
    for r in rows:
        table.add_row(*_seed_cells(r), style="red" if r["status"] != "ok" else None)
    return table
