"""The reproducible pair's kernel shapes timed beside CUB and torch.sum, the sweep that chose
their launch: README.md; the code in experiment.py."""
