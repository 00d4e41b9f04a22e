"""The catalogue of variants: one record per variant, the single source of truth (VARIANTS).
Adding a variant: docs/development.md#adding-a-variant. The axis family is AXIS_VARIANTS /
get_axis, kept out of VARIANTS. Every name the other layers use is importable here.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from harness.core import records_beyond as beyond
from harness.core import records_ladder as ladder
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
    FASTEST_DTYPES,
    HOST_TILE,
    NOCUB_ID,
    TORCH_SUM_ID,
)
from harness.core.variant import FASTEST_UNROLL, MAX_N_32BIT, Variant, stage_key

# fmt: off
__all__ = [
    "AXIS_BY_ID", "AXIS_VARIANTS", "BY_ID", "CCCL_ID", "CCCL_IDS", "CCCL_NONDET_ID",
    "COMPILE_COOP_ID", "COMPILE_DYNAMIC_ID", "COMPILE_ID", "COMPILE_IDS", "COPY_ID", "CUB_ID",
    "DYNAMIC_FIRST_N", "FASTEST_DTYPES", "FASTEST_UNROLL", "HOST_TILE", "MAX_N_32BIT", "NOCUB_ID",
    "PEER_IDS", "TORCH_SUM_ID", "VARIANTS", "Variant", "get",
    "get_axis", "ladder_order", "name_expressions", "select", "stage_key",
]
# fmt: on

VARIANTS: tuple[Variant, ...] = (
    *ladder.LADDER_CUDA,
    *ladder.SEED_004_CUDA,
    *ladder.LADDER_TRITON,
    *ladder.SEED_004_TRITON,
    *beyond.HOST_CUDA,
    *beyond.HOST_TRITON,
    beyond.FASTEST_CUDA,
    beyond.FASTEST_TRITON,
    *beyond.REPRODUCIBLE,
    *beyond.PEERS,
)
BY_ID: dict[str, Variant] = {v.id: v for v in VARIANTS}
PEER_IDS: tuple[str, ...] = tuple(v.id for v in beyond.PEERS)


def _check_catalogue() -> None:
    """Ids unique, axis ids apart; every CUDA twin names a Triton record that lists it back."""
    if len(BY_ID) != len(VARIANTS):
        raise RuntimeError("duplicate variant ids in the catalogue")
    if set(AXIS_BY_ID) & set(BY_ID) or len(AXIS_BY_ID) != len(AXIS_VARIANTS):
        raise RuntimeError("axis ids must be unique and apart from the 1-D catalogue's")
    for v, table in [*((v, BY_ID) for v in VARIANTS), *((v, AXIS_BY_ID) for v in AXIS_VARIANTS)]:
        twin = table.get(v.twin) if v.twin else None
        if v.twin and (twin is None or twin.backend != "triton" or v.id not in twin.twin_of):
            raise RuntimeError(f"{v.id}: twin {v.twin!r} is not a Triton record twinning it")


_check_catalogue()


class UnknownVariant(KeyError):
    """An id the catalogue does not hold (a KeyError, printed without KeyError's quotes)."""

    def __str__(self) -> str:
        return str(self.args[0])


def close_ids(unknown: str, valid: Iterable[str] | None = None) -> list[str]:
    """At most three valid ids a mistyped one meant: ids ending in '/<unknown>' (`tile-256` ->
    `triton/tile-256`), then difflib's close matches."""
    valid = list(BY_ID if valid is None else valid)
    by_suffix = [i for i in valid if i.split("/", 1)[-1] == unknown]
    close = difflib.get_close_matches(unknown, valid, n=3, cutoff=0.75)
    return list(dict.fromkeys([*by_suffix, *close]))[:3]


def get(variant_id: str) -> Variant:
    """The record for `variant_id`; otherwise UnknownVariant (a KeyError) naming the close ids:
    "unknown variant 'tile-256'; did you mean triton/tile-256?"."""
    where = f"{len(BY_ID)} ids: `reduce-ladder list`, harness.core.catalogue.BY_ID"
    return _lookup(BY_ID, variant_id, "", where)


def get_axis(variant_id: str) -> Variant:
    """The axis family's record for `variant_id`; otherwise UnknownVariant (close axis ids)."""
    return _lookup(AXIS_BY_ID, variant_id, "axis ", "ids: harness.core.catalogue.AXIS_BY_ID")


def _lookup(table: dict[str, Variant], variant_id: str, kind: str, where: str) -> Variant:
    try:
        return table[variant_id]
    except KeyError:
        close = close_ids(str(variant_id), table)
        hint = f"did you mean {' or '.join(close)}?" if close else f"no {kind}id is close"
        raise UnknownVariant(f"unknown {kind}variant {variant_id!r}; {hint} ({where})") from None


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


def name_expressions(source: str) -> list[str]:
    """Every template instantiation a source file must provide (its variants x dtypes, the
    sanitizer's demonstrations included: seed_bugs.cu's), once."""
    if source == SOURCE_CUDA:
        return axis_name_expressions()
    records = (*VARIANTS, *beyond.DEMO_VARIANTS)
    cuda = [v for v in records if v.backend == "cuda" and v.source == source]
    exprs = [v.name_expression(d) for v in cuda for d in v.dtypes]
    return list(dict.fromkeys(exprs))
