"""Result records in and out, tables, plots and the ladder doc blocks.
May import: harness.core, harness.compile, harness.launch, harness.check.

    records        the result record, the long-format row (Row), the Document, every schema string
    documents      the one loader (FAMILIES: any result document into records and rows)
                   and the one rule for outputs; readers: what it reads beyond a record's JSON
    markdown       the one table writer (Column, column_table, grid: a pivot) as Markdown or on
                   the terminal, and the number formats
    ladder_table   the ladder table (one builder, three renderings) and every ratio it prints
    run_report     DIR/report.md (its tables across sizes: pivots of the run's records) and
                   the generated blocks of docs/ladder.md and README.md
    devices        device folders (or runs) compared: rows, ratios, README.md, compare.json
    plots          every plot of the ladder's report and of the comparison
    tables         what `run` and `check` print besides the ladder; seed 004's table; a suite's
                   rows per dtype; the per-call figures (callable.md)
    *_tables       one study's page each (host, accuracy, axis, profile, distributed)

The porting guide (docs/porting.md) and the compiler census are built by the porting package
(porting/), outside the runtime package: it imports this layer, never the reverse.
"""
