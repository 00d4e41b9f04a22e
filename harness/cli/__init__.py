"""The command line: one module per sub-command, registered explicitly.
May import: every layer.
"""

from harness.cli.main import main

__all__ = ["main"]
