"""Plans (a variant bound to one input: buffers, grids, launch closures), launching on torch's
current stream, the peers' calls and the public API (reduce_sum, partials).
May import: harness.core, harness.compile.
"""
