"""The accuracy study's table and plot (its rows: suite "accuracy", a row per variant, data
family (config) and n): per n, a row per variant, a column per data family, each cell the error in
ulps of the exact sum and ✓ faithful / ✗ not; the plot the same ulps on a log axis, one panel per
n. No GPU needed."""

from __future__ import annotations

from pathlib import Path

from harness.core.sizes import size_label
from harness.report.documents import ReportError, load_document
from harness.report.markdown import pivot
from harness.report.records import Document, Row

PLOT_NAME = "accuracy.png"
# Where an exact result (0 ulps) sits on the plot's log axis.
ZERO_ULPS_AT = 1e-4
SUITE = "accuracy"


def load(path: str | Path) -> Document:
    """The accuracy study's document (`reduce-ladder accuracy --json`); ReportError naming the
    file otherwise."""
    doc = load_document(path)
    if not accuracy_rows(doc):
        raise ReportError(
            f"{path}: not the accuracy study's document (found {doc.schema or doc.kind!r}, no "
            'rows of the suite "accuracy"; expected `reduce-ladder accuracy --json`\'s)'
        )
    return doc


def accuracy_rows(doc: Document) -> list[Row]:
    return [r for r in doc.rows if r.suite == SUITE]


def cell(r: Row) -> str:
    """'0.31 ✓', '1.2e+07 ✗', 'error'."""
    if r.check != "ok":
        return "error"
    ulps = r.info.get("ulps")
    text = "inf" if ulps is None else (f"{ulps:.2g}" if ulps < 100 else f"{ulps:.1e}")
    return f"{text} {'✓' if r.info.get('faithful') else '✗'}"


def markdown(doc: Document) -> str:
    """One table per n; a family past the stated limit of the reproducible design is marked †."""
    rows, limits = accuracy_rows(doc), doc.raw.get("limits", {})
    parts = [
        f"Error of the float32 result in ulps of the exact sum (ulp at the exact sum; ✓ faithful: "
        f"one of the two float32s around it). Device: "
        f"{(doc.raw.get('device') or {}).get('name', '?')}; seed {doc.raw.get('seed')}.",
        "",
    ]
    for n in sorted({r.n for r in rows}):
        at_n = [r for r in rows if r.n == n]
        families = list(dict.fromkeys(r.config for r in at_n))
        kappa = {r.config: r.info.get("kappa") for r in at_n if "kappa" in r.info}
        past = {r.config for r in at_n if r.info.get("within_limit") is False}
        kappas = ["kappa", *("" if kappa.get(f) is None else f"{kappa[f]:.2g}" for f in families)]
        parts += [f"### n = {size_label(n)} ({n:,})", ""]
        parts += [pivot("variant", at_n, lambda r: r.variant, lambda r: r.config, cell,
                        acrosses=families,
                        head=lambda f, p=past: f + " †" * (f in p), align="lr", more=[kappas],
                        missing="")]  # fmt: skip
        if (limit := limits.get(str(n))) is not None:
            parts += [
                f"† kappa = sum|x| / |sum x| past K(n) = {limit:.3g}, the condition number up to "
                "which the reproducible (double-double) design promises a faithful result "
                "(harness.check.exact.faithful_condition_limit): reported, not promised.",
                "",
            ]
    return "\n".join(parts)


def failures(doc: Document, promised: set[str]) -> list[str]:
    """What fails the study: a variant that raised, or a variant in `promised` (the reproducible
    family) not faithful on data inside its stated limit."""
    out = []
    for r in accuracy_rows(doc):
        where, info = f"{r.variant} {r.config} n={r.n}", r.info
        if r.check != "ok":
            out.append(f"{where}: {info.get('message', '')}")
        elif r.variant in promised and info.get("within_limit") and not info["faithful"]:
            out.append(f"{where}: not faithful ({info.get('ulps')} ulps)")
    return out


def plot(doc: Document, path: str | Path) -> dict:
    """ulps per family (log axis, one panel per n, 0 drawn at ZERO_ULPS_AT), one marker per
    variant; returns what it drew: {n: {variant: [(family, ulps), ...]}}."""
    from harness.report.plots import chart

    rows = [r for r in accuracy_rows(doc) if r.check == "ok"]
    if not rows:
        raise ReportError("the accuracy document has no results to plot")
    panel = "n = {}: float32 ulps vs the exact sum (0 drawn at 1e-4)".format
    plotted = [r for r in sorted(rows, key=lambda r: r.n) if r.info.get("ulps") is not None]
    long = [{"n": panel(size_label(r.n)), "family": r.config, "variant": r.variant,
             "ulps": max(float(r.info["ulps"]), ZERO_ULPS_AT)} for r in plotted]  # fmt: skip
    one_ulp = (1.0, None, {"color": "black", "linewidth": 0.8, "linestyle": "--"})
    drawn = chart(long, path, x="family", y="ulps", hue="variant", panel="n", kind="dot",
                  xorder=list(dict.fromkeys(r.config for r in rows)), yscale="log", rotate=30,
                  size=(7, 5), legend="right", ylabel="ulps (log); dashed: 1 ulp",
                  refs=[one_ulp])  # fmt: skip
    return {n: drawn.get(panel(size_label(n)), {}) for n in sorted({r.n for r in rows})}


def page(doc: Document, out_dir: Path, run: object = None) -> str:
    """accuracy.md (the report's page, harness.report.run_report.PAGES), accuracy.png drawn
    beside it."""
    plot(doc, out_dir / PLOT_NAME)
    text = "# Accuracy: every variant against the exact sum\n\n" + markdown(doc)
    return text + f"\n![ulps per family]({PLOT_NAME})"
