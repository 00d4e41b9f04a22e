"""Render a seed's table from a run document, and file it under results/<device>/.

The run document is what `reduce-ladder run --seed 004 --dtype int32 --sizes 2^24 --json RUN.json`
wrote on the GPU (docs/int32.md); the Markdown is rendered from its rows, so it can be
regenerated from the committed JSON at any time.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.report import tables
from harness.report.documents import Document, ReportError, load_document, output_path


def slug(name: str) -> str:
    """The results/ folder of a device: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100' (the memory size
    and type that follow the model are dropped: one folder per GPU model, as results/ holds)."""
    model = re.sub(r"\s+\d+\s*GB\b.*$", "", name, flags=re.IGNORECASE)
    return re.sub(r"[^a-z0-9]+", "-", model.lower()).strip("-") or "unknown-device"


def markdown(run: Document) -> tuple[str, str]:
    """(seed, Markdown) for every seed table of the run document."""
    doc, dev = run.raw, run.raw.get("device", {})
    if not (seeds := sorted({r["seed"] for r in doc.get("seed_tables", [])})):
        raise SystemExit("no seed_tables in this run document (was it a timed --seed run?)")
    seed = seeds[0]
    parts = [
        f"# Seed {seed}, regenerated on {dev.get('name', 'an unnamed device')}",
        "",
        f"Run {doc.get('created')}; torch {dev.get('torch')}, triton {dev.get('triton')}, "
        f"cupy {dev.get('cupy')}, CUDA runtime {dev.get('cuda_runtime')}, "
        f"{dev.get('sm_count')} SMs, L2 {dev.get('l2_bytes')} bytes. Rendered from seed{seed}.json "
        "by benchmarks/seed_table.py.",
        "",
    ]
    for t in doc["seed_tables"]:
        rows = tables.seed_rows(run.rows, t["n"], t["dtype"], t["seed"])
        parts += [f"## {t['dtype']}, n = {t['n']:,}", "", tables.markdown_seed(rows)]
    return seed, "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_json", type=Path)
    p.add_argument("--results", type=Path, help="also file it (copy and .md) in <root>/<device>/")
    a = p.parse_args(argv)
    try:
        run = load_document(a.run_json)
    except ReportError as e:
        raise SystemExit(str(e)) from None
    seed, md = markdown(run)
    print(md)
    if a.results:
        name = run.raw.get("device", {}).get("name")
        if not name:
            raise SystemExit("the run document names no GPU: not a GPU run, nothing to file")
        dest = output_path(a.results / slug(name) / f"seed{seed}.json")
        if Path(a.run_json).resolve() != dest.resolve():  # already filed: nothing to copy
            shutil.copyfile(a.run_json, dest)
        dest.with_suffix(".md").write_text(md)
        print(f"wrote {dest} and {dest.with_suffix('.md')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
