"""`reduce-ladder ablation`: the alias of the one-off experiment experiments/fastest_ablation/
(`python -m experiments.fastest_ablation`; its own parser), registered in harness.cli.main.

The one place the product reaches an experiment: lazily, inside the function that runs it, after
the output and GPU checks (tests/test_layout.py, EXPERIMENT_ALIASES). The experiment is not
installed with the package: from a checkout (an editable install, or PYTHONPATH=.) it is found
beside harness/; elsewhere the command says where it lives and exits 2.
"""

from __future__ import annotations

import sys
from pathlib import Path

from harness.cli.common import UsageError

EXPERIMENT = "experiments/fastest_ablation"
CHECKOUT = Path(__file__).resolve().parents[2]  # the repository root, when run from a checkout


def experiment_main(argv: list[str], prog: str) -> int:
    """Import the experiment (only now: the alias's lazy import) and run its main."""
    if (CHECKOUT / EXPERIMENT).is_dir() and str(CHECKOUT) not in sys.path:
        sys.path.append(str(CHECKOUT))
    try:
        from experiments.fastest_ablation import experiment
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("experiments"):
            raise
        raise UsageError(
            "`reduce-ladder ablation` runs the experiment in experiments/fastest_ablation/ of the "
            "source checkout, which is not installed with the package: run it from a checkout "
            "(python -m experiments.fastest_ablation)"
        ) from None
    return experiment.main(argv, prog=prog)
