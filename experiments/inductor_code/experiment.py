"""What torch.compile writes for the 1-D sum, and what it costs at each size.

    python -m experiments.inductor_code --out DIR [--modes static dynamic coop]
    python -m experiments.inductor_code --write-doc docs/porting-inductor.md  (page.py; no GPU)

One process, one compiled `t.sum()` per mode, called on growing float32 sizes (2^10, 2^20, 2^28,
slices of one input) exactly as a user would:
- static:  torch.compile(dynamic=False): one compile per size, each with its own split;
- dynamic: torch.compile's default (dynamic=None, automatic dynamic shapes): static at the first
           size, then ONE recompile with a symbolic size at the second, reused at the third: the
           reduction's split is the one chosen for the size seen when compiling, not the size
           it runs at (README.md: what it cost);
- coop:    static with torch._inductor.config.triton.cooperative_reductions = True (this compile
           only, through torch.compile(options=...)); skipped with the reason where torch lacks it.

Each compile's generated wrapper (with the Triton kernels inside it) is captured as Inductor saves
it (GraphLowering.save_output_code, Inductor's caches off), WITHOUT torch._dynamo.reset() between
calls (torch._inductor.utils.run_and_get_code resets, which would erase the recompile path). Writes
DIR/inductor-static.py, inductor-dynamic.py, inductor-coop.py (the code, headed by the versions and
the call that compiled it) and DIR/inductor.json: versions, sizes, per call whether it compiled,
the device time (CUDA events, harness.core.timing.time_ms), the check against the golden sum, the
facts read from the code (kernels, size hints, xnumel / r0_numel, block constants, launches) and
the configurations the autotuner kept (XBLOCK / R0_BLOCK / RSPLIT, warps, stages).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import experiments
from harness.report import documents
from harness.report.records import Row
from harness.studies.suites import row_common

SUITE = "inductor-code"  # its ROWS document's suite
SIZES = (2**10, 2**20, 2**28)
MODES = ("static", "dynamic", "coop")
DTYPE = "float32"


def code_facts(source: str) -> dict:
    """What the generated wrapper says about how the sum is split, read with regular expressions
    (so it works on any captured file): the Triton kernels, their heuristics and size hints,
    their reduction hint, the constants they fix (xnumel, r0_numel / rnumel, XBLOCK, RBLOCK,
    R0_BLOCK, RSPLIT) and the launches the wrapper makes (kernel and arguments, or the grid)."""
    kernels = re.findall(r"def (triton_\w+)\(", source)
    heuristics = [
        {"kind": kind, "size_hints": hints}
        for kind, hints in re.findall(
            r"@triton_heuristics\.(\w+)\(\s*size_hints=(\{[^}]*\})", source
        )
    ]
    hints = re.findall(r"reduction_hint=ReductionHint\.(\w+)", source)
    constants: dict[str, list[int]] = {}
    for name, value in re.findall(
        r"^\s*(xnumel|r0_numel|rnumel|XBLOCK|RBLOCK|R0_BLOCK|RSPLIT)\s*(?::\s*tl\.constexpr)?"
        r"\s*=\s*(\d+)\s*$",
        source,
        flags=re.MULTILINE,
    ):
        constants.setdefault(name, []).append(int(value))
    launches = [
        {"kernel": k, "args": " ".join(a.split())}
        for k, a in re.findall(r"(triton_\w+)\.run\(([^)]*)\)", source)
    ]
    grids = [" ".join(g.split()) for g in re.findall(r"grid=(\w*grid\w*\([^)]*\))", source)]
    return {
        "kernels": kernels,
        "heuristics": heuristics,
        "reduction_hints": hints,
        "constants": constants,
        "launches": launches,
        "grids": grids,
    }


@contextlib.contextmanager
def captured_code() -> Iterator[list[str]]:
    """Every wrapper Inductor saves while inside (a compile, or a cache hit), in order; nothing
    reset, so Dynamo's recompile path stays what a user gets."""
    from unittest import mock

    from torch._inductor import config
    from torch._inductor.graph import GraphLowering

    # Caches off: every compile generates its code here (a cache hit would not always say so).
    no_cache = {"force_disable_caches": True} if hasattr(config, "force_disable_caches") else {}
    codes: list[str] = []
    with (
        config.patch(no_cache),
        mock.patch.object(GraphLowering, "save_output_code", codes.append),
    ):
        yield codes


def kept_configs(modules: list) -> list[dict]:
    """The configurations the autotuner kept for each Triton kernel of the given wrapper modules
    (torch._inductor.codecache.PyCodeCache.modules added by a compile): block sizes, warps,
    stages. Best effort: a torch whose autotuner object differs gives an empty list."""
    out = []
    for module in modules:
        for name, obj in sorted(vars(module).items()):
            launchers = getattr(obj, "launchers", None)
            if not name.startswith("triton_") or not isinstance(launchers, list):
                continue
            for launcher in launchers:
                cfg = getattr(launcher, "config", None)
                if cfg is None:
                    continue
                out.append(
                    {
                        "kernel": name,
                        **{k: v for k, v in cfg.kwargs.items() if isinstance(v, int)},
                        "num_warps": cfg.num_warps,
                        "num_stages": cfg.num_stages,
                    }
                )
    return out


def compile_kwargs(mode: str) -> dict:
    """torch.compile's arguments per mode (see the module docstring)."""
    from harness.launch import peers

    if mode == "static":
        return {"dynamic": False, "fullgraph": True}
    if mode == "dynamic":
        return {"dynamic": None, "fullgraph": True}
    if mode == "coop":
        why = peers.coop_unavailable_reason()
        if why:
            raise peers.PeerUnavailable(why)
        return {"dynamic": False, "fullgraph": True, "options": {peers.COOP_OPTION: True}}
    raise ValueError(f"unknown mode {mode!r}; modes: {', '.join(MODES)}")


