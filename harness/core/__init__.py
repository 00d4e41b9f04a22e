"""The bottom layer: the catalogue of variants (catalogue: lookup; variant: the record types;
records_ladder / records_beyond: the records), the tile mappings and the pass policy (mappings),
dtypes, sizes, the device probe and event timing. Imports nothing else from harness.
"""
