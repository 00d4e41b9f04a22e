"""cuda/fastest's small-n path against its multi-block path, CUB and torch.sum, the sweep that
measures SMALL_MAX_BYTES: README.md; the code in experiment.py."""
