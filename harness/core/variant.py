"""The catalogue's record type, Variant (its Launch: harness.core.mappings), the stage order, the
launch policy line and the record builders. The vocabulary: harness.core.catalogue's docstring.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from harness.core import dtypes
from harness.core.mappings import Launch

# Largest n the 32-bit-indexed seed kernels accept (their index arithmetic stays below 2^32).
MAX_N_32BIT = 2**31 - 1
# Seed 001's kernels and the fastest pair take 64-bit sizes.
MAX_N_64BIT = 2**62

# cuda/fastest's UNROLL ({U} in its name expression): 16-byte loads in flight per thread; 4 for
# the 16-bit types, whose conversions need the registers (8 measured slower: benchmarks/FASTEST.md).
FASTEST_UNROLL = {name: 8 if d.itemsize >= 4 else 4 for name, d in dtypes.DTYPES.items()}


@dataclass(frozen=True)
class Variant:
    """One variant. Field order is the JSON record's key order (`reduce-ladder list`)."""

    id: str
    backend: str
    stage: str
    title: str
    change: str
    seeds: tuple[str, ...] = ()
    twin: str | None = None
    dtypes: tuple[str, ...] = ("float32",)
    launch: Launch | None = None
    source: str | None = None
    kernel: str | None = None
    wrong: bool = False
    family: str = "ladder"
    max_n: int = MAX_N_32BIT
    notes: str = ""
    # Seed 001: how host data reaches the device ("pageable", "pinned", "streams"), else "".
    staging: str = ""
    # A Triton record: the CUDA ids that name it as their twin (computed where it is written).
    twin_of: tuple[str, ...] = field(default=(), compare=False)
    # The other backend's variant for the same goal with its own tiles (not a twin).
    counterpart: str | None = None
    # False: `run` / `check` leave it out without --all (torch.compile: seconds to compile).
    by_default: bool = True

    @property
    def tile_mapping(self) -> str:
        return self.launch.describe() if self.launch else "library call"

    def name_expression(self, dtype: str) -> str:
        """The C++ name expression NVRTC instantiates for this CUDA variant and element type:
        {T} the element type, {B} launch.threads, {U} FASTEST_UNROLL's (cuda/fastest only)."""
        if self.backend != "cuda" or self.kernel is None or self.launch is None:
            raise ValueError(f"{self.id} is not a CUDA kernel")
        return self.kernel.format(
            T=dtypes.get(dtype).cxx, B=self.launch.threads, U=FASTEST_UNROLL.get(dtype, 0)
        )

    def record(self) -> dict:
        """The JSON-ready record (what `reduce-ladder list --format json` prints)."""
        d = asdict(self)
        if self.launch is not None:
            d["launch"]["mapping"] = self.launch.mapping.name
            if self.kernel and self.backend == "cuda":  # the block size written out, {T} kept
                d["kernel"] = self.kernel.replace("{B}", str(self.launch.threads))
        d.update(seeds=list(self.seeds), dtypes=list(self.dtypes), twin_of=list(self.twin_of))
        return {**d, "tile_mapping": self.tile_mapping, "launch_policy": launch_policy(self)}


def launch_policy(v: Variant) -> str:
    """One line on how the variant reduces any n to a scalar."""
    if v.launch is None:
        return "one library call"
    if v.launch.mapping.one_launch:
        return f"{v.launch.describe()}; the last block to finish sums the partials in block order"
    base = f"{v.launch.describe()}; the same kernel again over the partials until one is left"
    return base + ("; first pass on a scratch copy (in place)" if v.launch.in_place else "")


def stage_key(stage: str) -> tuple[int, str]:
    """Sort key of a stage: "0".."8", then a seed's own rungs ("004-1".."004-6"), then the rest
    ("V0", "fastest", "repro"), the peers last."""
    head = stage.split("-")[0]
    if "-" in stage and len(head) == 3 and head.isdigit():  # a seed's own rungs, e.g. "004-1"
        return (1000 + int(head), stage)
    return (int(head), stage) if head.isdigit() else (10**6 + (stage == "peer"), stage)


def cuda_variant(id: str, *, twin: str | None, seeds: tuple[str, ...] = (), **fields) -> Variant:
    """A CUDA record: id and twin given without their "cuda/" / "triton/" prefixes."""
    twin = f"triton/{twin}" if twin else None
    return Variant(id=f"cuda/{id}", backend="cuda", seeds=seeds, twin=twin, **fields)


def triton_twin(id: str, *, cuda: list[Variant], **fields) -> Variant:
    """A Triton tile twin, written after the CUDA records that name it: its stage is the first of
    theirs (in stage order), its dtypes all of theirs, twin_of their ids."""
    full_id = f"triton/{id}"
    twins = [c for c in cuda if c.twin == full_id]
    if not twins:
        raise ValueError(f"{full_id} twins no CUDA record")
    stage = min((c.stage for c in twins), key=stage_key)
    dts = tuple(d for d in dtypes.NAMES if any(d in c.dtypes for c in twins))
    return Variant(id=full_id, backend="triton", stage=stage, dtypes=dts,
                   twin_of=tuple(c.id for c in twins), source="tiles.py", **fields)  # fmt: skip
