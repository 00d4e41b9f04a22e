"""Finding and running NVIDIA's command-line tools (ncu, compute-sanitizer) as subprocesses.

Whatever keeps a tool from giving an answer - not installed, no GPU, counters not readable - is a
ToolUnavailable with one line saying what and how to fix it; the CLI prints that line and exits 2.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from dataclasses import dataclass

from harness.core import device


class ToolUnavailable(RuntimeError):
    """The tool cannot produce results on this machine (one line; exit 2)."""


# Where the CUDA toolkit and Nsight Compute put their binaries when they are not on PATH.
_SEARCH = {
    "ncu": [
        "/usr/local/cuda/bin/ncu",
        "/opt/nvidia/nsight-compute/*/ncu",
        "/usr/local/cuda-*/bin/ncu",
    ],
    "compute-sanitizer": [
        "/usr/local/cuda/bin/compute-sanitizer",
        "/usr/local/cuda/compute-sanitizer/compute-sanitizer",
        "/usr/local/cuda-*/bin/compute-sanitizer",
    ],
}
ENV_VARS = {"ncu": "NCU", "compute-sanitizer": "COMPUTE_SANITIZER"}
SHIPPED_WITH = {
    "ncu": "Nsight Compute (also in the CUDA toolkit)",
    "compute-sanitizer": "the CUDA toolkit",
}

# Output that means the tool ran but could not measure anything: (marker, what to tell the user).
FAILURE_MARKERS: tuple[tuple[str, str], ...] = (
    (
        "ERR_NVGPUCTRPERM",
        "ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run as root or load "
        "the driver with NVreg_RestrictProfilingToAdminUsers=0",
    ),
    (
        "LibraryNotLoaded",
        "the profiler's injection library did not load (LibraryNotLoaded): the tool does not "
        "match the driver, or the process could not be instrumented",
    ),
    (
        "Failed to initialize profiler",
        "the profiler could not initialize on this GPU / driver (see the raw log)",
    ),
    ("Device not supported", "the tool does not support this GPU"),
    ("no CUDA-capable device", "no CUDA device is visible to the process"),
)


def counter_failure(text: str) -> str | None:
    """The one-line reason when the tool's output says it could not measure, else None."""
    for marker, reason in FAILURE_MARKERS:
        if marker in text:
            return reason
    return None


def find_tool(name: str) -> str:
    """Path of `name`: $NCU / $COMPUTE_SANITIZER, then PATH, then the toolkit's usual places."""
    env = ENV_VARS.get(name)
    if env and os.environ.get(env):
        path = os.environ[env]
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
        raise ToolUnavailable(f"{env}={path} is not an executable file")
    found = shutil.which(name)
    if found:
        return found
    for pattern in _SEARCH.get(name, []):
        for path in sorted(glob.glob(pattern), reverse=True):
            if os.access(path, os.X_OK):
                return path
    hint = f"; or set {env} to its path" if env else ""
    raise ToolUnavailable(
        f"{name} not found: it comes with {SHIPPED_WITH.get(name, 'the CUDA toolkit')}; "
        f"put it on PATH{hint}"
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
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr or ""
        return Completed(cmd, None, out, err + f"\n[killed after {timeout:.0f} s]")
