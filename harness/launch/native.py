"""The optional native launcher (native_launch.cpp, whose opening comment says what it saves and
why the sum is the same bits): off unless REDUCE_LADDER_NATIVE=1, then rebind's "native" mode,
built on first use (a C++ compiler and ninja; about 30 s, once per torch version, then loaded
from build_dir()). Where it cannot be built, load() raises NativeUnavailable with the reason and
the plan cache keeps the default launch. May import: torch.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import torch

ENV = "REDUCE_LADDER_NATIVE"
SOURCE = Path(__file__).with_name("native_launch.cpp")
_lock = threading.Lock()
_module = None
_failure: str | None = None


class NativeUnavailable(RuntimeError):
    """The native launcher cannot be built or loaded here; the message says why and what to do."""


def requested() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


def build_dir() -> Path:
    """One folder per source and torch version (an extension is tied to the torch it was built
    against): under $XDG_CACHE_HOME (default ~/.cache)/reduce-ladder/native/."""
    tag = hashlib.sha256(SOURCE.read_bytes() + torch.__version__.encode()).hexdigest()[:12]
    root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "reduce-ladder" / "native" / tag


def load():
    """The compiled module (its Launch class), built on the first call of the process if its folder
    has none; NativeUnavailable with the reason otherwise (remembered: tried once per process)."""
    global _module, _failure
    with _lock:
        if _module is not None:
            return _module
        if _failure is not None:
            raise NativeUnavailable(_failure)
        try:
            from torch.utils import cpp_extension

            folder = build_dir()
            folder.mkdir(parents=True, exist_ok=True)
            _module = cpp_extension.load(
                name="reduce_ladder_native_" + folder.name,
                sources=[str(SOURCE)],
                extra_cflags=["-O2"],
                extra_ldflags=["-ldl"],
                build_directory=str(folder),
                verbose=False,
            )
        except Exception as exc:  # a missing compiler or ninja, a failed build: all one answer
            _failure = (
                f"the native launcher could not be built ({type(exc).__name__}: "
                f"{str(exc).strip().splitlines()[-1] if str(exc).strip() else exc!r}); it needs a "
                "C++ compiler and ninja (pip install ninja); the default launch is used"
            )
            raise NativeUnavailable(_failure) from None
        return _module
