"""The bottom layer: the catalogue of variants, dtypes, tile mappings, the device probe and
event timing. Imports nothing else from harness.
"""
