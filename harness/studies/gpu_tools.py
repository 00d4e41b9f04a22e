"""NVIDIA's command-line tools (ncu, compute-sanitizer) over the driver process
(harness.studies.profile_driver), for the profile and the sanitize study. Whatever keeps a tool
from answering (not installed, no GPU, counters not readable) is a ToolUnavailable: one line saying
what and how to fix it; the CLI prints it and exits 2."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from subprocess import CompletedProcess

from harness.core import device
from harness.core.catalogue import Variant
from harness.report import documents
from harness.studies.profile_driver import Shape


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
    """The tool's last line of `--version` ("unknown" where it says nothing)."""
    try:
        lines = [ln.strip() for ln in run([path, "--version"], timeout=60).stdout.splitlines()]
    except OSError as e:
        return f"unknown ({e})"
    return next((ln for ln in reversed(lines) if ln), "unknown")


def start(name: str, schema: str, raw_dir: Path | None) -> tuple[str, dict]:
    """(the tool's path, the document's header); raw_dir made (None: none). ToolUnavailable where
    the tool or a GPU is missing, before anything is made."""
    path = find_tool(name)
    require_gpu()
    if raw_dir is not None:
        raw_dir.mkdir(parents=True, exist_ok=True)
    key = name.replace("-", "_")
    return path, {"schema": schema, "device": device.device_info(), key: tool_version(path)}


def run(cmd: list[str], timeout: float, env: dict[str, str] | None = None) -> CompletedProcess:
    """Run a command, capturing its output; never raises for a failing or hanging command (one
    killed at the timeout has returncode None and says so in stderr)."""
    full_env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        out, err = (x.decode(errors="replace") if isinstance(x, bytes) else x or ""
                    for x in (e.stdout, e.stderr))  # fmt: skip
        return CompletedProcess(cmd, None, out, err + f"\n[killed after {timeout:.0f} s]")


def output(done: CompletedProcess) -> str:
    """A run's stdout, then its stderr."""
    return done.stdout + ("\n" if done.stdout and done.stderr else "") + done.stderr


@dataclass
class Job:
    """One driver process under a tool: these variants at these sizes and dtypes (the axis
    variants and the peers at the shapes, if any); label names its raw files."""

    variants: list[Variant]
    sizes: tuple[int, ...]
    dtypes: tuple[str, ...]
    label: str
    shapes: tuple[Shape, ...] = ()

    def command(self, mode: str, manifest: Path) -> list[str]:
        """The driver as a process: what the tools run."""
        args = ["--mode", mode, "--dtype", *self.dtypes, "--n", *map(str, self.sizes)]
        if self.shapes:
            args += ["--shapes", *(f"{'x'.join(map(str, s))}:{d}" for s, d in self.shapes)]
        args += ["--manifest", str(manifest), "--variant", *(v.id for v in self.variants)]
        return [sys.executable, "-m", "harness.studies.profile_driver", *args]

    def run(
        self, tool: list[str], mode: str, manifest: Path, log: Path | None, timeout: float,
        env: dict | None = None,
    ) -> tuple[CompletedProcess, list | None]:  # fmt: skip
        """The tool (its command line up to the driver) over this job, its log (command, output)
        to `log`: (the run, the driver's manifest, None where unreadable); ToolUnavailable where
        the output says the tool could not measure."""
        manifest.unlink(missing_ok=True)
        cmd = [*tool, *self.command(mode, manifest)]
        done = run(cmd, timeout=timeout, env=env)
        if log:
            log.write_text(" ".join(cmd) + "\n\n" + output(done))
        if reason := next((why for marker, why in FAILURE_MARKERS if marker in output(done)), None):
            raise ToolUnavailable(reason)
        try:
            return done, documents.load_document(manifest, "manifest").raw["launches"]
        except documents.ReportError:
            return done, None
