"""Result records in and out, tables, plots, the README block and the porting doc.
May import: harness.core, harness.compile, harness.launch, harness.check.
"""
