"""Result records in and out, tables, plots and the ladder doc blocks.
May import: harness.core, harness.compile, harness.launch, harness.check.

    records        the result record, the long-format row (Row), the Document and every schema
                   string
    documents      the one loader: any document, any version, into records and rows (FAMILIES)
    readers        what the loader reads beyond a record's JSON: the older formats' and the
                   studies' own row shapes as records, every timed family as rows
    ladder_table   the ladder table: one builder; Markdown, compact and wide terminal renderings;
                   every ratio (x CUB, x torch.sum, % copy, step x, cumulative x)
    markdown       the one table writer (Column, column_table, grid: a pivot) and the number
                   formats; the same columns laid out on the terminal (terminal_table)
    run_tables     report.md's tables across sizes, and runs compared with the first (compare.png)
    plots          the other plots: bandwidth vs n, the ladder at one n, devices compared
    devices        device folders compared (`reduce-ladder compare`): rows, README.md, JSON
    run_report     DIR/report.md and its plots; the generated blocks of docs/ladder.md, README.md
    tables         what `run` and `check` print besides the ladder; seed 004's table; a suite's
                   rows per dtype; the per-call figures (callable.md)
    host_tables    seed 001's host study

The porting guide (docs/porting.md) and the compiler census are built by the porting package
(porting/), outside the runtime package: it imports this layer, never the reverse.
"""
