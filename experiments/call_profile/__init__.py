"""Where a cached call of reduce_sum and of the torch op spends its time: README.md; the code in
experiment.py."""
