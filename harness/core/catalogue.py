"""The catalogue of variants: one record per variant, the single source of truth.

The CLI, the tests, the benchmarks, the report and the docs all read VARIANTS. Adding a variant is
one record (in harness.core.records_ladder or records_beyond, by family) plus one kernel (a
template in a cuda_kernels/*.cu file, or a Triton kernel in triton_kernels/). See
docs/development.md, "Adding a variant".

Vocabulary
- backend: "cuda" (a kernel in cuda_kernels/, launched through CuPy), "triton" (a kernel in
  triton_kernels/), "peer" (what a user would call instead: torch.sum, cupy.sum, torch.compile,
  cuda.compute).
- stage: the rung of the ladder ("0".."8" for seeds 000/002); the ladder is printed in stage order.
  A seed with a ladder of its own numbers its rungs "<seed>-<k>" ("004-1".."004-6"): they print
  after the main ladder, as their own group (see stage_key).
- seeds: the seed labels the variant implements, e.g. "000:v3", "002:R3" (see SEED_LABELS).
- twin: the Triton variant that hands each program the same tile(s) as this CUDA block (and for a
  Triton record, None: its CUDA stages name it).
- tile mapping (Launch, harness.core.mappings): which elements one block / program reads. Both
  backends derive their grid from the same Launch, so "same tile" holds by construction.
- kernel: for CUDA a C++ name expression with {T} for the element type and {B} for the block size
  (filled in from launch.threads), instantiated through NVRTC's name_expressions; for Triton the
  name of the @triton.jit function in triton_kernels.tiles (or fastest).

The record types live in harness.core.variant, the records in records_ladder / records_beyond;
this module assembles them into VARIANTS and answers lookups. The axis family (sums along one
dim, harness.core.records_axis) is AXIS_VARIANTS / get_axis, kept out of VARIANTS: every reader of
VARIANTS sums a 1-D input to a scalar (records_axis says why). Every name the other layers use
(Variant, Launch, MAX_N_32BIT, FASTEST_UNROLL, the peer ids, ...) is importable from here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from harness.core.mappings import Launch
from harness.core.records_axis import AXIS_BY_ID, AXIS_VARIANTS, SOURCE_CUDA
from harness.core.records_axis import name_expressions as axis_name_expressions
from harness.core.records_beyond import (
    CCCL_ID,
    CCCL_IDS,
    CCCL_NONDET_ID,
    COMPILE_COOP_ID,
    COMPILE_DYNAMIC_ID,
    COMPILE_ID,
    COMPILE_IDS,
    COPY_ID,
    CUB_ID,
    DYNAMIC_FIRST_N,
    FASTEST_CUDA,
    FASTEST_DTYPES,
    FASTEST_STEP,
    FASTEST_TRITON,
    HOST_CUDA,
    HOST_TILE,
    HOST_TRITON,
    NOCUB_ID,
    PEERS,
    TORCH_SUM_ID,
)
from harness.core.records_ladder import (
    LADDER_CUDA,
    LADDER_TRITON,
    SEED_004_CUDA,
    SEED_004_TRITON,
)
from harness.core.records_reproducible import REPRODUCIBLE
from harness.core.variant import (
    FASTEST_UNROLL,
    MAX_N_32BIT,
    MAX_N_64BIT,
    Variant,
    launch_policy,
    stage_key,
)

__all__ = [
    "AXIS_BY_ID",
    "AXIS_VARIANTS",
    "BY_ID",
    "CCCL_ID",
    "CCCL_IDS",
    "CCCL_NONDET_ID",
    "COMPILE_COOP_ID",
    "COMPILE_DYNAMIC_ID",
    "COMPILE_ID",
    "COMPILE_IDS",
    "COPY_ID",
    "CUB_ID",
    "DYNAMIC_FIRST_N",
    "FASTEST_DTYPES",
    "FASTEST_STEP",
    "FASTEST_UNROLL",
    "HOST_TILE",
    "MAX_N_32BIT",
    "MAX_N_64BIT",
    "NOCUB_ID",
    "PEER_IDS",
    "SEED_LABELS",
    "TORCH_SUM_ID",
    "VARIANTS",
    "Launch",
    "Variant",
    "cuda_sources",
    "get",
    "get_axis",
    "ladder_order",
    "launch_policy",
    "name_expressions",
    "select",
    "stage_key",
]

# Every seed label the project implements, exactly as the issues spell them.
SEED_LABELS: tuple[str, ...] = (
    *(f"000:v{i}" for i in range(4)),
    "000:v4a",
    "000:v4b",
    *(f"000:v{i}" for i in range(5, 9)),
    "002:R0",
    "002:R1",
    "002:R2-official",
    "002:R2-mine",
    "002:R3",
    "002:R4-A",
    "002:R4-B",
    "002:R4-C",
    "002:R5-wrong1",
    "002:R5-wrong2",
    "002:R5",
    "002:R6",
    "002:R6-official",
    "002:R7",
    "002:R8",
    *(f"001:V{i}" for i in range(5)),
    "004:reduceGmem",
    "004:reduceSmem",
    "004:reduceGmemUnroll",
    "004:reduceSmemUnroll",
    "004:reduceSmemDyn",
    "004:reduceSmemUnrollDyn",
)

VARIANTS: tuple[Variant, ...] = (
    *LADDER_CUDA,
    *SEED_004_CUDA,
    *LADDER_TRITON,
    *SEED_004_TRITON,
    *HOST_CUDA,
    *HOST_TRITON,
    FASTEST_CUDA,
    FASTEST_TRITON,
    *REPRODUCIBLE,
    *PEERS,
)
BY_ID: dict[str, Variant] = {v.id: v for v in VARIANTS}
PEER_IDS: tuple[str, ...] = tuple(v.id for v in PEERS)


def _check_catalogue() -> None:
    """Ids unique; every CUDA twin names a Triton record that lists it back."""
    if len(BY_ID) != len(VARIANTS):
        raise RuntimeError("duplicate variant ids in the catalogue")
    for v in VARIANTS:
        twin = BY_ID.get(v.twin) if v.twin else None
        if v.twin and (twin is None or twin.backend != "triton" or v.id not in twin.twin_of):
            raise RuntimeError(f"{v.id}: twin {v.twin!r} is not a Triton record twinning it")

    for v in AXIS_VARIANTS:
        twin = AXIS_BY_ID.get(v.twin) if v.twin else None
        if v.twin and (twin is None or v.id not in twin.twin_of):
            raise RuntimeError(f"{v.id}: twin {v.twin!r} is not an axis record twinning it")
    if set(AXIS_BY_ID) & set(BY_ID) or len(AXIS_BY_ID) != len(AXIS_VARIANTS):
        raise RuntimeError("axis ids must be unique and apart from the 1-D catalogue's")


_check_catalogue()


class UnknownVariant(KeyError):
    """An id the catalogue does not hold (a KeyError, printed without KeyError's quotes)."""

    def __str__(self) -> str:
        return str(self.args[0])


def close_ids(unknown: str, valid: Iterable[str] | None = None) -> list[str]:
    """The valid ids a mistyped or unprefixed one most likely meant: ids ending in '/<unknown>'
    first (`tile-256` -> `triton/tile-256`), then difflib's close matches; at most three."""
    valid = list(BY_ID if valid is None else valid)
    by_suffix = [i for i in valid if i.split("/", 1)[-1] == unknown]
    close = difflib.get_close_matches(unknown, valid, n=3, cutoff=0.75)
    return list(dict.fromkeys([*by_suffix, *close]))[:3]


def get(variant_id: str) -> Variant:
    """The record for `variant_id`; otherwise UnknownVariant (a KeyError) with the close ids, as
    the CLI words it: "unknown variant 'tile-256'; did you mean triton/tile-256?"."""
    try:
        return BY_ID[variant_id]
    except KeyError:
        close = close_ids(str(variant_id))
        hint = f"did you mean {' or '.join(close)}?" if close else "no id is close"
        raise UnknownVariant(
            f"unknown variant {variant_id!r}; {hint} "
            f"({len(BY_ID)} ids: `reduce-ladder list`, harness.core.catalogue.BY_ID)"
        ) from None


def get_axis(variant_id: str) -> Variant:
    """The axis family's record for `variant_id` (AXIS_VARIANTS: kept out of VARIANTS, see
    harness.core.records_axis); otherwise UnknownVariant with the close axis ids."""
    try:
        return AXIS_BY_ID[variant_id]
    except KeyError:
        close = close_ids(str(variant_id), AXIS_BY_ID)
        hint = f"did you mean {' or '.join(close)}?" if close else "no axis id is close"
        raise UnknownVariant(
            f"unknown axis variant {variant_id!r}; {hint} (ids: harness.core.catalogue.AXIS_BY_ID)"
        ) from None


def select(
    ids: Iterable[str] | None = None,
    *,
    backend: str | None = None,
    dtype: str | None = None,
    include_wrong: bool = False,
    family: str | None = None,
) -> list[Variant]:
    """Variants in catalogue order, filtered. Explicitly named ids are always included (a wrong
    demonstration runs when asked for by name); otherwise wrong demonstrations only with
    include_wrong."""
    chosen = [get(i) for i in ids] if ids else [v for v in VARIANTS if include_wrong or not v.wrong]
    return [
        v
        for v in chosen
        if (backend is None or v.backend == backend)
        and (dtype is None or dtype in v.dtypes)
        and (family is None or v.family == family)
    ]


def ladder_order(variants: Iterable[Variant]) -> list[Variant]:
    """Stable sort by stage (catalogue order within a stage)."""
    return sorted(variants, key=lambda v: stage_key(v.stage))


def cuda_sources() -> dict[str, list[Variant]]:
    """CUDA variants grouped by source file."""
    out: dict[str, list[Variant]] = {}
    for v in VARIANTS:
        if v.backend == "cuda" and v.source:
            out.setdefault(v.source, []).append(v)
    return out


def name_expressions(source: str) -> list[str]:
    """Every template instantiation a source file must provide (all its variants x dtypes), each
    once (seed 001's V1, V2 and V3 launch one kernel). The axis family's source (records_axis)
    lists every launch kind x dtype: its split and fastest variants launch other stages' kernels."""
    if source == SOURCE_CUDA:
        return axis_name_expressions()
    exprs = [v.name_expression(d) for v in cuda_sources().get(source, []) for d in v.dtypes]
    return list(dict.fromkeys(exprs))
