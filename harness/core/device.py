"""What this machine can run: a GPU through PyTorch (Triton), through CuPy (CUDA kernels), or
neither (the CPU path). Each check returns (ok, reason) and never raises."""

from __future__ import annotations

import importlib
import os
from functools import cache


@cache
def torch_gpu() -> tuple[bool, str]:
    if interpreting():
        return False, "TRITON_INTERPRET=1 is set: Triton runs interpreted on the CPU"
    try:
        import torch
    except Exception as e:  # an import failure of any kind means no GPU path
        return False, f"PyTorch cannot be imported ({e})"
    try:
        if not torch.cuda.is_available():
            return False, "PyTorch sees no CUDA GPU (no NVIDIA GPU or driver, or a CPU-only build)"
        torch.cuda.current_device()
    except Exception as e:
        return False, f"PyTorch cannot use the GPU ({e})"
    return True, torch.cuda.get_device_name()


@cache
def cupy_gpu() -> tuple[bool, str]:
    ok, why = torch_gpu()
    if not ok:
        return False, why
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:
        return (
            False,
            f"CuPy cannot reach the GPU ({type(e).__name__}: {e}); install the cupy "
            "wheel matching the driver: pip install -e '.[cuda13]' or '.[cuda12]'",
        )
    if count < 1:
        return False, "CuPy sees no CUDA device"
    return True, "ok"


def gpu_available() -> bool:
    return torch_gpu()[0]


def use_interpreter_if_no_gpu() -> bool:
    """Select Triton's interpreter when there is no GPU. Must run before triton_kernels is
    imported (Triton reads the variable when a kernel is decorated). Returns True if set.
    torch_gpu() keeps the reason there is no GPU (its answer is cached before the switch)."""
    if interpreting() or not torch_gpu()[0]:
        os.environ["TRITON_INTERPRET"] = "1"
        return True
    return False


def interpreting() -> bool:
    return os.environ.get("TRITON_INTERPRET") == "1"


def device_info() -> dict:
    """Name, SMs, L2, capability and library versions (GPU machine), for result files."""
    import platform

    info: dict = {"python": platform.python_version()}
    for lib in ("torch", "triton", "cupy"):  # each one's failure recorded as <lib>_error
        try:
            mod = importlib.import_module(lib)
            info[lib] = mod.__version__
            if lib == "torch" and torch_gpu()[0]:
                p = mod.cuda.get_device_properties(mod.cuda.current_device())
                info.update(
                    name=p.name,
                    sm_count=p.multi_processor_count,
                    l2_bytes=getattr(p, "L2_cache_size", None),
                    memory_bytes=p.total_memory,
                    capability=f"{p.major}.{p.minor}",
                    cuda_runtime=mod.version.cuda,
                )
            if lib == "cupy" and cupy_gpu()[0]:
                info["driver"] = mod.cuda.runtime.driverGetVersion()
        except Exception as e:
            info[f"{lib}_error"] = str(e)
    return info


# Peak memory bandwidth from NVIDIA's datasheets, bytes/s, matched on the device name as torch and
# nvidia-smi spell it (first match wins, so the more specific names come first).
DATASHEET_BYTES_PER_S = (
    ("H200", 4.8e12),
    ("H100 PCIe", 2.0e12),
    ("H100 NVL", 3.9e12),
    ("H100", 3.35e12),  # SXM5 (80GB HBM3)
    ("A100-SXM4-80GB", 2.039e12),
    ("A100", 1.555e12),
)


def datasheet_bw(name: str) -> float | None:
    """The datasheet's memory bandwidth (bytes/s) of the device called `name`, None if unknown."""
    return next((bw for key, bw in DATASHEET_BYTES_PER_S if key in name), None)
