"""Errors the launch layer raises, in a module of their own so that every plan module (the
multi-pass plan, the single-launch plan) and the API can import them without importing each other.
"""


class DeviceMemoryError(MemoryError):
    """The GPU has too little free memory for a variant's buffers; nothing was launched."""
