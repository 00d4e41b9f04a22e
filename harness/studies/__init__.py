"""The programs that produce results: the ladder session, seed 001's host study, the fastest
pair's bench and ablation.
May import: every layer below (core, compile, launch, check, report).
"""
