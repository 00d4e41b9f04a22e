"""Hopper's memory paths on cuda/fastest (issue 14): README.md; the code in experiment.py."""
