"""Result rows in and out, tables, plots and the ladder doc blocks (each module's docstring
says what it holds; docs/architecture.md maps them).
May import: harness.core, harness.compile, harness.launch, harness.check; the porting package
(porting/) imports this layer, never the reverse.
"""
