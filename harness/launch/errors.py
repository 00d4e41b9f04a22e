"""Errors the launch layer raises (a module of their own: every plan module imports them)."""

import contextlib
from collections.abc import Iterator

import torch


class DeviceMemoryError(MemoryError):
    """The GPU has too little free memory for a variant's buffers; nothing was launched."""


class PeerUnavailable(RuntimeError):
    """A peer that cannot run here (a package or compiler option missing): the message says why
    and how to get it; the record's reason, not a failure of the run."""


@contextlib.contextmanager
def no_room(message: str) -> Iterator[None]:
    """torch's OutOfMemoryError in the block raised as DeviceMemoryError(message (torch's))."""
    try:
        yield
    except torch.cuda.OutOfMemoryError as e:
        raise DeviceMemoryError(f"{message} ({str(e).splitlines()[0]})") from None
