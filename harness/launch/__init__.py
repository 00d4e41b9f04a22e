"""Plans (a variant bound to one input: buffers, grids, launch closures; plan.make_plan picks the
multi-pass plan or single_launch's by the variant's tile mapping), launching on torch's current
stream, the peers' calls, the launch errors and the public API (reduce_sum, partials); the plan
cache of every 1-D family (plan_cache; rebind, rebind_passes) and the torch operator (torch_op,
which `import harness` imports to register torch.ops.reduce_ladder.sum).
May import: harness.core, harness.compile.
"""
