"""The runtime: plans (plan, single_launch, reproducible_plan, axis_plan), the launch caches and
their rebound launches (plan_cache, rebind, rebind_passes), streams and workspaces (stream), peers,
errors, the API (api) and the torch operator (torch_op, registered by `import harness`).
May import: harness.core, harness.compile.
"""
