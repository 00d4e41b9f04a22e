"""What each design choice of the fastest pair bought, and the launch probe: README.md; the code
in experiment.py (`reduce-ladder ablation` is kept as its alias: harness/cli/main.py)."""
