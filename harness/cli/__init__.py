"""The command line, `reduce-ladder`: harness.cli.main registers every sub-command (a module's
add_parser, or a study's own parser); common.py holds what they share (exit codes, usage errors,
sizes, dtypes, ids, output paths, the GPU policy). May import: every layer."""

from harness.cli.main import main

__all__ = ["main"]
