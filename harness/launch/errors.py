"""Errors the launch layer raises, in a module of their own so that every plan module (the
multi-pass plan, the single-launch plan) and the API can import them without importing each other.
"""


class DeviceMemoryError(MemoryError):
    """The GPU has too little free memory for a variant's buffers; nothing was launched."""


class PeerUnavailable(RuntimeError):
    """A peer that cannot run in this environment (an optional package not installed, a torch
    without the compiler option it needs): the message says why and how to get it. Reported as
    the record's reason rather than counted as a failure of the run."""
