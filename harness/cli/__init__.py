"""The command line: one module per sub-command, registered explicitly in harness.cli.main.

    main.py           the parser, the default command, --version, exit codes
    common.py         what every command shares: UsageError and exit codes, the console, sizes,
                      dtypes, variant ids (with suggestions), --json paths, the GPU policy
    run.py            `run` (the default) and `check`, on a GPU
    selection.py      what `run` / `check` select, checked before anything runs
    cpu_path.py       `run` / `check` without a GPU: Triton twins interpreted, CUDA compiled
    verdicts.py       how a run ends: failures printed, the exit code
    list_variants.py  `list`
    report.py         `report`
    census.py         `inspect` (parsed here; the census and the porting guide run in porting/,
                      reached lazily through census.porting_entry)
    host.py           `host` (study 001, from host memory)
    fastest_bench.py  `fastest-bench` (its own parser, in studies/)
    bench.py          `bench SUITE` (its own parser, harness/studies/bench.py)
    ablation.py       `ablation`: the alias of experiments/fastest_ablation (its own parser),
                      which it imports lazily, when run: the one import of an experiment

May import: every layer.
"""

from harness.cli.main import main

__all__ = ["main"]
