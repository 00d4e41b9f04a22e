"""CUDA sources of the ladder: one .cu file per stage family, helpers in common.cuh.

The files are data for the harness (compiled at run time by NVRTC through CuPy, or by the NVRTC
wheel on a machine without a GPU); this module only says where they are.
"""

from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent


def source_path(name: str) -> Path:
    """Path of a kernel source file of this package, e.g. source_path("sequential.cu")."""
    path = SOURCE_DIR / name
    if not path.is_file():
        known = ", ".join(sorted(p.name for p in SOURCE_DIR.glob("*.cu")))
        raise FileNotFoundError(f"no CUDA source {name!r} in {SOURCE_DIR} (have: {known})")
    return path