def _call(fn: Callable, x, n: int, log: Callable[[str], None]) -> tuple[dict, list[str]]:
    """One call at n: compile (if Dynamo must), check, time. Returns its row and the code saved."""
    import torch
    from torch._inductor.codecache import PyCodeCache

    from harness.check import verify
    from harness.core import catalogue, timing

    loaded = getattr(PyCodeCache, "modules", [])  # the wrapper modules Inductor has loaded
    before = len(loaded)
    with captured_code() as codes:
        out = fn(x)
        torch.cuda.synchronize()
    check = verify.compare(
        catalogue.get(catalogue.COMPILE_ID), DTYPE, n, verify.as_number(out), verify.golden(x)
    )
    t = timing.time_ms(lambda: fn(x), reps=5 if n >= 2**26 else None)
    row = {
        "n": n,
        "compiled": bool(codes),
        "median_us": t.median_ms * 1e3,
        "timing": t.record(),
        "gb_per_s": n * x.element_size() / (t.median_ms * 1e-3) / 1e9,
        "ok": check.ok,
        "message": check.message,
        "code_facts": [code_facts(c) for c in codes],
        "kept_configs": kept_configs(loaded[before:]),
    }
    log(f"  n=2^{n.bit_length() - 1}: {row['median_us']:10.1f} us  compiled={row['compiled']}")
    return row, codes


def run_mode(mode: str, full, log: Callable[[str], None]) -> tuple[dict, str]:
    """One mode over SIZES: its JSON entry and its captured source (one block per compile)."""
    import torch

    from harness.launch import peers

    try:
        kwargs = compile_kwargs(mode)
    except peers.PeerUnavailable as e:
        return {"mode": mode, "unavailable": str(e), "calls": []}, f"# not captured: {e}\n"
    fn = torch.compile(peers.fresh_sum(), **kwargs)
    calls, blocks = [], []
    for n in SIZES:
        row, codes = _call(fn, full[:n], n, log)
        calls.append(row)
        for i, code in enumerate(codes):
            blocks.append(
                f"# ==== compiled at the call with n = 2^{n.bit_length() - 1} ({i}) ====\n"
            )
            blocks.append(code.rstrip() + "\n\n")
    shown = {k: v for k, v in kwargs.items() if k != "options"}
    entry = {"mode": mode, "compile_kwargs": {**shown, **kwargs.get("options", {})}, "calls": calls}
    return entry, "".join(blocks)


def versions() -> dict:
    import torch
    import triton

    return {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(),
    }


def study(out_dir: Path, modes: tuple[str, ...] = MODES, log=print) -> dict:
    from harness.check import verify

    out_dir.mkdir(parents=True, exist_ok=True)
    ver = versions()
    full = verify.seed_like_input(max(SIZES), DTYPE, "cuda")
    doc = {
        "versions": ver,
        "dtype": DTYPE,
        "sizes": list(SIZES),
        "modes": [],
    }
    head = (
        f"# Generated by torch.compile (Inductor) for `lambda t: t.sum()`, {DTYPE}, captured by\n"
        f"# experiments/inductor_code/experiment.py: torch {ver['torch']}, triton {ver['triton']}, "
        f"CUDA {ver['cuda']}, {ver['device']}.\n"
    )
    for mode in modes:
        log(f"{mode}:")
        entry, source = run_mode(mode, full, log)
        doc["modes"].append(entry)
        (out_dir / f"inductor-{mode}.py").write_text(head + f"# mode: {mode}\n\n" + source)
    documents.write_document(out_dir / "inductor.json", document(doc))
    return doc


def document(doc: dict) -> dict:
    """The study's ROWS document: each call's device time a row ("call", its mode the config,
    checked), the rest of each call (whether it compiled, the code's facts...) under "modes"."""
    ver = doc["versions"]
    device = {"name": ver["device"], "torch": ver["torch"], "triton": ver["triton"],
              "cuda_runtime": ver["cuda"]}  # fmt: skip
    common = {**row_common(SUITE, device), "variant": "torch.compile", "dtype": doc["dtype"]}
    rows = [Row(**common, config=m["mode"], shape=c["n"], metric="call", **c["timing"],
                check="ok" if c["ok"] else "wrong")
            for m in doc["modes"] for c in m["calls"] if "timing" in c]  # fmt: skip
    modes = [{**m, "calls": [{k: v for k, v in c.items() if k != "timing"} for c in m["calls"]]}
             for m in doc["modes"]]  # fmt: skip
    return experiments.as_rows({**doc, "device": device, "modes": modes}, SUITE, rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.inductor_code", description=__doc__)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--out", type=Path, help="folder for the code and inductor.json")
    what.add_argument(
        "--write-doc", metavar="PATH", help="render the committed captures (no GPU needed)"
    )
    p.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    args = p.parse_args(argv)
    if args.write_doc:
        from experiments.inductor_code import page

        Path(args.write_doc).write_text(page.page())
        print(f"wrote {args.write_doc}")
        return 0
    from harness.core import device

    ok, why = device.torch_gpu()
    if not ok:
        print(f"inductor_code: needs an NVIDIA GPU ({why})", file=sys.stderr)
        return 2
    doc = study(args.out, tuple(args.modes))
    bad = [c for m in doc["modes"] for c in m["calls"] if not c["ok"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
