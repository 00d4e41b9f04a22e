"""The accuracy study: every float32 variant and the peers on the data battery, ulps against the
exact sum; the reproducible variants' result bits (docs/studies.md#the-accuracy-studys-files)."""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction
from functools import lru_cache

import numpy as np

from harness.check import battery, exact
from harness.core import catalogue
from harness.core.catalogue import CUB_ID, TORCH_SUM_ID, Variant
from harness.report import records
from harness.report.records import Row
from harness.studies import session, suites

DEFAULT_SIZES = (2**20, 2**25)
DTYPE = "float32"
SEED = 0
PEERS = (TORCH_SUM_ID, CUB_ID)
REPRODUCIBLE_FAMILY = "reproducible"
REPRO_SIZES = (1, 1000, 4097, 2**20 + 3, 2**25)
REPRO_DTYPES = ("float32", "bfloat16")
MISALIGNED_SIZES = (4097, 2**20 + 3)
MISALIGNED_OFFSETS = (1, 2, 3)


def study_variants() -> list[Variant]:
    """The variants the study runs, in catalogue order, then the two peers."""
    ours = [v for v in catalogue.select(dtype=DTYPE) if v.launch is not None and not v.staging]
    return ours + [catalogue.get(p) for p in PEERS]


def reproducible_variants() -> list[Variant]:
    return catalogue.select(family=REPRODUCIBLE_FAMILY)


def run_sum(v: Variant, x):
    """The variant's (or peer's) sum of the device tensor x, as a 0-d tensor."""
    from harness.launch import peers
    from harness.launch.api import reduce_sum

    if v.backend == "peer":
        return peers.run(v, x)
    return reduce_sum(x, v)


def result_entry(v: Variant, x) -> dict:
    """v's sum of x: its value in hex and its raw bits, most significant byte first."""
    import torch

    out = run_sum(v, x)
    bits = out.detach().reshape(1).view(torch.uint8).cpu().numpy().tobytes()[::-1].hex()
    return {"hex": float(out.item()).hex(), "bits": bits}


def measure(
    v: Variant, x, s: exact.ExactSum, n: int, family: str, kappa: float, common: dict
) -> Row:
    """v's sum of x as one row of the accuracy study (docs/studies.md): its check "ok" (the sum
    ran), config the data family, info the check's values and the ulps against the exact sum."""
    value = float(run_sum(v, x).item())
    ulps = exact.ulp_error(value, s, "float32")
    finite = s.is_finite and np.isfinite(value)
    err = float(abs(Fraction(value) - s.fraction())) if finite else None
    golden = exact.round_nearest(s, "float32")
    check = {"value": value, "golden": golden} | ({"abs_err": err} if err is not None else {})
    info = {"check": check, "ulps": ulps if np.isfinite(ulps) else None,
            "faithful": exact.faithful(value, s, "float32"), "kappa": kappa,
            "within_limit": bool(kappa <= exact.faithful_condition_limit(n)),
            "result_hex": float(value).hex()}  # fmt: skip
    return Row(**_ident(v, n, family, common), check="ok", info=info)


def _ident(v: Variant, n: int, family: str, common: dict) -> dict:
    return {**common, "variant": v.id, "config": family, "dtype": DTYPE, "shape": n,
            "metric": "check", "median_ms": None}  # fmt: skip


def accuracy(
    variants: list[Variant],
    families: list[str],
    sizes: list[int],
    log: Callable[[str], None] = print,
    where: str = "cuda",
) -> dict:
    """The study's ROWS document (suite "accuracy"): every variant on every family at every n,
    a row each, the seed, each n's limit and the families' descriptions beside the rows.
    where="cpu" only for the tests (Triton's interpreter and torch.sum on the CPU)."""
    from harness.core import device

    info = device.device_info()
    common = suites.row_common("accuracy", info)
    rows: list[Row] = []
    for n in sizes:
        for fam in families:
            x_host = battery.get(fam).generate(n, SEED, DTYPE)
            s, kappa = exact.exact_sum(x_host), battery.kappa(x_host)
            x = battery.to_tensor(x_host, DTYPE, where)
            bad = []
            for v in variants:
                if n > v.max_n:
                    continue
                try:
                    rows.append(measure(v, x, s, n, fam, kappa, common))
                    if not rows[-1].info["faithful"]:
                        bad.append(v.id)
                except Exception as e:  # reported in its row; the study goes on
                    error = session.errored(e)
                    rows.append(Row(**_ident(v, n, fam, common), check="error", info=error))
            tally = f"{len(bad)} of {len(variants)} not faithful"
            log(f"n={n:>9} {fam:<13} kappa {kappa:9.3g}: {tally}")
            del x
        if where == "cuda":
            import torch

            torch.cuda.empty_cache()
    return records.rows_document(
        rows, suite="accuracy", device=info, seed=SEED,
        limits={str(n): exact.faithful_condition_limit(n) for n in sizes},
        families={f: battery.get(f).description for f in families},
    )  # fmt: skip


def _head(schema: str) -> dict:
    from harness.core import device

    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return {"schema": schema, "created": created, "device": device.device_info()}


def reproducible_inputs() -> list[dict]:
    """The fixed list of seeded inputs of reproducible.json, in a fixed order."""
    return [
        {"key": f"{fam.name}/{dtype}/n={n}/offset={off}/seed={SEED}", "family": fam.name,
         "dtype": dtype, "n": n, "offset": off, "seed": SEED}
        for fam in battery.FAMILIES for dtype in REPRO_DTYPES if dtype in fam.dtypes
        for n in REPRO_SIZES
        for off in ((0, *MISALIGNED_OFFSETS) if n in MISALIGNED_SIZES else (0,))
    ]  # fmt: skip


def reproducible(
    variants: list[Variant],
    log: Callable[[str], None] = print,
    inputs: list[dict] | None = None,
    where: str = "cuda",
) -> dict:
    """The reproducible/1 document: every reproducible variant's result bits on every input
    (reproducible_inputs(); a shorter list and where="cpu" only for the tests)."""
    inputs = reproducible_inputs() if inputs is None else inputs
    doc: dict = {
        **_head(records.REPRODUCIBLE_SCHEMA),
        "inputs": inputs,
        "results": {v.id: {} for v in variants},
    }
    # each input made once (its offsets follow it); only the latest kept in host memory
    data = lru_cache(maxsize=1)(lambda fam, dtype, n: battery.get(fam).generate(n, SEED, dtype))
    for item in inputs:
        dtype = item["dtype"]
        x = battery.to_tensor(data(item["family"], dtype, item["n"]), dtype, where, item["offset"])
        for v in variants:
            if dtype not in v.dtypes:
                continue
            try:
                entry = result_entry(v, x)
            except Exception as e:  # reported in the document; the study goes on
                entry = {"error": session.failure(e)}
            doc["results"][v.id][item["key"]] = entry
        del x
    log(f"reproducible.json: {len(inputs)} inputs x {len(variants)} variants")
    return doc
