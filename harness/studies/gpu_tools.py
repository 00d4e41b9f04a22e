"""Finding and running NVIDIA's command-line tools (ncu, compute-sanitizer) over the driver
process. Whatever keeps a tool from answering (not installed, no GPU, counters not readable) is a
ToolUnavailable: one line saying what and how to fix it; the CLI prints it and exits 2."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness.core import device
from harness.report import documents


class ToolUnavailable(RuntimeError):
    """The tool cannot produce results on this machine (one line; exit 2)."""


# Per tool: its environment variable, what ships it, where it lies when it is not on PATH.
TOOLS = {
    "ncu": ("NCU", "Nsight Compute (also in the CUDA toolkit)",
        ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu",
         "/usr/local/cuda-*/bin/ncu")),
    "compute-sanitizer": ("COMPUTE_SANITIZER", "the CUDA toolkit",
        ("/usr/local/cuda/bin/compute-sanitizer",
         "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
         "/usr/local/cuda-*/bin/compute-sanitizer")),
}  # fmt: skip
# Output that means the tool ran but could not measure anything: (marker, what to tell the user).
FAILURE_MARKERS: tuple[tuple[str, str], ...] = (
    ("ERR_NVGPUCTRPERM", "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run as "
     "root or load the driver with NVreg_RestrictProfilingToAdminUsers=0"),
    ("LibraryNotLoaded", "the profiler's injection library did not load (LibraryNotLoaded): the "
     "tool does not match the driver, or the process could not be instrumented"),
    ("Failed to initialize profiler", "the profiler could not initialize on this GPU / driver"),
    ("Device not supported", "the tool does not support this GPU"),
    ("no CUDA-capable device", "no CUDA device is visible to the process"),
)  # fmt: skip


def find_tool(name: str) -> str:
    """Path of `name`: $NCU / $COMPUTE_SANITIZER, then PATH, then the toolkit's usual places."""
    env, shipped, places = TOOLS[name]
    if path := os.environ.get(env):
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise ToolUnavailable(f"{env}={path} is not an executable file")
    found = shutil.which(name) or next(
        (p for pat in places for p in sorted(glob.glob(pat), reverse=True)), None
    )
    if found and os.access(found, os.X_OK):
        return found
    raise ToolUnavailable(
        f"{name} not found: it comes with {shipped}; put it on PATH; or set {env} to its path"
    )


def require_gpu() -> None:
    ok, why = device.torch_gpu()
    if not ok:
        raise ToolUnavailable(f"no GPU: {why}")


def tool_version(path: str) -> str:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return f"unknown ({e})"
    lines = [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]
    return lines[-1] if lines else "unknown"


@dataclass
class Completed:
    cmd: list[str]
    rc: int | None  # None: killed at the timeout
    stdout: str
    stderr: str

    @property
    def text(self) -> str:
        return self.stdout + ("\n" if self.stdout and self.stderr else "") + self.stderr

    @property
    def timed_out(self) -> bool:
        return self.rc is None


def run(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> Completed:
    """Run a command, capturing its output; never raises for a failing or hanging command."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
        return Completed(cmd, p.returncode, p.stdout, p.stderr)
    except subprocess.TimeoutExpired as e:
        out, err = (x.decode(errors="replace") if isinstance(x, bytes) else x or ""
                    for x in (e.stdout, e.stderr))  # fmt: skip
        return Completed(cmd, None, out, err + f"\n[killed after {timeout:.0f} s]")


def run_logged(
    cmd: list[str], timeout: float, log: Path | None, manifest: Path, env: dict | None = None
) -> tuple[Completed, list | None]:
    """Run the tool over the driver, its log (command, output) to `log`: (the run, the driver's
    manifest, None where unreadable); ToolUnavailable where the output says it could not."""
    manifest.unlink(missing_ok=True)
    done = run(cmd, timeout=timeout, env=env)
    if log:
        log.write_text(" ".join(cmd) + "\n\n" + done.text)
    if reason := next((why for marker, why in FAILURE_MARKERS if marker in done.text), None):
        raise ToolUnavailable(reason)
    try:
        return done, documents.load_document(manifest, "manifest").raw["launches"]
    except documents.ReportError:
        return done, None
