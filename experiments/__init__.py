"""One-off experiments: each asked one question of the product, answered it with committed
numbers, and is kept as the record of how (experiments/README.md lists them).

Each is a folder experiments/NAME/ with its README.md (the question, how to run it, the finding
and the committed numbers it rests on), its code and a __main__.py: `python -m experiments.NAME`
from the repository root. Not installed with the package.

May import: harness (any layer), triton_kernels and porting. Nothing in harness/, triton_kernels/ or
benchmarks/ imports an experiment, but a `reduce-ladder` command kept as the alias of a moved one
(harness/cli/main.py), which imports it inside the function that runs it
(tests/test_layout.py).
"""


def as_rows(doc: dict, suite: str, rows: list, said: tuple[str, ...] = ("rows",)) -> dict:
    """An experiment's document as the ROWS document every result file is (docs/results-format.md):
    its times as `rows` (harness.report.records.Row, their suite the experiment's), the rest of
    its header beside them but `said` (the keys the rows say now)."""
    from harness.report.records import rows_document

    head = {k: v for k, v in doc.items() if k not in ("schema", "device", *said)}
    return rows_document(rows, suite=suite, device=doc["device"], **head)


def round_rows(doc: dict, suite: str) -> list:
    """A rounds experiment's times as rows (fastest_ablation, hopper_loads: rows of {"n",
    "verdicts", "times": {what: {round: timing}}}): per n, what and round (or graph), checked by
    its verdict (a wrong one's in info); the launch probe's per column (config "launch probe")."""
    from dataclasses import asdict

    from harness.report.records import Row, timing_from
    from harness.studies.suites import row_common

    common = {**row_common(suite, doc["device"]), "dtype": doc.get("dtype", "")}
    out = []
    for r in doc["rows"]:
        for config, times in (("", r["times"]), ("launch probe", r.get("launch_probe") or {})):
            for what, by in times.items():
                said = "" if config else r["verdicts"].get(what, "")
                check, info = {"": "", "ok": "ok"}.get(said, "wrong"), {"message": said}
                row = dict(common, variant=what, config=config, shape=r["n"])
                if "error" in by:  # the probe's carveout, refused
                    out.append(Row(**row, metric="gated", median_ms=None, check="error",
                                   info={"message": by["error"]}))  # fmt: skip
                out += [Row(**row, metric=m, **asdict(t), check=check,
                            info=info if check == "wrong" else {})
                        for m, x in by.items() if (t := timing_from(x))]  # fmt: skip
    return out


def rounds_document(doc: dict, suite: str) -> dict:
    """A rounds experiment's ROWS document (as_rows of round_rows)."""
    return as_rows(doc, suite, round_rows(doc, suite))


def finish(doc: dict, path: str, suite: str) -> int:
    """Write a rounds experiment's document (rounds_document) and say its wrong verdicts: the
    exit code, 1 if any verdict is not "ok"."""
    from harness.report import documents

    documents.write_document(path, rounds_document(doc, suite))
    bad = [(r["n"], k) for r in doc["rows"] for k, v in r["verdicts"].items() if v != "ok"]
    print(f"\nwall {doc['wall_s']:.0f} s; {len(bad)} wrong: {bad}")
    return 1 if bad else 0
