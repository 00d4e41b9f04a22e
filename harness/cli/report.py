"""`reduce-ladder report RUN.json [RUN2.json] --out DIR [--n N] [--readme README.md]`

Renders on any machine (no GPU): the rich ladder table on the terminal, DIR/report.md, and the
PNG plots (bandwidth vs n per dtype, the ladder at one n per dtype, and with two runs their
per-variant ratio). Reads `reduce-ladder run --json` documents and pytest-benchmark JSON alike.
--readme rewrites the block between <!-- ladder:begin --> and <!-- ladder:end --> in that file.
"""

from __future__ import annotations

import argparse
import shlex


def cmd_report(args: argparse.Namespace) -> int:
    from harness.cli import common
    from harness.cli.common import EXIT_OK, UsageError, parse_size
    from harness.report import build as report

    try:
        ref_n = parse_size(args.n) if args.n else None
        if args.readme:
            report.check_readme(args.readme)  # before rendering: fail fast on a missing block
        rendered = report.render(args.runs, args.out, ref_n)
        console = common.console()
        if args.host:
            _host_report(args.host, rendered.out_dir, console)
        main = rendered.runs[0]
        for dtype, n in rendered.ref_n.items():
            console.print(report.rich_ladder(main, dtype, n))
        for name in ("report.md", *rendered.plots):
            console.print(f"  wrote {rendered.out_dir / name}", highlight=False)
        if args.readme:
            argv = ["reduce-ladder", "report", *args.runs, "--out", args.out]
            argv += ["--n", args.n] if args.n else []
            argv += ["--host", args.host] if args.host else []
            command = shlex.join([*argv, "--readme", args.readme])
            report.update_readme(args.readme, rendered, command)
            console.print(f"  updated the ladder block in {args.readme}", highlight=False)
    except report.ReportError as e:
        raise UsageError(str(e)) from None
    return EXIT_OK


def _host_report(path: str, out_dir, console) -> None:
    """Render seed 001's host study (`reduce-ladder host --json`) to DIR/host.md and link it."""
    import json
    from pathlib import Path

    from harness.cli.common import UsageError
    from harness.report import host_tables as render_host

    try:
        doc = json.loads(Path(path).read_text())
        text = render_host.markdown(doc)
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except (OSError, json.JSONDecodeError, ValueError, KeyError, TypeError) as e:
        raise UsageError(f"{path}: not a readable host-study document ({e})") from None
    (Path(out_dir) / "host.md").write_text(text)
    report_md = Path(out_dir) / "report.md"
    report_md.write_text(
        report_md.read_text()
        + "\n## Seed 001: host-driven, end to end from host memory\n\n"
        + "See [host.md](host.md) (rendered from "
        + f"`{Path(path).name}`).\n"
    )
    console.print(f"  wrote {Path(out_dir) / 'host.md'}", highlight=False)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="render runs (CLI or pytest-benchmark JSON) into tables, report.md and plots",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("runs", nargs="+", metavar="RUN.json", help="one run, or two to compare")
    p.add_argument("--out", required=True, metavar="DIR", help="output directory")
    p.add_argument(
        "--n", default=None, metavar="N", help="n of the ladder table/plot (default: 2^25 or below)"
    )
    p.add_argument("--readme", metavar="README.md", help="rewrite its ladder:begin/end block")
    p.add_argument("--host", metavar="HOST.json", help="also render a `reduce-ladder host` study")
    p.set_defaults(func=cmd_report)
