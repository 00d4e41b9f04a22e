"""What torch.compile (Inductor) writes for the 1-D sum, and what it costs at each size: README.md;
the code in experiment.py."""
