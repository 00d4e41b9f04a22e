"""The committed result files of formats no producer writes any more, rewritten in the current
ones with every measured value copied: README.md; the code in experiment.py."""
