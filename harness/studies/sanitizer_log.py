"""Read compute-sanitizer's text output: the summary lines and each reported problem's kernel.

The tool prefixes its lines with "=========". A problem ("record") is a header line at the
prefix's indentation ("Invalid __global__ read of size 4 bytes", "Error: Race reported between
Write access at k+0x3f0 ...") followed by an indented "at <kernel>+0x..." line (racecheck: the
kernel in the header); summaries: "ERROR SUMMARY: 3 errors", "RACECHECK SUMMARY: 1 hazard
displayed (1 error, 0 warnings)". With --demangle no the kernel is the NVRTC-lowered name.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

PREFIX = "========="
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*([\d,]+)\s+errors?")
_RACE_SUMMARY = re.compile(
    r"RACECHECK SUMMARY:\s*([\d,]+)\s+hazards?\s+displayed\s*"
    r"\(\s*([\d,]+)\s+errors?,\s*([\d,]+)\s+warnings?\s*\)"
)
_AT = re.compile(r"^\s+at\s+(?:0x[0-9a-fA-F]+\s+in\s+)?(.+?)(?:\+0x[0-9a-fA-F]+|\s+in\s+\S+:\d+|$)")
_HAZARDS = re.compile(r"\[([\d,]+)\s+hazards?\]")
_RACE = re.compile(r"^(Error|Warning|ERROR|WARN(?:ING)?):\s*Race reported", re.IGNORECASE)


def _int(s: str) -> int:
    return int(s.replace(",", ""))


@dataclass
class SanitizerLog:
    """The summary lines' counts (None where a line is missing) and per kernel its findings:
    records (problems reported in it), errors and warnings (racecheck's classes; another tool's
    records are all errors), hazards (racecheck's "[N hazards]" added up), kinds (header -> count).
    """

    errors: int | None = None  # ERROR SUMMARY
    hazards_displayed: int | None = None  # RACECHECK SUMMARY
    hazard_errors: int | None = None
    hazard_warnings: int | None = None
    kernels: dict[str, dict] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        """A summary line was printed: the tool ran to the end (not killed, not crashed)."""
        return self.errors is not None or self.hazards_displayed is not None

    def summary(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "kernels"}


def _kind(header: str) -> str:
    """The record's kind without the numbers that vary (sizes, addresses)."""
    h = _RACE.sub(lambda m: f"{m.group(1).capitalize()}: Race reported", header)
    h = re.split(r"\s+between\s+|\s+at\s+0x", h)[0]
    return re.sub(r"\d+", "N", h).strip().rstrip(".")


def _record(log: SanitizerLog, kernel: str, header: str) -> dict:
    zero = dict(records=0, errors=0, warnings=0, hazards=0, kinds={})
    f = log.kernels.setdefault(kernel, zero)
    f["records"] += 1
    f["kinds"][_kind(header)] = f["kinds"].get(_kind(header), 0) + 1
    race = _RACE.match(header)
    f["warnings" if race and race.group(1).lower().startswith("warn") else "errors"] += 1
    return f


def parse(text: str) -> SanitizerLog:
    log = SanitizerLog()
    header: str | None = None
    current: dict | None = None
    for raw in (ln[len(PREFIX) :] for ln in text.splitlines() if ln.startswith(PREFIX)):
        body = raw[1:] if raw.startswith(" ") else raw  # one space after the prefix
        if m := _ERROR_SUMMARY.search(body):
            log.errors, header, current = _int(m.group(1)), None, None
        elif m := _RACE_SUMMARY.search(body):
            log.hazards_displayed, log.hazard_errors, log.hazard_warnings = map(_int, m.groups())
            header = current = None
        elif body.strip() and not body.startswith(" "):  # a record's header (or a note)
            header, current = body.strip(), None
            at_in_header = re.search(r"\baccess at\s+(.+?)\+0x", header)  # racecheck's first site
            if at_in_header:
                current = _record(log, at_in_header.group(1).strip(), header)
        elif header is not None:
            if current is None and (m := _AT.match(body)):
                current = _record(log, m.group(1).strip(), header)
            if current is not None and (h := _HAZARDS.search(body)):
                current["hazards"] += _int(h.group(1))
    return log
