"""Plans (a variant bound to one input: plan, single_launch, reproducible_plan, axis_plan), the
launch caches of every family with their launches rebound per call (plan_cache; rebind,
rebind_passes), the stream and workspace a launch uses (stream, workspace), the peers' calls,
the launch errors, the public API (api: reduce_sum, partials) and the torch operator (torch_op,
which `import harness` imports to register torch.ops.reduce_ladder.sum).
May import: harness.core, harness.compile.
"""
