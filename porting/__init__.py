"""The porting tools, apart from the runtime package: the compiler census (`reduce-ladder
inspect`, no GPU needed: census, sass, triton_compile, inspect_cmd) and the porting guide built
from it and the committed results (docs/porting.md and its appendix: doc, kernel_sources,
measured).

May import: harness (any layer), triton_kernels. Never the reverse, except the one lazy entry of
`reduce-ladder inspect` (harness.cli.census.porting_entry); tests/test_layout.py holds both rules.
"""
